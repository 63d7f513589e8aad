#!/bin/bash
# Eight hosts on one remote: eight stores, each with its own daemon; four
# writers per host write through the tier at once, then every host reads
# every other host's results through its mount. 0 wrong bytes. Prints
# the reads per second and the p99 of one result's open+read.
# Also: a put killed mid-upload stays pending and sync sends it; radosgw
# killed -9 and started again: reads work again without a remount.
# run.sh: alone (stops the radosgw the other remote suites share)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../fs/mountlib.sh"
m_require_fuse
TIER=$T_BUILD/tools/tierctl
r_require_s3
URL=s3://$OFFLOADFS_S3_BUCKET/hosts-$$-$(date +%s%N)
HOSTS=8 WRITERS=4 EACH=3

# The bytes of KEY: deterministic, 1-40 KB, so any host can check them.
content() { local n=$(( ($(cksum <<<"$1" | cut -d' ' -f1) % 40000) + 1000 )); yes "$1" | head -c "$n"; }

for ((h = 0; h < HOSTS; h++)); do
    S[h]=$(m_store "s$h") && "$TIER" "${S[h]}" remote "$URL" || { t_not_ok "store $h"; t_done; }
    m_mount "${S[h]}" "$T_TMP/m$h" -o prefetch=0 || { t_not_ok "mount $h"; t_done; }
done
t_ok "$HOSTS stores on one remote, each mounted"

writer() { # writer HOST W
    local r key
    for ((r = 0; r < EACH; r++)); do
        key=h$1-w$2-r$r
        content "$key" | "$TIER" "${S[$1]}" put "$key" || echo "put $key failed" >>"$T_TMP/put-errors"
    done
}
pids=()
for ((h = 0; h < HOSTS; h++)); do
    for ((w = 0; w < WRITERS; w++)); do writer "$h" "$w" & pids+=($!); done
done
wait "${pids[@]}"
t_check "$((HOSTS * WRITERS * EACH)) puts by $((HOSTS * WRITERS)) writers, all uploaded" test ! -s "$T_TMP/put-errors"

# Each host reads every other host's results, all hosts at once.
cat >"$T_TMP/reader.py" <<'EOF'
import os, sys, time, subprocess
mnt, me, hosts, writers, each = sys.argv[1], int(sys.argv[2]), *map(int, sys.argv[3:6])
gen = 'n=$(( ($(cksum <<<"$1" | cut -d" " -f1) % 40000) + 1000 )); yes "$1" | head -c "$n"'
keys = [f"h{h}-w{w}-r{r}" for h in range(hosts) if h != me for w in range(writers) for r in range(each)]
wants = {k: subprocess.run(["bash", "-c", gen, "-", k], capture_output=True).stdout for k in keys}
open(sys.argv[6], "w").close()          # ready: the reads start together
while not os.path.exists(sys.argv[7]):
    time.sleep(0.005)
wrong, lat, t0 = 0, [], time.monotonic()
for key in keys:
    t = time.monotonic()
    try:
        with open(f"{mnt}/{key}", "rb") as f:
            got = f.read()
    except OSError as e:
        got = repr(e).encode()
    lat.append(time.monotonic() - t)
    if got != wants[key]:
        wrong += 1
        print(f"host {me}: {key}: {len(got)} bytes, want {len(wants[key])}", file=sys.stderr)
print(wrong, len(lat), time.monotonic() - t0, " ".join(f"{x:.6f}" for x in lat))
EOF
pids=()
for ((h = 0; h < HOSTS; h++)); do
    python3 "$T_TMP/reader.py" "$T_TMP/m$h" "$h" "$HOSTS" "$WRITERS" "$EACH" "$T_TMP/ready.$h" "$T_TMP/go" \
        >"$T_TMP/read.$h" 2>>"$T_TMP/read-errors" &
    pids+=($!)
done
all_ready() { [ "$(ls "$T_TMP"/ready.* 2>/dev/null | wc -l)" -eq "$HOSTS" ]; }
t_wait_until 60 all_ready
touch "$T_TMP/go"
wait "${pids[@]}"
secs=$(awk '$3 > m {m = $3} END {printf "%d", m * 1000}' "$T_TMP"/read.*)
wrong=$(awk '{s += $1} END {print s + 0}' "$T_TMP"/read.*)
reads=$(awk '{s += $2} END {print s + 0}' "$T_TMP"/read.*)
t_eq "every host read all $((HOSTS - 1)) others' results: 0 wrong" "$wrong" 0
t_eq "  reads made" "$reads" $((HOSTS * (HOSTS - 1) * WRITERS * EACH))
[ -s "$T_TMP/read-errors" ] && head -5 "$T_TMP/read-errors"
p99=$(cut -d' ' -f4- "$T_TMP"/read.* | tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {printf "%.1f", v[int(NR * 0.99)] * 1000}')
echo "# 8 hosts: $reads first reads in ${secs} ms ($((reads * 1000 / (secs ? secs : 1))) reads/s over all hosts), open+read p99 ${p99} ms"

# A put killed in mid-upload (radosgw stopped, so it cannot finish): the
# result stays pending, sync sends it, another host reads it. Killed once it
# is observably uploading -- its result on its host and a connection of its
# own to radosgw open -- not after a fixed time a loaded machine may not
# give it.
head -c $((3 * 1024 * 1024)) /dev/urandom >"$T_TMP/killed"
rgw_stop "$(rgw_pid)"
"$TIER" "${S[0]}" put killed <"$T_TMP/killed" 2>/dev/null &
put=$!
uploading() {
    cmp -s "$T_TMP/m0/killed" "$T_TMP/killed" &&
        ss -tnp state established 2>/dev/null | grep -q "pid=$put,"
}
t_check "the put is uploading (committed on its host, connected to radosgw)" t_wait_until 60 uploading
kill -9 "$put"; wait "$put" 2>/dev/null
kill -CONT "$(rgw_pid)"
t_eq "the killed put left the result readable on its host" "$(cmp -s "$T_TMP/m0/killed" "$T_TMP/killed"; echo $?)" 0
out=
for _ in 1 2 3 4 5; do out=$("$TIER" "${S[0]}" sync 2>/dev/null) && break; sleep 0.3; done
t_eq "sync uploads it" "$out" "1 uploaded, 0 pending"
t_check "another host reads it, exact bytes" cmp -s "$T_TMP/m5/killed" "$T_TMP/killed"

# radosgw killed -9, then started again by the script: no remount needed.
content late | "$TIER" "${S[1]}" put late || t_not_ok "put late"
kill -9 "$(rgw_pid)"
t_eq "radosgw dead: a remote result is EIO" "$(m_errno open_r "$T_TMP/m2/late")" EIO
t_eq "  a local one still reads" "$(cmp -s "$T_TMP/m1/late" <(content late); echo $?)" 0
"$T_TOP/scripts/s3-server.sh" up "$OFFLOADFS_S3_DIR" >/dev/null || t_not_ok "radosgw restarted"
ok=
for _ in 1 2 3 4 5 6 7 8 9 10; do cmp -s "$T_TMP/m2/late" <(content late) && { ok=1; break; }; sleep 0.5; done
t_check "radosgw back: the remote result reads, no remount" test -n "$ok"

for ((h = 0; h < HOSTS; h++)); do
    rc=0; m_umount "$T_TMP/m$h" || rc=$?
    [ "$rc" -eq 0 ] || t_not_ok "daemon $h exits 0 (got $rc)"
done
t_ok "every daemon unmounted"
t_done
