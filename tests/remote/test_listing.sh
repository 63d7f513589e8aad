#!/bin/bash
# Remote names listed and looked up without fetching them, and new names
# seen at once (doc/remote.md, "Listings" and "Misses"). Two stores on one
# remote are two hosts: A writes through the tier, B's daemon serves.
# Real radosgw (tests/run.sh starts it), real FUSE mounts; remote requests
# counted with B's metrics (a lookup's GET, found or not, is a fetch:
# fs/counters.h).
#   ls -l of 300 remote-only names: no fetch; sizes exact (compressed ones
#   too), mtimes within the puts; again at once: no fetch; the first read
#   of a listed name: its exact bytes; its xattrs.
#   a miss is asked again once the miss time (0.2 s) has passed, and not
#   before it: a burst of lookups of missing names costs at most one
#   request per name per 0.2 s; 8 lookups of one missing name at once cost
#   one; a name put on A is readable on B (the wait printed, not judged).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../fs/mountlib.sh"
. "$(dirname "$0")/../metrics/prom.sh"
m_require_fuse
TIER=$T_BUILD/tools/tierctl
r_require_s3
command -v curl >/dev/null || { t_not_ok "curl is installed (scripts/deps.sh)"; t_done; }
metrics_valgrind
URL=s3://$OFFLOADFS_S3_BUCKET/listing-$$-$(date +%s%N)
N=300

A=$(m_store a) && B=$(m_store b) || { t_not_ok "make two stores"; t_done; }
"$TIER" "$A" remote "$URL" && "$TIER" "$B" remote "$URL" || { t_not_ok "set the remote"; t_done; }

# N results of sizes 1 .. ~60 KB, some compressible (stored compressed on
# A: the object still holds the result's bytes), four past a lookup's
# first 128 KiB.
size_of() { echo $(( ($1 * 7919) % 60000 + 1 )); }
gen() { # gen I : result I's bytes
    if [ "$1" -lt 4 ]; then yes "line $1 of a compressible result" | head -c $((300000 + $1)); return; fi
    if [ $(($1 % 3)) -eq 0 ]; then yes "r$1" | head -c "$(size_of "$1")"; return; fi
    head -c "$(size_of "$1")" /dev/urandom
}
mkdir -p "$T_TMP/want"
T0=$(date +%s)
putter() { # putter FROM STEP
    local i
    for ((i = $1; i < N; i += $2)); do
        gen "$i" >"$T_TMP/want/r$i"
        "$TIER" "$A" put "r$i" default "tool$i" <"$T_TMP/want/r$i" >/dev/null || echo "r$i" >>"$T_TMP/put-errors"
    done
}
pids=()
for w in 0 1 2 3 4 5 6 7; do putter "$w" 8 & pids+=($!); done
wait "${pids[@]}"
T1=$(date +%s)
t_check "$N puts on A, all uploaded" test ! -s "$T_TMP/put-errors"

MB=$T_TMP/mnt-b
m_mount "$B" "$MB" "${OPTS[@]}" -o metrics=127.0.0.1:0,remote_ttl=60,prefetch=0 ||
    { t_not_ok "mount B"; t_done; }
t_wait_until "$WAIT" has_url "$MB"
URL_M=$(metrics_url "$MB")
if [ -n "${OFFLOADFS_VALGRIND:-}" ]; then
    case $(readlink "/proc/$(m_pid "$MB")/exe") in *memcheck*) t_ok "the daemon runs under memcheck" ;;
    *) t_not_ok "the daemon runs under memcheck" ;; esac
fi
# fetches : B's fetches so far (each a GET the remote answered or not).
fetches() {
    curl -sf --max-time 10 "$URL_M" | awk '$1 == "offloadfs_remote_fetches_total{namespace=\"default\"}" {print $2}'
}
t_eq "fresh daemon: no fetch" "$(fetches)" 0

