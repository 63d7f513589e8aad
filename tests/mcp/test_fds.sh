#!/bin/bash
# test_mcp_fds.sh -- the MCP server mcp-proxy runs inherits the client's
# pipes and stderr, never a descriptor of the store: LMDB opens data.mdb
# without close-on-exec, and a server (any program an MCP configuration
# names) holding it could write the store's data.
. "$(dirname "$0")/../lib.sh"

unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG OFFLOADFS_STORE XDG_STATE_HOME
ST=$T_TMP/store
$AGENTLINK --store "$ST" init >/dev/null || { t_not_ok "agentlink init"; t_done; }
# The "server" lists its own descriptors on stderr and exits.
$AGENTLINK mcp-proxy --store "$ST" -- sh -c 'ls -l /proc/$$/fd/ >&2' </dev/null \
    >"$T_TMP/out" 2>"$T_TMP/err"
t_eq "the server ran and exited 0" "$?" 0
t_check "the server listed its descriptors" grep -q ' 0 -> ' "$T_TMP/err"
got=$(grep -c "$ST" "$T_TMP/err")
t_eq "no descriptor of the store reaches the server" "$got" 0
[ "$got" = 0 ] || grep "$ST" "$T_TMP/err" | sed 's/^/  /'

# The proxy started with stdin, stdout or stderr closed: they are filled
# with /dev/null first, so the server still gets its pipes as 0 and 1 and
# no pipe of the proxy's lands on a standard number.
$AGENTLINK mcp-proxy --store "$ST" -- sh -c \
    '[ -e /proc/$$/fd/0 ] && echo in-open || echo in-closed; readlink /proc/$$/fd/2 >&2' \
    <&- >"$T_TMP/out" 2>"$T_TMP/err"
t_eq "stdin closed: exit 0" "$?" 0
t_eq "... the server's stdin is open (the proxy's pipe)" "$(cat "$T_TMP/out")" in-open
$AGENTLINK mcp-proxy --store "$ST" -- sh -c 'l=$(readlink /proc/$$/fd/1); echo "{\"m\":\"stdout-closed\"}"; echo "$l" >&2' \
    </dev/null >&- 2>"$T_TMP/err"
t_eq "stdout closed: exit 0" "$?" 0
t_check "... the server's stdout is a pipe" grep -q '^pipe:' "$T_TMP/err"
t_eq "... and nothing else logged" "$(grep -vc '^pipe:' "$T_TMP/err")" 0
t_eq "... and its output went to /dev/null, not into the store's files" \
    "$(cat "$ST"/*.mdb | grep -c stdout-closed)" 0
# valgrind itself will not start with stderr closed (exit 127), so under make
# test-valgrind this one case runs the program as it is.
"$T_BUILD/agentlink" mcp-proxy --store "$ST" -- sh -c 'readlink /proc/$$/fd/2' </dev/null >"$T_TMP/out" 2>&-
t_eq "stderr closed: exit 0, the server's stderr is /dev/null" "$?:$(cat "$T_TMP/out")" "0:/dev/null"
t_done
