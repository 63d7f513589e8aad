#!/bin/bash
# test_search_relay.sh -- a read tool search runs beside the relay, not in
# its way: while "a+b" runs over a line of 100,000 'a'
# (seconds of glibc's regexec), a ping goes to the server and its answer
# comes back before the search's; the search's answer follows when it ends; and the
# client closing stdin reaches the server at once, not when the search ends
# (the search's child holds none of the relay's descriptors).
. "$(dirname "$0")/../lib.sh"

unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG OFFLOADFS_STORE XDG_STATE_HOME
# The interpreter itself, not a version manager's shim (seconds to start under load).
PY=$(python3 -c 'import sys; print(sys.executable)')
SERVER="$PY $T_TOP/tests/mcp/mcp_server.py"
ST=$T_TMP/store OUT=$T_TMP/out
export MCP_SERVER_LOG=$T_TMP/server.log
$AGENTLINK --store "$ST" init >/dev/null || { t_not_ok "agentlink init"; t_done; }
head -c 100000 /dev/zero | tr '\0' a | $AGENTLINK --store "$ST" put aaa >/dev/null

# No clock decides: the search runs until its deadline (5 s, mcp.h: "a+b"
# over that line takes longer, its answer says "stopped"), and everything
# asserted here must happen before its answer, in order, however slow the
# machine or the build (valgrind takes a few hundred ms for the ping).
mkfifo "$T_TMP/fifo"
$AGENTLINK mcp-proxy --store "$ST" -- $SERVER <"$T_TMP/fifo" >"$OUT" 2>"$T_TMP/err" &
pid=$!
exec 7>"$T_TMP/fifo"
# The server up first (python's start under load is not what is measured).
echo '{"jsonrpc":"2.0","id":0,"method":"ping"}' >&7
t_wait_until 60 grep -q '"id":0' "$OUT"
echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_offloaded_result","arguments":{"path":"aaa","pattern":"a+b"}}}' >&7
echo '{"jsonrpc":"2.0","id":2,"method":"ping"}' >&7
t_wait_until 30 grep -q '"id":2' "$OUT"
t_eq "a ping sent after the search's call is answered first, while it runs" \
    "$(sed -n 2p "$OUT" | head -c 40)" '{"jsonrpc":"2.0","id":2,"method":"ping"}'
exec 7>&-
t_wait_until 30 grep -q eof "$MCP_SERVER_LOG"
t_eq "the client's end of input reaches the server while the search runs" \
    "$(grep -c '"id":1' "$OUT")" 0
wait $pid
t_eq "the proxy exits 0" "$?" 0
t_eq "... after the search's answer" "$(tail -1 "$OUT" | python3 -c 'import json,sys; m=json.load(sys.stdin); print(m["id"], "stopped" in m["result"]["content"][0]["text"])')" "1 True"
t_done
