#!/bin/bash
# One answer for every reader (doc/remote.md "One answer"): two stores on
# one remote are two hosts. Results evicted on A are still read on A by
# agentlink get/stat/ls, the Python binding and the MCP read tool, from the
# remote, as A's mount serves them; rm of a key evicted on A writes its
# tombstone, so B's CLI and B's mount answer "removed" (exit 4, ENODATA);
# with radosgw stopped a key not here is "unknown" (exit 6, a message
# naming the remote), never "evicted" or "never written". A result pending
# on A is "no such key" on B until A's sync sends it.
# run.sh: alone (stops the radosgw the other remote suites share)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fs/mountlib.sh"
. "$(dirname "$0")/lib.sh"
m_require_fuse
AL=$AGENTLINK # under OFFLOADFS_WRAP (valgrind) too
r_require_s3
unset OFFLOADFS_STORE OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG
URL=s3://$OFFLOADFS_S3_BUCKET/lookup-$$-$(date +%s%N)
A=$T_TMP/a B=$T_TMP/b MA=$T_TMP/mnt-a MB=$T_TMP/mnt-b
has() { case $2 in *"$3"*) t_ok "$1" ;; *) t_not_ok "$1"; printf '  %q lacks %q\n' "${2:0:600}" "$3" ;; esac; }

t_rc "A: init --remote, compression none" 0 $AL --store "$A" init --remote "$URL" --compression none \
    --max-total-bytes 4M
t_rc "B: init --remote (the same)" 0 $AL --store "$B" init --remote "$URL"
m_mount "$A" "$MA" -o remote_ttl=0,prefetch=0 || { t_not_ok "mount A"; t_done; }
m_mount "$B" "$MB" -o remote_ttl=0,prefetch=0 || { t_not_ok "mount B"; t_done; }
# k1 is over the 1 MiB a lookup fetches with it: its rest is a second GET.
text() { head -c "$1" /dev/urandom | base64 -w 100 | head -c "$1"; } # text of N bytes
text $((1536 * 1024)) >"$T_TMP/k1"
for k in k2 k3 k4; do text $((600 * 1024)) >"$T_TMP/$k"; done
for k in k1 k2 k3 k4; do t_rc "A: put $k (uploaded)" 0 $AL --store "$A" put "$k" --tool bash --file "$T_TMP/$k"; done
t_rc "A: init --max-total-bytes 1M evicts k1, k2, k3" 0 $AL --store "$A" init --max-total-bytes 1M
t_eq "  A's store holds k4 alone" "$($AL --store "$A" --json stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["entries"])')" 1
t_check "A's mount serves evicted k1 from the remote" cmp -s "$MA/k1" "$T_TMP/k1"

# ---- every reader on A answers as A's mount -----------------------------
t_rc "A: get k1 (evicted here) exits 0" 0 $AL --store "$A" get k1
t_check "  the exact bytes, 1.5 MiB (two GETs)" cmp -s "$T_TMP/out" "$T_TMP/k1"
t_rc "A: get k4 (live here) exits 0" 0 $AL --store "$A" get k4
t_check "  the exact bytes" cmp -s "$T_TMP/out" "$T_TMP/k4"
t_rc "A: stat k2 exits 0" 0 $AL --store "$A" stat k2
has "  state live, where: remote only, its size and tool" "$(cat "$T_TMP/out")" \
    $'state: live\nsize: 614400\ntool: bash'
has "  ... where: remote only" "$(cat "$T_TMP/out")" "where: remote only"
t_rc "A: stat --json k4" 0 $AL --store "$A" --json stat k4
t_eq "  where: here" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["where"])' <"$T_TMP/out")" here
t_rc "A: ls exits 0" 0 $AL --store "$A" ls
t_eq "  lists the four, in order, sizes from here and the remote" "$(cut -f1,2 "$T_TMP/out" | tr '\t\n' ' ;')" \
    "k1 1572864;k2 614400;k3 614400;k4 614400;"
t_rc "A: ls --json exits 0" 0 $AL --store "$A" --json ls
t_eq "  where of each" "$(python3 -c 'import json,sys; print(" ".join(e["where"] for e in json.load(sys.stdin)))' <"$T_TMP/out")" \
    "remote remote remote here"
