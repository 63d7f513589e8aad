#!/bin/bash
# test_cli_route.sh -- which command a command line runs: "mcp-proxy" is the
# command only when it is the first argument that is neither an option nor
# an option's value. Every option of agentlink that takes a value counts
# (--tool, --file, --call-id, ...: agentlink's own option table), not the four
# mcp-proxy shares: a tool or a file named mcp-proxy is no proxy.
. "$(dirname "$0")/../lib.sh"

unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG OFFLOADFS_STORE XDG_STATE_HOME
ST=$T_TMP/store
cd "$T_TMP" || exit 1
printf 'in a file named mcp-proxy\n' >mcp-proxy

t_rc "--tool mcp-proxy before offload: offload runs" 0 \
    sh -c "echo small | $AGENTLINK --store '$ST' --tool mcp-proxy --call-id c1 offload"
t_eq "  and prints the result it keeps" "$(cat "$T_TMP/out")" small
t_rc "--file mcp-proxy before put: put runs" 0 $AGENTLINK --store "$ST" --file mcp-proxy put k1
t_eq "  and stores the file" "$($AGENTLINK --store "$ST" get k1)" "in a file named mcp-proxy"
t_rc "--call-id mcp-proxy before offload: offload runs" 0 \
    sh -c "echo small | $AGENTLINK --store '$ST' --call-id mcp-proxy --tool t offload"
t_rc "mcp-proxy after --store DIR is still the proxy (no server given: usage, 2)" 2 \
    $AGENTLINK --store "$ST" mcp-proxy
t_check "  and says so" grep -q "mcp-proxy: no server command given" "$T_TMP/err"
t_done
