#!/bin/bash
# Remote results read whole and kept (fs/fill.h, fs/keep.h), against the
# real radosgw tests/run.sh started: store A writes through the remote, B's
# daemon (metrics on) reads from the remote alone.
#   2,000 random 4 KiB preads of a 24 MiB result: every piece exact, the
#   daemon's RssAnon under 16 MiB all along (the fetched bytes are in a
#   file, not its memory), and the bytes fetched
#   (offloadfs_remote_fetch_bytes_total) at most 1.2x the result; B then holds it as a cached copy (stats, stat "where: cached
#   here", the metrics' gauges and one miss); read again (O_DIRECT: every
#   piece reaches the daemon) it is served by the copy: exact, no byte
#   fetched, hits counted; the daemon then maps under 4 MiB of data.mdb, and
#   its own memory falls under 16 MiB (the copy written by a child). A sequential cat of another 24 MiB result: exact,
#   at most 1.2x fetched, kept too. A result of 100 KB comes whole with its
#   lookup and is kept at its read. With B's remote at a closed port, a new mount of B
#   serves all three from its copies, and so do agentlink get and Python.
# radosgw is never stopped: this suite runs beside the others. Under make
# test-valgrind the daemon runs under memcheck.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../fs/mountlib.sh"
. "$(dirname "$0")/../metrics/prom.sh"
m_require_fuse
r_require_s3
command -v curl >/dev/null || { t_not_ok "curl is installed (scripts/deps.sh)"; t_done; }
AL=$AGENTLINK
metrics_valgrind
export OFFLOADFS_REMOTE_STALL_SECONDS=5 OFFLOADFS_REMOTE_RETRIES=1
unset OFFLOADFS_STORE OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG
URL=s3://$OFFLOADFS_S3_BUCKET/fill-$$-$(date +%s%N)
MIB=$((1024 * 1024))
A=$T_TMP/a B=$T_TMP/b

t_rc "A: init --remote" 0 $AL --store "$A" init --remote "$URL"
t_rc "B: init --remote, room for 24 MiB copies" 0 $AL --store "$B" init --remote "$URL" \
    --max-total-bytes $((256 * MIB)) --max-result-bytes $((64 * MIB))
head -c $((24 * MIB)) /dev/urandom >"$T_TMP/rand"
head -c $((24 * MIB)) /dev/urandom >"$T_TMP/seq"
head -c 100000 /dev/urandom >"$T_TMP/small"
for k in rand seq small; do
    t_rc "A: put $k (uploaded)" 0 $AL --store "$A" put "$k" --tool bash --file "$T_TMP/$k"
done

M=$T_TMP/mnt
m_mount "$B" "$M" "${OPTS[@]}" -o metrics=127.0.0.1:0,remote_ttl=600 || { t_not_ok "mount B"; t_done; }
t_wait_until "$WAIT" has_url "$M"
URL_M=$(metrics_url "$M")
# metric NAME [LABEL] : the value of NAME{LABEL} now (default the namespace).
metric() {
    curl -sf --max-time 10 "$URL_M" |
        N="$1{${2:-namespace=\"default\"}}" awk '$1 == ENVIRON["N"] {print $2}'
}
fetched() { metric offloadfs_remote_fetch_bytes_total; }
bstats() { $AL --store "$B" --json stats | python3 -c 'import json,sys; j=json.load(sys.stdin); print(" ".join(str(j.get(k)) for k in sys.argv[1:]))' "$@"; }

# ---- random reads -----------------------------------------------------------
cat >"$T_TMP/preads.py" <<'PY'
import os, random, sys
path, src, n = sys.argv[1], open(sys.argv[2], "rb").read(), int(sys.argv[3])
pid = sys.argv[4] if len(sys.argv) > 4 else None  # the daemon: its RssAnon, most seen
rnd = random.Random(7)
fd = os.open(path, os.O_RDONLY)
bad = most = 0
for i in range(n):
    off = rnd.randrange(0, len(src) - 4096)
    if os.pread(fd, 4096, off) != src[off:off + 4096]:
        bad += 1
    if pid and i % 10 == 0:
        with open("/proc/%s/status" % pid) as st:
            most = max([most] + [int(l.split()[1]) for l in st if l.startswith("RssAnon:")])
os.close(fd)
print("bad", bad)
if pid:
    print(most, file=sys.stderr)
PY
f0=$(fetched)
PID=$(m_pid "$M")
t_eq "2,000 random 4 KiB preads of 24 MiB: every piece exact" \
    "$(timeout 600 python3 "$T_TMP/preads.py" "$M/rand" "$T_TMP/rand" 2000 "$PID" 2>"$T_TMP/most")" "bad 0"
echo "# B's daemon during the reads: RssAnon at most $(cat "$T_TMP/most") KiB"
if [ -z "${OFFLOADFS_VALGRIND:-}" ] && ! ldd "$T_BUILD/offloadfs" | grep -q libasan; then
    t_check "  the daemon's own memory (RssAnon) stayed under 16 MiB meanwhile (the fill is a file)" \
        test "$(cat "$T_TMP/most")" -lt $((16 * 1024))