t_rc "A: get never-written exits 3" 3 $AL --store "$A" get nope
cat >"$T_TMP/read.py" <<'EOF'
import os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "agentlink", "python"))
import agentlink
s = agentlink.ToolResultStore(store=sys.argv[2])
try:
    data = s.read_bytes(sys.argv[3])
    print("bytes", len(data), data == open(sys.argv[4], "rb").read() if len(sys.argv) > 4 else "")
except Exception as e:
    print(type(e).__name__, e)
EOF
# An ASan build of the library needs its runtime preloaded into python.
asan=$(ldd "$T_BUILD/libagentlink.so" 2>/dev/null | awk '/libasan/ {print $3}')
py() { AGENTLINK_LIB=$T_BUILD/libagentlink.so LD_PRELOAD=${asan:-} ASAN_OPTIONS=detect_leaks=0 timeout 120 python3 "$@"; }
t_eq "Python read_bytes(k1) on A: the exact bytes" \
    "$(py "$T_TMP/read.py" "$T_TOP" "$A" k1 "$T_TMP/k1")" "bytes 1572864 True"
t_eq "Python read_bytes(k3) by path on A: the exact bytes" \
    "$(py "$T_TMP/read.py" "$T_TOP" "$A" /large_tool_results/k3 "$T_TMP/k3")" "bytes 614400 True"
printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_offloaded_result","arguments":{"path":"/large_tool_results/k2","byte_offset":614390,"byte_limit":100}}}' \
    >"$T_TMP/mcp-in"
head -c 614400 "$T_TMP/k2" | tail -c 10 >"$T_TMP/k2-tail"
timeout 300 $AL mcp-proxy --store "$A" -- python3 "$T_TOP/tests/mcp/mcp_server.py" <"$T_TMP/mcp-in" \
    >"$T_TMP/mcp-out" 2>"$T_TMP/mcp-err"
mcp_answer() { python3 -c 'import json,sys; m={json.loads(l).get("id"): json.loads(l) for l in open(sys.argv[1])}; r=m[1]["result"]; print(r.get("isError", False), r["content"][0]["text"])' "$T_TMP/mcp-out"; }
has "MCP read tool on A (evicted k2): its last bytes, not an error" "$(mcp_answer)" "False "
has "  ... its last bytes" "$(mcp_answer)" "$(cat "$T_TMP/k2-tail")"

# ---- rm of a key evicted here removes it everywhere ---------------------
t_check "B reads k2 before the rm" cmp -s "$MB/k2" "$T_TMP/k2"
t_rc "A: rm k2 (evicted here, on the remote) exits 0" 0 $AL --store "$A" rm k2
t_rc "B: get k2 exits 4" 4 $AL --store "$B" get k2
has "  and says it was removed" "$(cat "$T_TMP/err")" "key 'k2' was removed at"
t_eq "B's mount: k2 is ENODATA" "$(m_errno open_r "$MB/k2")" ENODATA
t_rc "A: get k2 exits 4" 4 $AL --store "$A" get k2
t_eq "A's mount: k2 is ENODATA" "$(m_errno open_r "$MA/k2")" ENODATA
t_rc "A: rm k2 again exits 4 (already removed)" 4 $AL --store "$A" rm k2
t_rc "A: rm never-written exits 3" 3 $AL --store "$A" rm nope
echo "done with /large_tool_results/k3 now" >"$T_TMP/ref"
t_rc "A: drop-referenced k3 (evicted here) exits 0" 0 $AL --store "$A" drop-referenced <"$T_TMP/ref"
t_eq "  names it" "$(cat "$T_TMP/out")" /large_tool_results/k3
t_rc "B: get k3 exits 4" 4 $AL --store "$B" get k3