# ---- ls -l -------------------------------------------------------------
start=$(date +%s%N)
ls -l --time-style=+%s "$MB" >"$T_TMP/ls1" 2>"$T_TMP/ls1.err"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
t_eq "ls -l of $N remote names ($ms ms) made no fetch" "$(fetches)" 0
t_eq "  it listed them all" "$(grep -c ' r[0-9]*$' "$T_TMP/ls1")" "$N"
for ((i = 0; i < N; i++)); do echo "r$i $(stat -c %s "$T_TMP/want/r$i")"; done >"$T_TMP/sizes"
bad=$(awk -v t0="$T0" -v t1=$((T1 + 1)) 'NR == FNR {want[$1] = $2; next}
    $NF in want {n++; if ($5 != want[$NF] || $6 < t0 || $6 > t1) {
        if (bad++ < 3) print "  " $NF ": size " $5 " mtime " $6 "; want " want[$NF] > "/dev/stderr"}}
    END {print bad + 0 + (n == length(want) ? 0 : 1)}' "$T_TMP/sizes" "$T_TMP/ls1")
t_eq "  every size exact, every mtime within the puts" "$bad" 0
t_eq "  stat of a listed name: its size, no fetch" "$(stat -c %s "$MB/r1")/$(fetches)" "300001/0"
start=$(date +%s%N)
ls -l --time-style=+%s "$MB" >"$T_TMP/ls2"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
t_eq "ls -l again at once ($ms ms): no fetch" "$(fetches)" 0
t_check "  the same listing" cmp -s "$T_TMP/ls1" "$T_TMP/ls2"

# ---- the first reads ---------------------------------------------------
ino=$(stat -c %i "$MB/r1")
t_check "the first read of a listed (compressed on A) name: its exact bytes" cmp -s "$MB/r1" "$T_TMP/want/r1"
t_check "  of a small random one too" cmp -s "$MB/r5" "$T_TMP/want/r5"
f=$(fetches)
t_check "  they fetched (at least one GET each)" test "$f" -ge 2
t_eq "  the inode stayed" "$(stat -c %i "$MB/r1")" "$ino"
t_eq "  user.offload.tool of a listed name" \
    "$(getfattr --only-values -n user.offload.tool "$MB/r7" 2>/dev/null)" tool7
f=$(fetches)
ls -l "$MB" >/dev/null
t_eq "ls -l after the reads: no fetch" "$(fetches)" "$f"

# ---- misses --------------------------------------------------------------
f=$(fetches)
t_eq "a never-written name: ENOENT" "$(m_errno open_r "$MB/absent")" ENOENT
t_eq "  asked the remote once" "$(fetches)" $((f + 1))
# A burst of lookups of it: at most one request per 0.2 s of the burst.
start=$(date +%s%N)
for _ in $(seq 20); do m_errno open_r "$MB/absent" >/dev/null; done
ms=$(( ($(date +%s%N) - start) / 1000000 ))
t_check "  20 lookups more in $ms ms: at most $((ms / 200 + 1)) requests" \
    test $(( $(fetches) - f - 1 )) -le $((ms / 200 + 1))
sleep 0.25
f=$(fetches)
t_eq "  0.25 s later: ENOENT again" "$(m_errno open_r "$MB/absent")" ENOENT
t_eq "  and the remote was asked again" "$(fetches)" $((f + 1))

# Eight lookups of one missing name at once.
sleep 0.25
cat >"$T_TMP/at_once.py" <<'EOF'
import os, sys, threading, time
path, n = sys.argv[1], int(sys.argv[2])
go, errs = threading.Barrier(n), []
def one():
    go.wait()
    try:
        os.stat(path)
        errs.append("found")
    except OSError as e:
        errs.append(e.errno)
t0 = time.monotonic()
ts = [threading.Thread(target=one) for _ in range(n)]
[t.start() for t in ts]
[t.join() for t in ts]
print(int((time.monotonic() - t0) * 1000), sum(1 for e in errs if e == 2))
EOF
f=$(fetches)
read -r ms enoent <<<"$(python3 "$T_TMP/at_once.py" "$MB/absent-too" 8)"
t_eq "8 lookups of one missing name at once: 8 ENOENT" "$enoent" 8
t_check "  in $ms ms, $(( $(fetches) - f )) request(s): one per 0.2 s at most" \
    test $(( $(fetches) - f )) -le $((ms / 200 + 1))

# A name put on A after B missed it: readable on B soon after the put.
t_eq "B misses 'fresh'" "$(m_errno open_r "$MB/fresh")" ENOENT
printf 'fresh bytes\n' >"$T_TMP/fresh"
t_rc "put 'fresh' on A" 0 "$TIER" "$A" put fresh <"$T_TMP/fresh"
m_within "$WAIT" cmp -s "$MB/fresh" "$T_TMP/fresh"
t_check "B reads 'fresh' (in $M_WAITED_MS ms after the put returned)" cmp -s "$MB/fresh" "$T_TMP/fresh"

t_rc "unmount B" 0 m_umount "$MB"
t_done
