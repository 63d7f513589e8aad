#!/bin/bash
# test_mcp_clients.sh -- real MCP clients: the official TypeScript SDK client
# driving the official reference servers (server-everything,
# server-filesystem) directly and through `agentlink mcp-proxy`, against a
# real store and a real offloadfs mount. The npm packages pinned in
# tests/mcp/package.json are installed by scripts/npm-deps.sh; if npm or
# node fails, this fails (it never skips). The node tests (*.test.mjs, run by
# node's own runner) print the ok / not ok lines through reporter.mjs.
#
# Environment the node tests get:
#   OFFLOADFS_BUILD  where build/agentlink is (the proxy)
#   MCP_STORE        a store, mounted at MCP_MOUNT by build/offloadfs
#   MCP_SMALL_STORE  a store with a 2 MiB bound, not mounted (eviction)
#   MCP_TMP          a scratch folder, removed at the end
#   MCP_FIGURES      a file the tests append measured figures to
# MCP_TESTS=NAME (e.g. shapes) runs tests/mcp/NAME.test.mjs only, and
# MCP_TEST_PATTERN=RE only the tests whose name matches RE.
#
# Under make test-asan and test-valgrind it passes too (27 checks, about 20 s
# and 50 s here: the proxy runs under the sanitizers or memcheck and must exit
# 0), but main's tests/run.sh runs npm-client suites in make test only:
# run.sh: npm clients
source "$(dirname "$0")/../lib.sh"
source "$T_TOP/tests/fs/mountlib.sh"
m_require_fuse
cd "$T_TOP"

command -v node >/dev/null || { t_not_ok "node is installed (Node 20)"; t_done; }
if ! scripts/npm-deps.sh tests/mcp >"$T_TMP/npm.log" 2>&1; then
    t_not_ok "scripts/npm-deps.sh tests/mcp installs the pinned MCP packages"
    sed 's/^/  /' "$T_TMP/npm.log"; t_done
fi
t_ok "scripts/npm-deps.sh tests/mcp installs the pinned MCP packages"

S=$(m_store store 256M) && "$M_AL" --store "$S" init --max-result-bytes 64M >/dev/null &&
    SMALL=$(m_store small 2M) && "$M_AL" --store "$SMALL" init --max-result-bytes 1M >/dev/null || {
    t_not_ok "stores are made"; t_done; }
MNT=$T_TMP/mnt
m_mount "$S" "$MNT" || { t_not_ok "offloadfs mounts the test store"; t_done; }

export OFFLOADFS_BUILD=$T_BUILD MCP_STORE=$S MCP_MOUNT=$MNT MCP_SMALL_STORE=$SMALL \
    MCP_TMP=$T_TMP MCP_FIGURES=${MCP_FIGURES:-$T_TMP/figures}
files=(tests/mcp/*.test.mjs)
[ -n "${MCP_TESTS:-}" ] && files=(tests/mcp/$MCP_TESTS.test.mjs)
node --test ${MCP_TEST_PATTERN:+--test-name-pattern="$MCP_TEST_PATTERN"} --test-reporter="$T_TOP/tests/mcp/reporter.mjs" "${files[@]}"; rc=$?
[ -s "$MCP_FIGURES" ] && sed 's/^/# /' "$MCP_FIGURES"
if [ "$rc" -ne 0 ]; then t_not_ok "node --test exits 0 (status $rc)"; fi

m_umount "$MNT"; t_eq "offloadfs exits 0 after unmount" "$?" 0
t_done
