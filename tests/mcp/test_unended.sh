#!/bin/bash
# test_mcp_unended.sh -- agentlink mcp-proxy when the server's last message
# has no newline (it closed its stdout, or died, mid-line): the message is
# passed on as it came, and a read tool answer written after it still
# starts a line of its own, so neither is lost to the other.
. "$(dirname "$0")/../lib.sh"

unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG OFFLOADFS_STORE XDG_STATE_HOME
ST=$T_TMP/store
$AGENTLINK --store "$ST" init >/dev/null || { t_not_ok "agentlink init"; t_done; }
printf 'one\ntwo\n' | $AGENTLINK --store "$ST" put k >/dev/null

# The server writes a notification without newline, closes its stdout and
# reads on. The client sends a read call once it has that notification.
cat >"$T_TMP/client.py" <<'PY'
import json, subprocess, sys
note = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'
server = "printf '%s' '" + note.decode() + "'; exec >&-; cat >/dev/null"
p = subprocess.Popen(sys.argv[1].split() + ["mcp-proxy", "--store", sys.argv[2], "--", "sh", "-c", server],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
got = b""
while len(got) < len(note):
    b = p.stdout.read1(65536)
    if not b:
        break
    got += b
p.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_offloaded_result","arguments":{"path":"k"}}}\n')
p.stdin.close()
got += p.stdout.read()
p.wait()
lines = got.split(b"\n")
print(repr(lines[0] == note))
try:
    print(repr(json.loads(lines[1])["result"]["content"][0]["text"]))
except Exception as e:
    print("no answer: %r" % got[:300])
print(p.returncode)
PY
out=$(timeout 300 python3 "$T_TMP/client.py" "$AGENTLINK" "$ST" 2>"$T_TMP/err")
t_eq "the message without newline is passed on as it came, on its own line" "$(sed -n 1p <<<"$out")" True
t_eq "... the read tool's answer after it is a message of its own" "$(sed -n 2p <<<"$out")" \
    "'/large_tool_results/k: lines 1-2 of 2 (8 bytes)\\n1\\tone\\n2\\ttwo\\n[end of the result]'"
t_eq "... and the proxy ends with the server's status" "$(sed -n 3p <<<"$out")" 0
t_done
