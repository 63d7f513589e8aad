#!/bin/bash
# scripts/bench_s3fs.sh -- the remote read path side by side with s3fs
# (the `s3fs` case of make bench; doc/benchmark.md, "Remote reads against s3fs").
#
# One radosgw of its own (scripts/s3-server.sh), one set of objects, two
# readers of them: host B's offloadfs daemon (a store whose remote holds the
# results, written by host A's store) and s3fs (the Debian package, 1.90,
# installed here when missing, as scripts/deps.sh installs Ceph) mounting
# BUCKET:/PREFIX/NAMESPACE, so both show the same names. s3fs runs without
# its disk cache (use_cache unset). Per round, each side gets fresh mounts
# and the kernel's page cache is dropped before every cold case; the side
# that goes first alternates between rounds. Cases, each timed whole:
#
#   cat64    first `cat` of a 64 MiB result
#   small    200 first reads (open+read+close) of 100 KB results, one process
#   par      8 readers at once (threads), 50 results of 100 KB each
#   random   2,000 random 4 KiB preads in another 64 MiB result (benchtool
#            preads); radosgw's own counters (perf dump: rgw get, get_b)
#            give the GETs it answered and the bytes it sent meanwhile
#   rss      VmRSS of the daemon (offloadfs, s3fs) right after cat64 + random,
#            and again 3 s later (offloadfs frees read windows idle for 2 s)
#   visible  a name probed (absent) on the mount, then put on host A
#            (agentlink's Python binding: the put returns once the remote
#            has it); the time from the put's return until open() of the
#            name on the mount succeeds (polled every 2 ms)
#   lscold   `ls -l` of 2,000 results of 100 KB (namespace `ls`) on a fresh mount
#   lswarm   the same `ls -l` again at once
#
# Prints one row a line, "measure|value|aim|meets", as bench_remote.sh does;
# bench.sh puts them in its second table. Log lines go to stderr. Needs root
# (mounts, drop_caches). Nothing here is a test: no timing is asserted.
#
#   BENCH_RUNS=3          rounds (medians of these)
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
B=${OFFLOADFS_BUILD:-$TOP/build}
case $B in /*) ;; *) B=$TOP/$B ;; esac
AL=$B/agentlink OFS=$B/offloadfs BT=$B/bench/benchtool
RUNS=${BENCH_RUNS:-3}
log() { echo "bench_s3fs: $*" >&2; }
for p in "$AL" "$OFS" "$BT" "$B/libagentlink.so"; do
    [ -x "$p" ] || [ -f "$p" ] || { log "$p is missing (run make)"; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { log "needs root (mounts, drop_caches)"; exit 1; }
command -v radosgw >/dev/null || { log "no radosgw (scripts/deps.sh installs it)"; exit 1; }
# s3fs: the bench's own dependency (not a build or test one), installed as
# scripts/deps.sh installs packages.
if ! command -v s3fs >/dev/null; then
    log "installing s3fs (Debian package)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends s3fs >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends s3fs >/dev/null; } ||
        { log "cannot install s3fs"; exit 1; }
fi

W=$(mktemp -d /var/tmp/offloadfs-bench-s3fs.XXXXXX)
MO=$W/m-ofs MS=$W/m-s3fs
mkdir -p "$MO" "$MS"
OPID= SPID=
cleanup() {
    umount "$MO" 2>/dev/null || true
    umount "$MS" 2>/dev/null || true
    [ -n "$OPID" ] && wait "$OPID" 2>/dev/null || true
    [ -n "$SPID" ] && wait "$SPID" 2>/dev/null || true
    scripts/s3-server.sh destroy "$W/s3" >/dev/null 2>&1 || true
    rm -rf "$W"
}
trap cleanup EXIT

tm() { # wall seconds of a command
    local s=$EPOCHREALTIME
    "$@" >/dev/null
    awk "BEGIN {print $EPOCHREALTIME - $s}"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ratio() { awk "BEGIN {printf \"%.2f\", $1 / $2}"; }
ms() { awk "BEGIN {printf \"%.4g\", $1 * 1000}"; }
meets() { awk "BEGIN {print ($1 <= $2) ? \"yes\" : \"**no**\"}"; }
drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
rss() { awk '$1 == "VmRSS:" {printf "%.1f", $2 / 1024}' "/proc/$1/status"; } # MiB

log "starting radosgw (scripts/s3-server.sh)"
eval "$(scripts/s3-server.sh up "$W/s3" 2>"$W/s3-up.log")" || { cat "$W/s3-up.log" >&2; exit 1; }
unset AWS_PROFILE AWS_DEFAULT_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL_S3
log "radosgw at $AWS_ENDPOINT_URL"
ASOK=$W/s3/run/client.rgw.offloadfs.asok
PREFIX=bench-$$
printf '%s:%s\n' "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" >"$W/passwd"
chmod 600 "$W/passwd"
for s in A B; do
    "$AL" init --store "$W/$s" --max-total-bytes 4G --max-result-bytes 64M --compression none \
        --remote "s3://$OFFLOADFS_S3_BUCKET/$PREFIX" >/dev/null
done

# The helper: puts on host A through the Python binding (one process, each
# put uploaded before it returns), and the timed readers.
cat >"$W/h.py" <<'EOF'
import os, sys, time, threading
cmd = sys.argv[1]
def store(path, ns):
    sys.path.insert(0, os.environ["AL_PY"])
    import agentlink
    return agentlink.ToolResultStore(store=path, namespace=ns)
if cmd == "put":          # put STORE NS SIZE NAME...: random bytes each
    st = store(sys.argv[2], sys.argv[3])
    size = int(sys.argv[4])
    for name in sys.argv[5:]:
        st.write(key=name, content=os.urandom(size))
elif cmd == "seq":        # seq FILE...: open+read+close each, prints seconds
    t = time.monotonic()
    for p in sys.argv[2:]:
        with open(p, "rb", buffering=0) as f:
            while f.read(1 << 20):
                pass
    print(time.monotonic() - t)
elif cmd == "par":        # par N FILE...: N threads, each a slice; prints seconds
    n, files = int(sys.argv[2]), sys.argv[3:]
    err = []
    def reader(part):
        try:
            for p in part:
                with open(p, "rb", buffering=0) as f:
                    while f.read(1 << 20):
                        pass
        except OSError as e:
            err.append(e)
    ts = [threading.Thread(target=reader, args=(files[i::n],)) for i in range(n)]
    t = time.monotonic()
    for x in ts: x.start()
    for x in ts: x.join()
    if err: sys.exit("par: %s" % err[0])
    print(time.monotonic() - t)
elif cmd == "visible":    # visible STORE NS NAME PATH: probe, put, poll; prints seconds
    st = store(sys.argv[2], sys.argv[3])
    path = sys.argv[5]
    try:
        open(path, "rb").close()
        sys.exit("visible: %s exists before the put" % path)
    except FileNotFoundError:
        pass
    st.write(key=sys.argv[4], content=os.urandom(1000))
    t = time.monotonic()
    while True:
        try:
            with open(path, "rb") as f:
                f.read()
            break
        except FileNotFoundError:
            if time.monotonic() - t > 30:
                print(30.0); sys.exit(0)
            time.sleep(0.002)
    print(time.monotonic() - t)
EOF
export AL_PY=$TOP/agentlink/python AGENTLINK_LIB=$B/libagentlink.so
H() { python3 "$W/h.py" "$@"; }

rgw_gets() { # "GETs bytes" radosgw has answered so far (perf dump), or "- -"
    ceph --admin-daemon "$ASOK" perf dump 2>/dev/null |
        python3 -c 'import json, sys; r = json.load(sys.stdin)["rgw"]; print(r["get"], r["get_b"])' 2>/dev/null ||
        echo "- -"
}

log "putting the results on host A ($RUNS rounds)"
s=$EPOCHREALTIME
H put "$W/A" ls 100000 $(seq -f 'l%04g' 0 1999)
for r in $(seq "$RUNS"); do
    H put "$W/A" default $((64 << 20)) "big$r" "rnd$r"
    H put "$W/A" default 100000 $(seq -f "s$r-%03g" 0 199) $(seq -f "p$r-%03g" 0 399)
done
log "put in $(awk "BEGIN {printf \"%.1f\", $EPOCHREALTIME - $s}") s"

mount_side() { # mount_side ofs|s3fs NS: a fresh mount; its pid in OPID / SPID
    local m
    if [ "$1" = ofs ]; then
        m=$MO
        "$OFS" -f -o "namespace=$2,prefetch=0" "$W/B" "$m" >>"$W/ofs.log" 2>&1 &
        OPID=$!
    else
        m=$MS
        s3fs "$OFFLOADFS_S3_BUCKET:/$PREFIX/$2" "$m" -f -o ro \
            -o "url=$AWS_ENDPOINT_URL,use_path_request_style,passwd_file=$W/passwd" \
            >>"$W/s3fs.log" 2>&1 & # (it logs to stdout in the foreground)
        SPID=$!
    fi
    for _ in $(seq 1000); do mountpoint -q "$m" && return 0; sleep 0.01; done
    log "$1: mount failed"; tail "$W/ofs.log" "$W/s3fs.log" >&2; exit 1
}
umount_side() {
    if [ "$1" = ofs ]; then umount "$MO"; wait "$OPID" || true; OPID=
    else umount "$MS"; wait "$SPID" || true; SPID=; fi
}

declare -A V # V[side.case] = "value value ..." (one a round)
add() { V[$1.$2]="${V[$1.$2]:-} $3"; }

round() { # round ofs|s3fs R
    local side=$1 r=$2 m=$MO pid g0 g1 b0 b1 x
    [ "$side" = s3fs ] && m=$MS
    mount_side "$side" default
    pid=$OPID; [ "$side" = s3fs ] && pid=$SPID
    drop; add "$side" cat64 "$(tm cat "$m/big$r")"
    drop; add "$side" small "$(H seq $(seq -f "$m/s$r-%03g" 0 199))"
    drop; add "$side" par "$(H par 8 $(seq -f "$m/p$r-%03g" 0 399))"
    drop
    read -r g0 b0 < <(rgw_gets)
    x=$("$BT" preads "$m/rnd$r" 2000 4096 | cut -d' ' -f1)
    read -r g1 b1 < <(rgw_gets)
    add "$side" random "$x"
    if [ "$g0" != - ]; then add "$side" gets $((g1 - g0)); add "$side" getb $((b1 - b0)); fi
    add "$side" rss "$(rss "$pid")"
    log "$side rss: $(grep -E '^Rss' "/proc/$pid/status" | tr -s ' \t\n' ' ')"
    sleep 3; add "$side" rss3 "$(rss "$pid")"
    add "$side" visible "$(H visible "$W/A" default "v$r-$side" "$m/v$r-$side")"
    umount_side "$side"
    mount_side "$side" ls
    drop
    add "$side" lscold "$(tm ls -l --color=never "$m")"
    add "$side" lswarm "$(tm ls -l --color=never "$m")"
    [ "$(ls "$m" | wc -l)" -eq 2000 ] || { log "$side: ls shows $(ls "$m" | wc -l) names, not 2000"; exit 1; }
    umount_side "$side"
}

for r in $(seq "$RUNS"); do
    if [ $((r % 2)) -eq 1 ]; then order="ofs s3fs"; else order="s3fs ofs"; fi
    for side in $order; do
        log "round $r: $side"
        round "$side" "$r"
    done
done
for k in "${!V[@]}"; do log "$k:${V[$k]}"; done

med() { median ${V[$1.$2]}; } # med SIDE CASE
# cmp CASE-TEXT CASE AIM: a row "offloadfs X ms vs s3fs Y ms: ratio R".
cmp() {
    local o s r; o=$(med ofs "$2"); s=$(med s3fs "$2"); r=$(ratio "$o" "$s")
    echo "vs s3fs: $1|$(ms "$o") ms vs $(ms "$s") ms: ratio $r|<= $3|$(meets "$r" "$3")"
}
cmp "first \`cat\` of a 64 MiB result" cat64 0.8
cmp "200 first reads of 100 KB results" small 0.8
cmp "8 readers x 50 results of 100 KB" par 0.8
cmp "\`ls -l\` of 2,000 remote results, cold (fresh mount)" lscold 0.5
cmp "the same \`ls -l\` again at once (warm)" lswarm 1.5
cmp "2,000 random 4 KiB preads in a 64 MiB result" random 2
if [ -n "${V[ofs.gets]:-}" ]; then
    echo "vs s3fs: radosgw's GETs and bytes sent during the random preads|offloadfs $(med ofs gets) GETs, $(awk "BEGIN {printf \"%.1f\", $(med ofs getb) / 1048576}") MiB; s3fs $(med s3fs gets) GETs, $(awk "BEGIN {printf \"%.1f\", $(med s3fs getb) / 1048576}") MiB|-|-"
fi
o=$(med ofs visible) s=$(med s3fs visible)
echo "vs s3fs: a result put on another host becomes readable (from the put's return)|offloadfs $(ms "$o") ms, s3fs $(ms "$s") ms|<= 250 ms (offloadfs)|$(meets "$o" 0.25)"
o=$(med ofs rss) s=$(med s3fs rss) r=$(ratio "$o" "$s")
echo "vs s3fs: daemon RSS after the 64 MiB sequential + random cases|$o MiB vs $s MiB: ratio $r|<= 1.0|$(meets "$r" 1.0)"
o=$(med ofs rss3) s=$(med s3fs rss3) r=$(ratio "$o" "$s")
echo "vs s3fs: the same RSS 3 s later (idle)|$o MiB vs $s MiB: ratio $r|-|-"