fi
f1=$(fetched)
echo "# fetched for the random reads: $((f1 - f0)) bytes of $((24 * MIB))"
t_check "  fetched at most 1.2x the result" test $((f1 - f0)) -le $((24 * MIB * 12 / 10))
kept() { [ "$(bstats cached_entries)" -ge "$1" ]; }
t_check "  then kept: B holds a cached copy" t_wait_until 60 kept 1
t_rc "B: stat rand" 0 $AL --store "$B" stat rand
t_check "  where: cached here" grep -q "^where: cached here" "$T_TMP/out"
t_check "  tool: bash (the writer's, from the remote)" grep -q "^tool: bash" "$T_TMP/out"
t_eq "the metrics: offloadfs_cache_misses_total" "$(metric offloadfs_cache_misses_total)" 1
REAL=$(realpath "$B")
t_eq "  offloadfs_store_cached_entries" \
    "$(metric offloadfs_store_cached_entries "store=\"$REAL\"")" 1
t_eq "  offloadfs_store_cached_bytes" \
    "$(metric offloadfs_store_cached_bytes "store=\"$REAL\"")" $((24 * MIB))

h0=$(metric offloadfs_cache_hits_total) f0=$(fetched)
t_check "read again (O_DIRECT): exact bytes" \
    sh -c "dd if='$M/rand' bs=1M iflag=direct 2>/dev/null | cmp -s - '$T_TMP/rand'"
t_eq "  served by the copy: no byte fetched" "$(fetched)" "$f0"
t_check "  hits counted" test "$(metric offloadfs_cache_hits_total)" -gt "$h0"

# ---- memory that follows use ------------------------------------------------
db_kib() { # resident KiB of the daemon's mapping of data.mdb
    awk '/^[0-9a-f]+-[0-9a-f]+ /{f = ($6 ~ /data\.mdb$/)} f && /^Rss:/{s += $2} END{print s + 0}' \
        /proc/"$PID"/smaps
}
db_small() { [ "$(db_kib)" -lt 4096 ]; }
t_check "  the copy's pages are given back after the reads: under 4 MiB of data.mdb mapped" \
    t_wait_until 60 db_small
echo "# B's daemon after reading the 24 MiB copy: data.mdb mapped $(db_kib) KiB"
# Its own memory (not under memcheck or ASan, which keep their own): the
# fill's mapping unmapped once kept, and nothing of the copy's write, made
# by a child process, left behind.
if [ -z "${OFFLOADFS_VALGRIND:-}" ] && ! ldd "$T_BUILD/offloadfs" | grep -q libasan; then
    anon_small() { [ "$(awk '/^RssAnon:/ {print $2}' /proc/"$PID"/status)" -lt $((16 * 1024)) ]; }
    t_check "  and its own memory (RssAnon) falls under 16 MiB" t_wait_until 60 anon_small
    echo "# B's daemon: $(grep RssAnon /proc/"$PID"/status)"
fi

# ---- a sequential read, a small result --------------------------------------
f0=$(fetched)
t_check "cat of another 24 MiB result: exact bytes" cmp -s "$M/seq" "$T_TMP/seq"
f1=$(fetched)
echo "# fetched for the cat: $((f1 - f0)) bytes of $((24 * MIB))"
t_check "  fetched at most 1.2x the result" test $((f1 - f0)) -le $((24 * MIB * 12 / 10))
t_check "  kept" t_wait_until 60 kept 2
t_check "a 100 KB result: exact bytes" cmp -s "$M/small" "$T_TMP/small"
t_check "  kept (from the bytes its lookup brought: no fetch more)" t_wait_until 60 kept 3
t_eq "B: entries cached_entries cached_bytes pending" "$(bstats entries cached_entries cached_bytes pending)" \
    "3 3 $((48 * MIB + 100000)) 0"
rc=0; m_umount "$M" || rc=$?
t_eq "B's daemon exits 0 after unmount" "$rc" 0

# ---- B's remote down --------------------------------------------------------
CLOSED=$(free_port)
AWS_ENDPOINT_URL_S3=http://127.0.0.1:$CLOSED m_mount "$B" "$T_TMP/down" "${OPTS[@]}" ||
    { t_not_ok "mount B with its remote down"; t_done; }
for k in rand seq small; do
    t_check "remote down: B's mount serves $k from its copy, exact bytes" \
        cmp -s "$T_TMP/down/$k" "$T_TMP/$k"
done
rc=0; m_umount "$T_TMP/down" || rc=$?
t_eq "  the daemon exits 0" "$rc" 0
DOWN=http://127.0.0.1:$CLOSED
t_rc "remote down: agentlink get of what the mount read exits 0" 0 \
    env AWS_ENDPOINT_URL_S3=$DOWN OFFLOADFS_REMOTE_RETRIES=0 $AL --store "$B" get rand
t_check "  the exact bytes" cmp -s "$T_TMP/out" "$T_TMP/rand"
# An ASan build of the library needs its runtime preloaded into python.
asan=$(ldd "$T_BUILD/libagentlink.so" 2>/dev/null | awk '/libasan/ {print $3}')
t_eq "remote down: Python read_bytes of what the mount read, the exact bytes" \
    "$(AWS_ENDPOINT_URL_S3=$DOWN OFFLOADFS_REMOTE_RETRIES=0 AGENTLINK_LIB=$T_BUILD/libagentlink.so \
        LD_PRELOAD=${asan:-} ASAN_OPTIONS=detect_leaks=0 timeout 120 python3 -c '
import sys; sys.path.insert(0, sys.argv[1] + "/agentlink/python")
import agentlink
print(agentlink.ToolResultStore(store=sys.argv[2]).read_bytes("seq") == open(sys.argv[3], "rb").read())
' "$T_TOP" "$B" "$T_TMP/seq")" True
t_done
