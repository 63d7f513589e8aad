#!/bin/bash
# scripts/bench_uploads.sh -- uploads in parallel (doc/remote.md, "Threads and
# processes"): writes/s of 8 Python threads on one ToolResultStore, and of 8
# threads with one ToolResultStore each, against 1 thread, on a store whose
# remote is a radosgw of its own (scripts/s3-server.sh, destroyed on exit)
# behind tests/tools/latency_relay.py, which delays each request 50 ms, as
# a remote across a network would: what threads gain when their uploads
# overlap instead of queueing (make bench runs it as the "uploads" case).
#
# Each round writes BENCH_UPLOAD_N results of 8 KiB per thread in each
# setting, interleaved (1 thread, 8 threads on one handle, 8 handles), on
# a fresh prefix; the ratios are of the medians of BENCH_RUNS rounds.
#
# Prints one row a line, "measure|value|bar|meets", as bench_remote.sh does.
#
#   BENCH_RUNS=5          rounds
#   BENCH_UPLOAD_N=16     writes per thread per round
#   BENCH_DELAY_MS=50     the relay's added latency per request
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
B=${OFFLOADFS_BUILD:-$TOP/build}
case $B in /*) ;; *) B=$TOP/$B ;; esac
RUNS=${BENCH_RUNS:-5}
N=${BENCH_UPLOAD_N:-16}
DELAY=${BENCH_DELAY_MS:-50}
[ -e "$B/libagentlink.so" ] || { echo "bench_uploads: $B/libagentlink.so is missing (run make)" >&2; exit 1; }
command -v radosgw >/dev/null || { echo "bench_uploads: no radosgw (scripts/deps.sh installs it)" >&2; exit 1; }
W=$(mktemp -d /var/tmp/offloadfs-bench-uploads.XXXXXX)
RELAY=
cleanup() {
    [ -n "$RELAY" ] && kill "$RELAY" 2>/dev/null && wait "$RELAY" 2>/dev/null || true
    scripts/s3-server.sh destroy "$W/s3" >/dev/null 2>&1 || true
    rm -rf "$W"
}
trap cleanup EXIT
log() { echo "bench_uploads: $*" >&2; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ratio() { awk "BEGIN {printf \"%.2f\", $1 / $2}"; }
atleast() { awk "BEGIN {print ($1 >= $2) ? \"yes\" : \"**no**\"}"; }

log "starting radosgw (scripts/s3-server.sh)"
eval "$(scripts/s3-server.sh up "$W/s3" 2>"$W/s3-up.log")" || { cat "$W/s3-up.log" >&2; exit 1; }
unset AWS_PROFILE AWS_DEFAULT_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL_S3
mkdir "$W/relay"
python3 tests/tools/latency_relay.py "$W/relay" "${AWS_ENDPOINT_URL#*//}" --delay-ms "$DELAY" &
RELAY=$!
for _ in $(seq 500); do [ -s "$W/relay/port" ] && break; sleep 0.01; done
[ -s "$W/relay/port" ] || { log "the relay did not start"; exit 1; }
export AWS_ENDPOINT_URL=http://127.0.0.1:$(cat "$W/relay/port")
log "radosgw behind a relay adding $DELAY ms a request at $AWS_ENDPOINT_URL"

cat >"$W/writers.py" <<'PY'
"""writers.py STORE THREADS HANDLES N: THREADS threads write N results of
8 KiB each (HANDLES: 1, one ToolResultStore shared; else one each); prints
writes/s, or fails when any write was left pending."""
import sys, threading, time, warnings
sys.path.insert(0, "agentlink/python")
import agentlink
store, threads, handles, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
stores = [agentlink.ToolResultStore(store=store) for _ in range(handles)]
go = threading.Barrier(threads + 1)
def writer(i):
    st = stores[i % handles]
    go.wait()
    for j in range(n):
        st.write(key="w%d_%d" % (i, j), content=b"x" * 8192)
ts = [threading.Thread(target=writer, args=(i,)) for i in range(threads)]
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    for t in ts:
        t.start()
    go.wait()
    t0 = time.perf_counter()
    for t in ts:
        t.join()
    dt = time.perf_counter() - t0
if w:
    sys.exit("writers.py: %d writes left pending: %s" % (len(w), w[0].message))
print("%.2f" % (threads * n / dt))
PY

one=() shared=() own=()
for r in $(seq "$RUNS"); do
    for how in one shared own; do
        s=$W/s-$r-$how
        "$B/agentlink" --store "$s" init --remote "s3://$OFFLOADFS_S3_BUCKET/up-$$-$r-$how" >/dev/null
        case $how in
        one) one+=("$(AGENTLINK_LIB=$B/libagentlink.so python3 "$W/writers.py" "$s" 1 1 "$N")") ;;
        shared) shared+=("$(AGENTLINK_LIB=$B/libagentlink.so python3 "$W/writers.py" "$s" 8 1 "$N")") ;;
        own) own+=("$(AGENTLINK_LIB=$B/libagentlink.so python3 "$W/writers.py" "$s" 8 8 "$N")") ;;
        esac
        rm -rf "$s"
    done
    log "round $r: 1 thread ${one[-1]}/s, 8 threads one handle ${shared[-1]}/s, 8 handles ${own[-1]}/s"
done
m1=$(median "${one[@]}") ms=$(median "${shared[@]}") mo=$(median "${own[@]}")
r1=$(ratio "$ms" "$m1") r2=$(ratio "$mo" "$m1")
echo "writes/s with a remote $DELAY ms away (relay): 8 threads on one handle vs 1 thread (medians $ms/s vs $m1/s, $RUNS rounds of $N writes of 8 KiB a thread)|$r1|>= 5|$(atleast "$r1" 5)"
echo "writes/s with a remote $DELAY ms away (relay): 8 threads with a handle each vs 1 thread (medians $mo/s vs $m1/s)|$r2|>= 5|$(atleast "$r2" 5)"
