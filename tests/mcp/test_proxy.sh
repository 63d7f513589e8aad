#!/bin/bash
# test_mcp_proxy.sh -- agentlink mcp-proxy over real pipes, with a tiny
# scripted server (mcp_server.py): bytes through in both directions,
# offloading, the read tool, and the faults: malformed JSON, an oversized
# line, the store missing, the server failing to start or dying, the client
# closing stdin, signals. Every check asserts bytes, messages or exit codes.
. "$(dirname "$0")/../lib.sh"

unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG OFFLOADFS_STORE XDG_STATE_HOME
# The interpreter itself, not a version manager's shim (seconds to start under load).
PY=$(python3 -c 'import sys; print(sys.executable)')
SERVER="$PY $T_TOP/tests/mcp/mcp_server.py"
ST=$T_TMP/store
OUT=$T_TMP/out ERR=$T_TMP/err IN=$T_TMP/in
export MCP_SERVER_LOG=$T_TMP/server.log

has() { case $2 in *"$3"*) t_ok "$1" ;; *) t_not_ok "$1"; printf '  %q lacks %q\n' "${2:0:600}" "$3" ;; esac; }
lacks() { case $2 in *"$3"*) t_not_ok "$1"; printf '  has %q\n' "$3" ;; *) t_ok "$1" ;; esac; }
same() { if cmp -s "$2" "$3"; then t_ok "$1"; else t_not_ok "$1"; cmp "$2" "$3" | head -2; fi; }
# py EXPR FILE: EXPR over the JSON lines of FILE, as the list m
py() { python3 -c "import json,sys; m=[json.loads(l) for l in open(sys.argv[1],'rb')]; print($1)" "$2"; }
# proxy [OPTIONS] : runs the proxy with the server on $IN; sets RC. No mount
# serves the store here: the proxy's one warning that says so at start is
# checked once (MOUNTWARN), then left out of $ERR.
MW='warning: the pointers name paths under the mount'
proxy() {
    $AGENTLINK mcp-proxy --store "$ST" "$@" -- $SERVER <"$IN" >"$OUT" 2>"$ERR"; RC=$?
    [ "$RC" = 99 ] && sed 's/^/  stderr (99: an error under valgrind): /' "$ERR" >&2
    MOUNTWARN=$(grep -c "$MW" "$ERR"); sed -i "/$MW/d" "$ERR"
}
call() { # call ID TOOL ARGS-JSON
    printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' "$1" "$2" "$3"
}

