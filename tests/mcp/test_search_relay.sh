#!/bin/bash
# test_search_relay.sh -- a read tool search runs beside the relay, not in
# its way: while "a+b" runs over a line of 100,000 'a'
# (seconds of glibc's regexec), a ping goes to the server and its answer
# comes back at once; the search's answer follows when it ends; and the
# client closing stdin reaches the server at once, not when the search ends
# (the search's child holds none of the relay's descriptors).
. "$(dirname "$0")/../lib.sh"

unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG OFFLOADFS_STORE XDG_STATE_HOME
SERVER="python3 $T_TOP/tests/mcp/mcp_server.py"
ST=$T_TMP/store OUT=$T_TMP/out
export MCP_SERVER_LOG=$T_TMP/server.log
$AGENTLINK --store "$ST" init >/dev/null || { t_not_ok "agentlink init"; t_done; }
head -c 100000 /dev/zero | tr '\0' a | $AGENTLINK --store "$ST" put aaa >/dev/null

mkfifo "$T_TMP/fifo"
$AGENTLINK mcp-proxy --store "$ST" -- $SERVER <"$T_TMP/fifo" >"$OUT" 2>"$T_TMP/err" &
pid=$!
exec 7>"$T_TMP/fifo"
echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_offloaded_result","arguments":{"path":"aaa","pattern":"a+b"}}}' >&7
sleep 0.3
t0=$(date +%s%N)
echo '{"jsonrpc":"2.0","id":2,"method":"ping"}' >&7
t_wait_until 10 grep -q '"id":2' "$OUT"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
t_eq "a ping during the search is answered first" "$(head -c 40 "$OUT")" '{"jsonrpc":"2.0","id":2,"method":"ping"}'
t_eq "... within a second (${ms} ms)" "$(( ms < 1000 ))" 1
t0=$(date +%s%N)
exec 7>&-
t_wait_until 10 grep -q eof "$MCP_SERVER_LOG"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
t_eq "the client's end of input reaches the server during the search (${ms} ms)" "$(( ms < 1500 ))" 1
wait $pid
t_eq "the proxy exits 0" "$?" 0
t_eq "... after the search's answer" "$(tail -1 "$OUT" | python3 -c 'import json,sys; m=json.load(sys.stdin); print(m["id"], "stopped" in m["result"]["content"][0]["text"])')" "1 True"
t_done