# ---- pending on A: "no such key" on B until sync sends it -----------------
# The remote unreachable for this put alone (a closed port; the store
# keeps only the URL): a stopped radosgw would still take a small body
# it had buffered once it runs again.
# From here a stopped remote costs one 1 s stall per request, not 3 x 2 s
# (before, the default bounds: valgrind on a loaded machine is slow).
export OFFLOADFS_REMOTE_STALL_SECONDS=1 OFFLOADFS_REMOTE_RETRIES=0
CLOSED=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
text 1000 >"$T_TMP/k5"
t_rc "remote unreachable: A: put k5 exits 5 (pending)" 5 env AWS_ENDPOINT_URL_S3=http://127.0.0.1:$CLOSED \
    timeout 120 $AL --store "$A" put k5 --file "$T_TMP/k5"
echo '{"rules": [{"tools": ["*"], "offload": "always"}]}' >"$T_TMP/always.json"
t_rc "remote unreachable: A: offload k6 exits 5 (pending)" 5 env AWS_ENDPOINT_URL_S3=http://127.0.0.1:$CLOSED \
    timeout 120 $AL --store "$A" offload --tool t --call-id k6 --config "$T_TMP/always.json" <"$T_TMP/k5"
has "  the pointer names the path" "$(cat "$T_TMP/out")" "/large_tool_results/k6"
has "  and tells the model what another host answers until the upload" "$(cat "$T_TMP/out")" \
    'on another host it answers "No such file or directory" until the upload is done'
t_rc "B: get k5 (pending on A) exits 3: no such key yet" 3 $AL --store "$B" get k5
t_eq "B's mount: k5 is ENOENT" "$(m_errno open_r "$MB/k5")" ENOENT
rgw_stop "$RGW"

# ---- radosgw stopped: unknown, not evicted nor never written ------------
t_rc "radosgw stopped: A: get k1 exits 6" 6 timeout 120 $AL --store "$A" get k1
has "  the message names the remote" "$(cat "$T_TMP/err")" "s3://$OFFLOADFS_S3_BUCKET/"
has "  and the cause" "$(cat "$T_TMP/err")" "stalled, nothing moved for 1 s"
t_rc "radosgw stopped: A: stat k1 exits 6" 6 timeout 120 $AL --store "$A" stat k1
t_rc "radosgw stopped: A: get never-written exits 6 (cannot tell)" 6 timeout 120 $AL --store "$A" get nope
t_rc "radosgw stopped: A: get k4 (here) exits 0" 0 timeout 120 $AL --store "$A" get k4
t_rc "radosgw stopped: A: ls exits 6" 6 timeout 120 $AL --store "$A" ls
t_eq "  after listing what is here" "$(cut -f1 "$T_TMP/out" | tr "\n" " ")" "k4 k5 k6 "
t_rc "radosgw stopped: A: rm k1 exits 6" 6 timeout 120 $AL --store "$A" rm k1
has "Python read_bytes(k1): RemoteUnavailableError naming the remote" \
    "$(py "$T_TMP/read.py" "$T_TOP" "$A" k1)" "RemoteUnavailableError [Errno 5] cannot tell what 'k1' holds"
timeout 300 $AL mcp-proxy --store "$A" -- python3 "$T_TOP/tests/mcp/mcp_server.py" <"$T_TMP/mcp-in" \
    >"$T_TMP/mcp-out" 2>"$T_TMP/mcp-err"
has "MCP read tool: the remote could not answer, not 'evicted'" "$(mcp_answer)" "remote could not answer"
kill -CONT "$RGW"

unset OFFLOADFS_REMOTE_STALL_SECONDS OFFLOADFS_REMOTE_RETRIES
t_rc "A: sync exits 0" 0 timeout 60 $AL --store "$A" sync
t_rc "B: get k5 exits 0 after A's sync" 0 $AL --store "$B" get k5
t_check "  the exact bytes" cmp -s "$T_TMP/out" "$T_TMP/k5"
t_rc "A: get k1 exits 0 again" 0 $AL --store "$A" get k1
t_check "  the exact bytes" cmp -s "$T_TMP/out" "$T_TMP/k1"

m_umount "$MA"; t_eq "offloadfs on A exits 0 after unmount" "$?" 0
m_umount "$MB"; t_eq "offloadfs on B exits 0 after unmount" "$?" 0
t_done