# ---- bytes through, both ways --------------------------------------------------
# The server writes back what it does not know: what the client gets is
# exactly what it sent, through the proxy twice over.
cat >"$IN" <<'EOF'
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{ "jsonrpc" : "2.0" , "id" : 12345678901234567890123 , "method" : "ping" }
{"jsonrpc":"2.0","id":"caf\u00e9 \"q\"","method":"ping","params":{"x":1.50,"y":-0.0e+00}}
{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":0.5}}
{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found"}}
{"jsonrpc":"2.0","id":"s1","result":{"roots":[{"uri":"file:///tmp","name":"t"}]}}
[{"jsonrpc":"2.0","id":31,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}]
{"jsonrpc":"2.0","id":3,"method":"résumé","params":{"t":"\ud83d\ude00 \/ \b"}}

EOF
proxy
t_eq "pass-through: exit status 0" "$RC" 0
same "pass-through: every message byte for byte, both ways" "$OUT" "$IN"
t_eq "pass-through: nothing logged" "$(cat "$ERR")" ""
t_eq "... but one warning at start: no mount at /large_tool_results serves the store" "$MOUNTWARN" 1
t_eq "pass-through: the server saw stdin end" "$(cat "$MCP_SERVER_LOG")" "eof"

# Small results: what the client gets through the proxy is what it gets
# from the server directly (the read tool off, as tools/list differs).
{ echo '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
  call 2 text '{"n":3}'; call '"two"' text '{"n":5,"image":true,"structured":true}'
  call 4 text '{"n":100,"progress":true}'; } >"$IN"
$SERVER <"$IN" >"$T_TMP/direct"
proxy --no-read-tool
t_eq "small results: exit 0" "$RC" 0
same "small results: identical to the server's own output" "$OUT" "$T_TMP/direct"
proxy
t_eq "tools/list gains read_offloaded_result" \
    "$(py '[t["name"] for t in m[0]["result"]["tools"]]' "$OUT")" "['text', 'image', 'read_offloaded_result']"
t_eq "tools/list: the server's part of the line unchanged" \
    "$(head -1 "$OUT" | cut -c1-120)" "$(head -1 "$T_TMP/direct" | cut -c1-120)"
same "other results still identical" <(tail -n +2 "$OUT") <(tail -n +2 "$T_TMP/direct")

# ---- offloading ------------------------------------------------------------------
{ call 1 text '{"n":5000,"width":20}'; call '"b"' text '{"n":3000,"image":true,"structured":true}'
  call 3 text '{"n":3000,"error":true}'; } >"$IN"
proxy
t_eq "offload: exit 0" "$RC" 0
t_eq "offload: three answers" "$(wc -l <"$OUT")" 3
ptr=$(py 'm[0]["result"]["content"][0]["text"]' "$OUT")
key=$(printf '%s' "$ptr" | sed -n 's|^  /large_tool_results/\([^ ]*\)$|\1|p' | head -1)
has "the pointer names the mount path" "$ptr" "/large_tool_results/mcp-text-"
has "the pointer says how to call the read tool" "$ptr" 'call the tool read_offloaded_result with {"path": "/large_tool_results/'
t_eq "one content part replaces the text" "$(py 'len(m[0]["result"]["content"])' "$OUT")" 1
python3 -c 'import sys; sys.stdout.write("".join("line %d %s\n" % (i, "x"*20) for i in range(1, 5001)))' >"$T_TMP/want"
$AGENTLINK --store "$ST" get "$key" >"$T_TMP/got"
same "the stored bytes are the text, exactly" "$T_TMP/got" "$T_TMP/want"
t_eq "the key is the tool, the session's nonce and the result's number" \
    "$(printf '%s' "$key" | sed 's/^mcp-text-[0-9a-f]\{16\}-1$/ok/')" ok
t_eq "the id is kept as sent (a string)" "$(py 'repr(m[1]["id"])' "$OUT")" "'b'"
t_eq "non-text parts follow the pointer unchanged" \
    "$(py 'json.dumps(m[1]["result"]["content"][1], separators=(",",":"))' "$OUT")" \
    '{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}'
# The text went to the store; what is left, the structuredContent holding it
# again, is still over: it is stored whole too, and an object names it.
t_eq "structuredContent over the budget is replaced by the object that names it" \
    "$(py 'sorted(m[1]["result"]["structuredContent"]["offloaded"])' "$OUT")" "['bytes', 'path', 'read', 'what']"
sckey=$(py 'm[1]["result"]["structuredContent"]["offloaded"]["path"]' "$OUT" | sed 's|^/large_tool_results/||')
t_eq "... its path serves the structuredContent's JSON, exactly as the server sent it" \
    "$($AGENTLINK --store "$ST" get "$sckey" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sorted(d), d["lines"], len(d["content"]))')" \
    "['content', 'lines'] 3000 $(python3 -c 'print(sum(len("line %d %s\n" % (i, "x"*10)) for i in range(1, 3001)))')"
t_eq "isError results are offloaded too, isError kept" "$(py 'm[2]["result"]["isError"]' "$OUT")" True
has "... with a pointer" "$(py 'm[2]["result"]["content"][0]["text"]' "$OUT")" "/large_tool_results/mcp-text-"
proxy
key2=$(py 'm[0]["result"]["content"][0]["text"]' "$OUT" | sed -n 's|^  /large_tool_results/\([^ ]*\)$|\1|p' | head -1)
t_eq "a new session (ids start again) gets a new path for its result" \
    "$([ -n "$key2" ] && [ "$key2" != "$key" ] && echo new)" new
$AGENTLINK --store "$ST" get "$key" >"$T_TMP/got"
same "... and the old path still serves its own bytes" "$T_TMP/got" "$T_TMP/want"

# The policy, under the called tool's name.
printf '{"rules":[{"tools":["text"],"offload":{"over_bytes":100}},{"tools":["*"],"offload":"never"}]}' >"$T_TMP/pol.json"
{ call 1 text '{"n":10}'; call 2 image '{"n":10}'; } >"$IN"
proxy --config "$T_TMP/pol.json"
has "--config: the rule for 'text' offloads" "$(py 'm[0]["result"]["content"][0]["text"]' "$OUT")" "/large_tool_results/mcp-text-"
t_eq "--config: another tool is judged by its own rule" "$(py 'm[1]["result"]["content"][0]["text"][:6]' "$OUT")" "line 1"

# ---- the read tool ------------------------------------------------------------------
rd() { printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"read_offloaded_result","arguments":%s}}\n' "$1" "$2"; }
{ rd 1 "{\"path\":\"/large_tool_results/$key\",\"offset\":4999}"
  rd 2 "{\"path\":\"$key\",\"pattern\":\"^line 12[0-9] \",\"limit\":3}"
  rd 3 '{"path":"/large_tool_results/never-stored"}'
  rd 4 '{"path":"/elsewhere/x"}'
  rd 5 '{"offset":2}'
  rd 6 "{\"path\":\"$key\",\"pattern\":\"(\"}"
  rd 7 "{\"path\":\"$key\"}"; } >"$IN"
: >"$MCP_SERVER_LOG"
proxy
t_eq "read tool: seven answers" "$(wc -l <"$OUT")" 7
# A pattern search is answered when it ends, the others at once: in id order.
python3 -c 'import json,sys; m=sorted(open(sys.argv[1]).readlines(), key=lambda l: json.loads(l)["id"]); open(sys.argv[1],"w").write("".join(m))' "$OUT"
t_eq "read tool: a line range, numbered, and its end" "$(py 'm[0]["result"]["content"][0]["text"]' "$OUT")" \
"/large_tool_results/$key: lines 4999-5000 of 5000 ($(wc -c <"$T_TMP/want") bytes)
4999	line 4999 xxxxxxxxxxxxxxxxxxxx
5000	line 5000 xxxxxxxxxxxxxxxxxxxx
[end of the result]"
t_eq "read tool: a pattern gives matching lines and how to go on" "$(py 'm[1]["result"]["content"][0]["text"]' "$OUT")" \
"/large_tool_results/$key: 3 lines matching /^line 12[0-9] / from line 1 (lines 120-122 of 5000)
120	line 120 xxxxxxxxxxxxxxxxxxxx
121	line 121 xxxxxxxxxxxxxxxxxxxx
122	line 122 xxxxxxxxxxxxxxxxxxxx
[more matching lines may follow: call read_offloaded_result with {\"path\": \"/large_tool_results/$key\", \"offset\": 123, \"limit\": 3, \"pattern\": \"^line 12[0-9] \"} to continue]"
t_eq "read tool: an unknown path is an error result" "$(py 'm[2]["result"]["isError"]' "$OUT")" True
has "... that says so" "$(py 'm[2]["result"]["content"][0]["text"]' "$OUT")" "No offloaded result at /large_tool_results/never-stored: nothing was ever stored"
has "read tool: a path outside the mount is refused" "$(py 'm[3]["result"]["content"][0]["text"]' "$OUT")" "expected /large_tool_results/KEY"
has "read tool: no path is refused" "$(py 'm[4]["result"]["content"][0]["text"]' "$OUT")" 'needs "path"'
has "read tool: a bad pattern is refused" "$(py 'm[5]["result"]["content"][0]["text"]' "$OUT")" 'is not a POSIX extended regular expression'
t_eq "read tool: bad calls are isError" "$(py '[x["result"]["isError"] for x in m[3:6]]' "$OUT")" "[True, True, True]"
t_eq "read tool: the answer stays within the budget (32 KiB)" "$(py 'len(m[6]["result"]["content"][0]["text"].encode()) <= 32768' "$OUT")" True
t_eq "read tool: ... and says how to continue" "$(py 'm[6]["result"]["content"][0]["text"].split("\n")[-1]' "$OUT" | sed 's/"offset": [0-9]*/"offset": N/')" \
    "[more lines follow: call read_offloaded_result with {\"path\": \"/large_tool_results/$key\", \"offset\": N, \"limit\": 2000} to continue]"
last=$(py 'm[6]["result"]["content"][0]["text"].split("\n")[-2].split("\t")[0]' "$OUT")
t_eq "... from the line after the last one shown" "$(py 'm[6]["result"]["content"][0]["text"].split("\n")[-1]' "$OUT" | grep -o '"offset": [0-9]*')" "\"offset\": $((last + 1))"
t_eq "read tool: calls never reach the server" "$(cat "$MCP_SERVER_LOG")" "eof"
$AGENTLINK --store "$ST" rm "$key" >/dev/null
rd 1 "{\"path\":\"/large_tool_results/$key\"}" >"$IN"
proxy
has "read tool: a removed result is an error that says when and what to do" \
    "$(py 'm[0]["result"]["content"][0]["text"]' "$OUT")" "it was removed at 20"
has "... run the tool again" "$(py 'm[0]["result"]["content"][0]["text"]' "$OUT")" "run the tool that produced it again"
ST2=$T_TMP/small
$AGENTLINK --store "$ST2" init --max-total-bytes 300K --max-result-bytes 200K >/dev/null
# Random text, so that a store that compresses cannot keep all four.
{ for i in 1 2 3 4; do call $i text "{\"n\":2000,\"width\":80,\"seed\":$i}"; done; } >"$IN"
$AGENTLINK mcp-proxy --store "$ST2" -- $SERVER <"$IN" >"$OUT" 2>"$ERR"
first=$(py 'm[0]["result"]["content"][0]["text"].split("\n")[1].strip()' "$OUT")
rd 1 "{\"path\":\"$first\"}" >"$IN"
$AGENTLINK mcp-proxy --store "$ST2" -- $SERVER <"$IN" >"$OUT" 2>"$ERR"
has "read tool: an evicted result says it was evicted, when, and why" \
    "$(py 'm[0]["result"]["content"][0]["text"]' "$OUT")" "it was evicted at 20"
t_eq "... as an isError result" "$(py 'm[0]["result"]["isError"]' "$OUT")" True

rd 1 '{"path":"x"}' >"$IN"
proxy --no-read-tool
t_eq "--no-read-tool: the call goes to the server" "$(py 'm[0]["result"]["content"][0]["text"][:6]' "$OUT")" "line 1"

# ---- server requests, batches, ids -----------------------------------------------------
# The client answers the server's request while the pipe stays open.
{ call 1 ask '{}'; sleep 0.5
  echo '{"jsonrpc":"2.0","id":"srv-1","result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}'
  sleep 0.5; } | $AGENTLINK mcp-proxy --store "$ST" -- $SERVER >"$OUT" 2>"$ERR"
wait
t_eq "a server request reaches the client unchanged" "$(head -1 "$OUT")" \
    '{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":10}}'
t_eq "... and the answer comes back after the client's response" "$(py 'm[1]["result"]["content"][0]["text"]' "$OUT")" "asked"

echo "[$(call 1 text '{"n":3000}'),$(call '"x"' text '{"n":2}'),{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}]" >"$IN"
proxy
t_eq "a batch gets a batch" "$(py 'len(m[0])' "$OUT")" 3
has "... its large result offloaded" "$(py 'm[0][0]["result"]["content"][0]["text"]' "$OUT")" "/large_tool_results/mcp-text-"
t_eq "... its small one unchanged" "$(py 'm[0][1]["result"]["content"][0]["text"]' "$OUT")" "$(printf 'line 1 xxxxxxxxxx\nline 2 xxxxxxxxxx')"
t_eq "... its tools/list with the read tool" "$(py 'm[0][2]["result"]["tools"][-1]["name"]' "$OUT")" read_offloaded_result

# Ids by value: 7 and 7.0 are one id; "7" is another.
echo '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"raw","arguments":{"line":"{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"'"$(printf 'y%.0s' {1..40000})"'\"}]}}"}}}' >"$IN"
proxy
t_eq "a result for another id (\"7\" for 7) is not rewritten" "$(py 'len(m[0]["result"]["content"][0]["text"])' "$OUT")" 40000

# ---- faults --------------------------------------------------------------------------------
printf '%s\n' 'not json' '{"jsonrpc":"2.0","id":1,' "$(call 2 text '{"n":2}')" >"$IN"
proxy
t_eq "malformed JSON: exit 0" "$RC" 0
t_eq "malformed JSON passes through, and what follows still works" "$(head -2 "$OUT")" "$(head -2 "$IN")"
has "malformed JSON is logged" "$(cat "$ERR")" "malformed JSON from the client (8 bytes, starting 'not json'): passed through unchanged"
has "... from either side" "$(cat "$ERR")" "malformed JSON from the server (24 bytes"
t_eq "... and the next message is answered" "$(tail -1 "$OUT" | cut -c1-27)" '{"jsonrpc":"2.0","id":2,"re'

# An oversized line: 40 MiB of result, offloaded; and 40 MiB passed through.
python3 -c '
import json, sys
t = ("z" * 1023 + "\n") * (40 * 1024)
sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": t}]}}) + "\n")' >"$T_TMP/big.json"
echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big"}}' >"$IN"
$AGENTLINK mcp-proxy --store "$ST" -- sh -c "read l; cat $T_TMP/big.json; read l" <"$IN" >"$OUT" 2>"$ERR"
has "a 40 MiB result is offloaded" "$(py 'm[0]["result"]["content"][0]["text"]' "$OUT")" "Size: 41943040 bytes"
t_eq "... the answer is small" "$(( $(wc -c <"$OUT") < 16384 ))" 1
echo '{"jsonrpc":"2.0","id":1,"method":"other"}' >"$IN"
$AGENTLINK mcp-proxy --store "$ST" -- sh -c "read l; cat $T_TMP/big.json; read l" <"$IN" >"$OUT" 2>"$ERR"
same "a 40 MiB message not rewritten passes byte for byte" "$OUT" "$T_TMP/big.json"
# The client's input ends at once here, and the proxy closes the server's
# then. It stops a server only once that has been quiet for 3 s since (30 s
# while the client's requests are still to be answered), quiet counted
# while the proxy waits for it with nothing of it in hand (mcp.h): a
# message still in flight is relayed whole, however long the server or the
# proxy (under valgrind) takes over it, and so is an answer still due.
# This server writes a notification in 40 pieces, one every 0.1 s, 4 s in
# all, after reading its stdin's end (the client sent no request).
python3 -c 'import json; print(json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "y" * 4000}}))' >"$T_TMP/slow.json"
echo '{"jsonrpc":"2.0","method":"notifications/initialized"}' >"$IN"
$AGENTLINK mcp-proxy --store "$ST" -- "$PY" -c '
import sys, time
sys.stdin.read()
m = open(sys.argv[1], "rb").read()
for i in range(40):
    sys.stdout.buffer.write(m[i * len(m) // 40:(i + 1) * len(m) // 40]); sys.stdout.flush()
    time.sleep(0.1)' "$T_TMP/slow.json" <"$IN" >"$OUT" 2>"$ERR"
t_eq "a message written over 4 s after stdin closed: the server exits 0" "$?" 0
same "... and the message arrives whole" "$OUT" "$T_TMP/slow.json"
lacks "... the server was not stopped" "$(cat "$ERR")" "sending SIGTERM"
# A request still to be answered: the server answers it 4 s after its stdin closed.
echo '{"jsonrpc":"2.0","id":1,"method":"ping"}' >"$IN"
$AGENTLINK mcp-proxy --store "$ST" -- sh -c 'cat >/dev/null; sleep 4; echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"' \
    <"$IN" >"$OUT" 2>"$ERR"
t_eq "an answer due, written 4 s after stdin closed: exit 0, the answer relayed" \
    "$?:$(cat "$OUT")" '0:{"jsonrpc":"2.0","id":1,"result":{}}'
# Memory: a message passed through is relayed from the bytes read (the line
# and a quarter); one offloaded, its text decoded over the line itself,
# adds the store's copy of the text while it is written. Peak RSS of the proxy (and its sh and cat, far
# smaller), by getrusage; not under valgrind or ASan, whose own memory counts.
maxrss() { # maxrss REQUEST : peak RSS in KiB of the proxy relaying big.json
    python3 -c '
import resource, subprocess, sys
subprocess.run(sys.argv[2:], input=(sys.argv[1] + "\n").encode(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$1" \
        $AGENTLINK mcp-proxy --store "$ST" -- sh -c "read l; cat $T_TMP/big.json; read l"
}
if [ -z "${OFFLOADFS_WRAP:-}" ] && ! ldd "$T_BUILD/agentlink" | grep -q libasan; then
    mb=$(( $(wc -c <"$T_TMP/big.json") / 1024 ))
    rss=$(maxrss '{"jsonrpc":"2.0","id":1,"method":"other"}')
    t_eq "memory: 40 MiB passed through in at most 1.5 times the message + 8 MiB ($rss KiB)" \
        "$(( rss <= mb * 3 / 2 + 8192 ))" 1
    rss=$(maxrss '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big2"}}')
    t_eq "memory: 40 MiB offloaded in at most 2.25 times the message + 8 MiB ($rss KiB)" \
        "$(( rss <= mb * 9 / 4 + 8192 ))" 1
fi
rm -f "$T_TMP/big.json"

# The store missing (a file where its directory should be): results pass.
: >"$T_TMP/notadir"
call 1 text '{"n":3000}' >"$IN"
$SERVER <"$IN" >"$T_TMP/direct"
$AGENTLINK mcp-proxy --store "$T_TMP/notadir/store" -- $SERVER <"$IN" >"$OUT" 2>"$ERR"; RC=$?
t_eq "store unusable: exit 0" "$RC" 0
same "store unusable: the result passes unchanged" "$OUT" "$T_TMP/direct"
has "store unusable: stderr says why" "$(cat "$ERR")" "the result of 'text' (61893 bytes) passed unchanged"

# A damaged store (not LMDB at all): results pass, the proxy says why.
mkdir -p "$T_TMP/damaged" && head -c 65536 /dev/zero | tr '\0' Z >"$T_TMP/damaged/data.mdb"
$AGENTLINK mcp-proxy --store "$T_TMP/damaged" -- $SERVER <"$IN" >"$OUT" 2>"$ERR"; RC=$?
t_eq "store damaged: exit 0" "$RC" 0
same "store damaged: the result passes unchanged" "$OUT" "$T_TMP/direct"
has "store damaged: stderr says so at start" "$(cat "$ERR")" "cannot open store '$T_TMP/damaged': "
has "... and for the result" "$(cat "$ERR")" "no store: the result of 'text' (61893 bytes) passed unchanged"

# The server failing to start, dying, killed.
echo '{}' >"$IN"
t_rc "a server that does not exist: 127" 127 $AGENTLINK mcp-proxy --store "$ST" -- "$T_TMP/no-such-server"
has "... with a clear message" "$(cat "$T_TMP/err")" "agentlink: mcp-proxy: cannot run the server '$T_TMP/no-such-server': No such file or directory"
t_rc "a server that cannot be run: 126" 126 $AGENTLINK mcp-proxy --store "$ST" -- "$T_TMP/notadir"
call 1 die '{"status":3}' >"$IN"
proxy
t_eq "a server that dies: its status" "$RC" 3
has "... with a clear message" "$(cat "$ERR")" "the server '$PY' exited with status 3"
call 1 kill '{"signal":9}' >"$IN"
proxy
t_eq "a server killed by SIGKILL: 137" "$RC" 137
has "... said so" "$(cat "$ERR")" "killed by signal 9 (SIGKILL)"
call 1 text '{"n":1}' >"$IN"
MCP_SERVER_EXIT=4 proxy
t_eq "the client closing stdin: the server sees its end, the proxy its status" "$RC:$(tail -1 "$MCP_SERVER_LOG")" "4:eof"

# A server that ignores the end of its stdin: the proxy sends SIGTERM after
# MCP_TERM_AFTER_MS, then SIGKILL after MCP_KILL_AFTER_MS more (mcp.h), and
# relays what the server writes until it exits.
echo '{"jsonrpc":"2.0","method":"notifications/initialized"}' >"$IN"
$AGENTLINK mcp-proxy --store "$ST" -- sh -c 'trap "echo bye; exit 5" TERM; echo up; while :; do sleep 0.05; done' \
    <"$IN" >"$OUT" 2>"$ERR"
t_eq "a server deaf to stdin's end gets SIGTERM; its last words relayed, its status" \
    "$?:$(tr '\n' ' ' <"$OUT")" "5:up bye "
$AGENTLINK mcp-proxy --store "$ST" -- sh -c 'echo up; exec sleep 60' <"$IN" >"$OUT" 2>"$ERR"
t_eq "... one that dies of SIGTERM: 143" "$?" 143
$AGENTLINK mcp-proxy --store "$ST" -- sh -c 'trap "" TERM; echo up; exec sleep 60' <"$IN" >"$OUT" 2>"$ERR"
t_eq "... one that ignores SIGTERM gets SIGKILL: 137" "$?" 137
has "... said so" "$(cat "$ERR")" "did not exit"

# Signals reach the server (it writes "term" and exits 7).
: >"$MCP_SERVER_LOG"
: >"$OUT" # the wait below must see this proxy's output, not the last one's
mkfifo "$T_TMP/fifo"
$AGENTLINK mcp-proxy --store "$ST" -- $SERVER <"$T_TMP/fifo" >"$OUT" 2>"$ERR" &
pid=$!
exec 7>"$T_TMP/fifo"
call 1 text '{"n":1}' >&7
t_wait_until 10 test -s "$OUT"
kill -TERM "$pid"
wait "$pid"; RC=$?
exec 7>&-
t_eq "SIGTERM is sent on to the server; the proxy exits with its status" "$RC:$(cat "$MCP_SERVER_LOG")" "7:term"
for sig in INT HUP; do
    # Emptied here, not by the redirection below: that one may come after
    # the wait sees the last round's "up", and the signal would then reach
    # a proxy (under valgrind, valgrind itself) that is still starting.
    : >"$MCP_SERVER_LOG"
    : >"$OUT"
    $AGENTLINK mcp-proxy --store "$ST" -- sh -c "trap 'echo $sig >>$MCP_SERVER_LOG; exit 9' $sig; echo up; while :; do sleep 0.05; done" \
        <"$T_TMP/fifo" >"$OUT" 2>"$ERR" &
    pid=$!
    exec 7>"$T_TMP/fifo"
    t_wait_until 10 test -s "$OUT"
    kill -"$sig" "$pid"
    wait "$pid"; RC=$?
    exec 7>&-
    t_eq "SIG$sig is sent on to the server" "$RC:$(cat "$MCP_SERVER_LOG")" "9:$sig"
    [ "$RC" = 9 ] || sed 's/^/  stderr: /' "$ERR"
done

# The client stops reading (its end of our stdout closed) while its own end of
# our stdin stays open: the server's stdin is closed, the proxy ends with its status.
: >"$MCP_SERVER_LOG"; rm -f "$T_TMP/rc"
( $AGENTLINK mcp-proxy --store "$ST" -- $SERVER <"$T_TMP/fifo" 2>"$ERR" | head -c 100 >/dev/null
  echo "${PIPESTATUS[0]}" >"$T_TMP/rc" ) &
exec 7>"$T_TMP/fifo"
for i in 1 2 3; do call $i text '{"n":2000}' >&7; done
t_wait_until 10 test -s "$T_TMP/rc"
t_eq "the client gone: the server's stdin closed, the proxy ends with its status" \
    "$(cat "$T_TMP/rc" 2>/dev/null):$(cat "$MCP_SERVER_LOG")" "0:eof"
exec 7>&-
wait
t_eq "... quietly" "$(grep -v "$MW" "$ERR")" ""

# stdout and stderr one pipe (2>&1), read slowly: the proxy must not make
# that shared description non-blocking, or the server's stderr lines (and
# the proxy's own log lines) are lost to EAGAIN.
( echo '{}' | $AGENTLINK mcp-proxy --store "$ST" -- "$PY" -c '
import sys
sys.stdin.readline()
for i in range(2000):
    sys.stderr.write("e%d %s\n" % (i, "x" * 1000))
sys.stderr.flush()
print("done")' 2>&1; echo "rc=$?" ) | { sleep 1; cat; } >"$OUT"
t_eq "2>&1, a slow reader: every stderr line of the server arrives" "$(grep -c '^e[0-9]* x*$' "$OUT")" 2000
t_eq "... and the proxy's own log line, and its output, and status 0" \
    "$(grep -c "^agentlink: mcp-proxy: malformed JSON from the server (4 bytes, starting 'done')" "$OUT"):$(grep -c '^done$' "$OUT"):$(tail -1 "$OUT")" "1:1:rc=0"

# ---- usage ----------------------------------------------------------------------------------
t_rc "no command: 2" 2 $AGENTLINK mcp-proxy
t_eq "... says so" "$(head -1 "$T_TMP/err")" "agentlink: mcp-proxy: no server command given: agentlink mcp-proxy [OPTIONS] -- COMMAND [ARG...]"
t_rc "an unknown option: 2" 2 $AGENTLINK mcp-proxy --frob -- cat
t_rc "a bad namespace: 2" 2 $AGENTLINK mcp-proxy --namespace a/b -- cat
t_eq "... named" "$(head -1 "$T_TMP/err")" "agentlink: mcp-proxy: namespace 'a/b' contains '/'"
echo '{"rules": 3}' >"$T_TMP/bad.json"
t_rc "a refused config: 2" 2 $AGENTLINK mcp-proxy --config "$T_TMP/bad.json" -- cat
t_rc "--help: 0" 0 $AGENTLINK mcp-proxy --help
has "--help shows the usage" "$(cat "$T_TMP/out")" "-- COMMAND [ARG...]"
$AGENTLINK --store "$ST" mcp-proxy -- "$PY" -c 'import sys; print(sys.argv[1:])' --store -x </dev/null >"$OUT" 2>"$ERR"
t_eq "global options before the command; the server's own after --" "$(cat "$OUT")" "['--store', '-x']"

t_done
