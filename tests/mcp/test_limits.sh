#!/bin/bash
# test_limits.sh -- agentlink mcp-proxy's maximum message size
# (OFFLOADFS_MCP_MAX_MESSAGE): a server that starts an answer and never
# ends its line leaves the proxy's memory bounded, and the client gets a
# JSON-RPC error with its call's id that names the limit; the relay goes on
# after that line's newline. A request of the client over the limit is
# refused the same way and never reaches the server.
. "$(dirname "$0")/../lib.sh"

unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG OFFLOADFS_STORE XDG_STATE_HOME
ST=$T_TMP/store OUT=$T_TMP/out
$AGENTLINK --store "$ST" init >/dev/null || { t_not_ok "agentlink init"; t_done; }
PY=$(python3 -c 'import sys; print(sys.executable)')

# The server: reads the call, starts its answer, writes 512 MiB of it with
# no newline (far past the 8 MiB limit), then ends that line and sends a
# notification; then waits for its stdin to end.
cat >"$T_TMP/server.py" <<'PY'
import sys
sys.stdin.buffer.readline()
out = sys.stdout.buffer
out.write(b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"')
chunk = b"x" * (1 << 20)
for i in range(512):
    out.write(chunk)
out.write(b'"}]}}\n{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"after"}}\n')
out.flush()
sys.stdin.buffer.read()
PY
mkfifo "$T_TMP/fifo"
OFFLOADFS_MCP_MAX_MESSAGE=8M $AGENTLINK mcp-proxy --store "$ST" -- "$PY" "$T_TMP/server.py" \
    <"$T_TMP/fifo" >"$OUT" 2>"$T_TMP/err" &
pid=$!
exec 7>"$T_TMP/fifo"
echo '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"big"}}' >&7
t_wait_until 300 grep -q '"after"' "$OUT"
# Peak RSS of the proxy (valgrind's or ASan's own memory included: the
# bound is generous, the line 512 MiB).
hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$pid/status)
exec 7>&-
wait $pid
t_eq "the proxy exits 0" "$?" 0
t_eq "the client gets a JSON-RPC error with its call's id, then what followed the line" \
    "$(python3 -c 'import json,sys; m=[json.loads(l) for l in open(sys.argv[1])]; print(len(m), m[0]["id"], m[0]["error"]["code"], m[1]["params"]["data"])' "$OUT")" \
    "2 7 -32603 after"
t_eq "... the error names the limit" "$(head -1 "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["error"]["message"])')" \
    "agentlink mcp-proxy: the server's answer to this request is longer than the proxy's maximum message size, 8388608 bytes (OFFLOADFS_MCP_MAX_MESSAGE), and was dropped"
t_check "... and the log says so" grep -q "a message from the server is longer than the maximum message size, 8388608 bytes" "$T_TMP/err"
t_check "the proxy's memory stayed bounded while 512 MiB of one line passed (peak ${hwm:-?} kB < 256 MiB)" \
    test "${hwm:-999999999}" -lt 262144

# The client's own request over the limit: refused with -32600, not sent on.
python3 -c '
import sys
sys.stdout.write("{\"jsonrpc\":\"2.0\",\"id\":\"big\",\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"arguments\":{\"x\":\"" + "y" * (2 << 20) + "\"}}}\n")
sys.stdout.write("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n")' >"$T_TMP/in"
OFFLOADFS_MCP_MAX_MESSAGE=1M $AGENTLINK mcp-proxy --store "$ST" -- sh -c 'cat >"$0"' "$T_TMP/got" <"$T_TMP/in" >"$OUT" 2>"$T_TMP/err"
t_eq "a client's request over the limit: exit 0" "$?" 0
t_eq "... it gets an error with its id, code -32600" \
    "$(python3 -c 'import json,sys; m=json.loads(open(sys.argv[1]).readline()); print(m["id"], m["error"]["code"])' "$OUT")" "big -32600"
t_eq "... the server gets only the next message" "$(cat "$T_TMP/got")" '{"jsonrpc":"2.0","id":2,"method":"ping"}'
t_rc "a limit that is not a size: 2" 2 env OFFLOADFS_MCP_MAX_MESSAGE=lots $AGENTLINK mcp-proxy -- true
t_eq "... said so" "$(head -1 "$T_TMP/err")" "agentlink: mcp-proxy: OFFLOADFS_MCP_MAX_MESSAGE 'lots' is not a size: bytes, or a number with K, M or G"
t_done
