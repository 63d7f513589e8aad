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
t_done
