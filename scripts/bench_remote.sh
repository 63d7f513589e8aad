#!/bin/bash
# scripts/bench_remote.sh -- the remote tier (doc/remote.md) against plain S3
# requests on the same server (make bench runs it as the "remote" case).
#
# Starts a one-node radosgw (scripts/s3-server.sh, free ports, a scratch
# directory; destroyed on exit), then measures, interleaved BENCH_RUNS times
# (which side goes first alternates), each offloadfs operation against the
# same work done with curl --aws-sigv4 (the `x-amz-content-sha256:
# UNSIGNED-PAYLOAD` header radosgw wants) on the same radosgw:
#
#   read64   first `cat` of a 64 MiB remote-only result (written by host A,
#            never read on host B) through host B's long-lived mount vs one
#            GET of the object on a kept-alive connection (curl's
#            time_total: the process start not counted); then another such
#            result through a fresh mount (the daemon's first request);
#            and the long-lived daemon's RSS right after one more such
#            read, then 3 s later (its windows freed once idle for 2 s)
#   read100k first open+read+close of a 100 KB remote-only result
#            (benchtool readfile: no process start; lookup included) vs a
#            GET on a kept-alive connection (one curl, two URLs, the second
#            timed); the second open+read of it vs the same file on tmpfs;
#            and a fresh mount's first read vs a GET by a new curl process
#   put1m    `agentlink put` of 1 MB on a store with the remote vs
#            `agentlink put` on a local-only store plus `curl -T` of the same
#            bytes (wall times of the processes, 10 puts a run, per put)
#   hosts    tests/remote/test_hosts.sh (8 stores and daemons, 32 writers,
#            672 first reads at once) vs the same 672 GETs by 8 curl
#            processes (one per host, kept-alive) at once
#
# The long-lived mount has read one remote result before (its threads
# have their connections), as a deployed daemon has; its windows, freed
# once idle for 2 s, are mapped again by the read, as on a deployed
# daemon that was idle. doc/benchmark.md ("Remote tier") says where the time goes.
#
# Prints one row a line, "measure|value|bar|meets", as bench_mcp.sh does;
# bench.sh puts them in its second table. Log lines go to stderr.
#
#   BENCH_RUNS=5          runs per measure (medians of these)
#   BENCH_REMOTE="read64 read100k put1m hosts"  what to measure
#   BENCH_HOSTS_RUNS=3    runs of the 8-host case (each ~10-20 s)
#   BENCH_RT=1            the daemons, the timed commands and radosgw, ceph-osd
#                         and ceph-mon under SCHED_FIFO (chrt -f 10)
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
B=${OFFLOADFS_BUILD:-$TOP/build}
case $B in /*) ;; *) B=$TOP/$B ;; esac
AL=$B/agentlink OFS=$B/offloadfs BT=$B/bench/benchtool
RUNS=${BENCH_RUNS:-5}
HRUNS=${BENCH_HOSTS_RUNS:-3}
WHAT=${BENCH_REMOTE:-read64 read100k put1m hosts}
RT=${BENCH_RT:+chrt -f 10}
for p in "$AL" "$OFS" "$BT" "$B/tools/tierctl"; do
    [ -x "$p" ] || { echo "bench_remote: $p is missing (run make)" >&2; exit 1; }
done
command -v radosgw >/dev/null || { echo "bench_remote: no radosgw (scripts/deps.sh installs it)" >&2; exit 1; }
W=$(mktemp -d /var/tmp/offloadfs-bench-remote.XXXXXX)
MNT=$W/mnt TMPFS=$W/tmpfs DAEMON=
mkdir -p "$MNT" "$TMPFS"
mount -t tmpfs -o size=256M tmpfs "$TMPFS"
cleanup() {
    fusermount3 -u "$MNT" 2>/dev/null || true
    fusermount3 -u "$W/fresh" 2>/dev/null || true
    [ -n "$DAEMON" ] && wait "$DAEMON" 2>/dev/null || true
    [ -n "${FDAEMON:-}" ] && wait "$FDAEMON" 2>/dev/null || true
    umount "$TMPFS" 2>/dev/null || true
    scripts/s3-server.sh destroy "$W/s3" >/dev/null 2>&1 || true
    rm -rf "$W"
}
trap cleanup EXIT

log() { echo "bench_remote: $*" >&2; }
tm() { # wall seconds of a command
    local s=$EPOCHREALTIME
    $RT "$@" >/dev/null
    awk "BEGIN {print $EPOCHREALTIME - $s}"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ratio() { awk "BEGIN {printf \"%.2f\", $1 / $2}"; }
ms() { awk "BEGIN {printf \"%.3g\", $1 * 1000}"; }
meets() { awk "BEGIN {print ($1 <= $2) ? \"yes\" : \"**no**\"}"; }
row() { echo "$1|$2|$3|$4"; log "$1: $2"; }
# cmp_row WHAT OFS PLAIN MAX: "offloadfs X ms vs plain Y ms: ratio R".
cmp_row() {
    local r; r=$(ratio "$2" "$3")
    if [ "$4" = - ]; then row "$1" "$(ms "$2") ms vs $(ms "$3") ms: ratio $r" - -
    else row "$1" "$(ms "$2") ms vs $(ms "$3") ms: ratio $r" "<= $4" "$(meets "$r" "$4")"; fi
}

log "starting radosgw (scripts/s3-server.sh)"
s3start=$EPOCHREALTIME
eval "$(scripts/s3-server.sh up "$W/s3" 2>"$W/s3-up.log")" || { cat "$W/s3-up.log" >&2; exit 1; }
unset AWS_PROFILE AWS_DEFAULT_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL_S3
log "radosgw at $AWS_ENDPOINT_URL in $(awk "BEGIN {printf \"%.1f\", $EPOCHREALTIME - $s3start}") s"
if [ -n "$RT" ]; then # the server's threads too: both sides wait for it alike
    for d in mon osd rgw; do chrt -a -f -p 10 "$(scripts/s3-server.sh pid "$d" "$W/s3")" >/dev/null; done
fi
PREFIX=bench-$$
URL=s3://$OFFLOADFS_S3_BUCKET/$PREFIX
OBJ=$AWS_ENDPOINT_URL/$OFFLOADFS_S3_BUCKET/$PREFIX # + /NS/KEY
# curl's options: SigV4 with the header radosgw wants; the keys in a file,
# not on the command line.
printf 'user = "%s:%s"\n' "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" >"$W/curl.conf"
chmod 600 "$W/curl.conf"
s3curl() {
    curl -sS --fail -K "$W/curl.conf" --aws-sigv4 "aws:amz:$AWS_REGION:s3" \
        -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"
}

# Host A writes through the tier, host B only reads (its own store, the
# same remote); L has no remote (the local half of a put's baseline).
for s in A B; do
    "$AL" init --store "$W/$s" --max-total-bytes 4G --max-result-bytes 64M --compression none \
        --remote "$URL" >/dev/null
done
"$AL" init --store "$W/L" --max-total-bytes 4G --max-result-bytes 64M --compression none >/dev/null

# Host B's daemon: MNT stays mounted for the whole run (a long-lived daemon,
# as deployed: its connections are open), FRESH is
# mounted for one read and unmounted (the first request of a new daemon).
FRESH=$W/fresh FDAEMON=
mkdir -p "$FRESH"
mount_b() { # mount_b DIR: host B's daemon on DIR; its pid in BPID
    $RT "$OFS" -f -o "prefetch=0" "$W/B" "$1" 2>>"$W/daemon.log" &
    BPID=$!
    for _ in $(seq 500); do mountpoint -q "$1" && return 0; sleep 0.01; done
    log "mount failed"; cat "$W/daemon.log" >&2; exit 1
}
# The first GET of each curl below pays its connection: -w's time_total of
# the timed one (the second, on the kept-alive connection) is printed.
get2() { # get2 WARM_URL URL
    $RT curl -sS --fail -K "$W/curl.conf" --aws-sigv4 "aws:amz:$AWS_REGION:s3" \
        -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' -o /dev/null -o /dev/null \
        -w '%{time_total} %{num_connects}\n' "$1" "$2" |
        awk 'NR == 2 { if ($2 != 0) print "bench_remote: the second GET did not reuse the connection" > "/dev/stderr"; print $1 }'
}
get1() { # get1 URL: one GET in a new curl process (a new connection)
    $RT curl -sS --fail -K "$W/curl.conf" --aws-sigv4 "aws:amz:$AWS_REGION:s3" \
        -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' -o /dev/null -w '%{time_total}' "$1"
}
start_b() {
    mount_b "$MNT"; DAEMON=$BPID
    head -c 100000 /dev/urandom | "$AL" put --store "$W/A" warm >/dev/null
    cat "$MNT/warm" >/dev/null # the daemon has served a remote result
}

# ---- 64 MiB, first read ---------------------------------------------------
# Per run: one result read on the long-lived mount, another on a fresh one;
# each first read of its name on host B (nothing cached).
read64() {
    local o=() f=() p=() r
    head -c $((64 << 20)) /dev/urandom >"$W/d64"
    for r in $(seq "$RUNS"); do
        "$AL" put --store "$W/A" "big$r" --file "$W/d64" >/dev/null
        "$AL" put --store "$W/A" "bigf$r" --file "$W/d64" >/dev/null
    done
    for r in $(seq "$RUNS"); do
        if [ $((r % 2)) -eq 1 ]; then
            o+=("$(tm cat "$MNT/big$r")"); p+=("$(get2 "$OBJ/default/warm" "$OBJ/default/big$r")")
        else
            p+=("$(get2 "$OBJ/default/warm" "$OBJ/default/big$r")"); o+=("$(tm cat "$MNT/big$r")")
        fi
        mount_b "$FRESH"; FDAEMON=$BPID
        f+=("$(tm cat "$FRESH/bigf$r")")
        cmp -s "$FRESH/bigf$r" "$W/d64" || { log "bigf$r: wrong bytes through the mount"; exit 1; }
        fusermount3 -u "$FRESH"; wait "$FDAEMON"; FDAEMON=
        cmp -s "$MNT/big$r" "$W/d64" || { log "big$r: wrong bytes through the mount"; exit 1; }
    done
    log "read64: offloadfs ${o[*]}; fresh mount ${f[*]}; GET ${p[*]}"
    cmp_row "remote tier: first \`cat\` of a 64 MiB remote-only result through the mount vs one GET (curl, kept-alive)" \
        "$(median "${o[@]}")" "$(median "${p[@]}")" 1.5
    cmp_row "remote tier: the same through a fresh mount (the daemon's first request: connection, windows allocated) vs the same GET" \
        "$(median "${f[@]}")" "$(median "${p[@]}")" -
    # The long-lived daemon's memory: right after one more 64 MiB first
    # read, then once its windows have been idle (fs/window.h,
    # OFS_RWIN_IDLE_MS = 2 s; the watcher sweeps every 20 ms).
    "$AL" put --store "$W/A" bigm --file "$W/d64" >/dev/null
    cat "$MNT/bigm" >/dev/null
    local busy idle
    busy=$(rss "$DAEMON"); sleep 3; idle=$(rss "$DAEMON")
    row "remote tier: the daemon's RSS right after a 64 MiB sequential read, then 3 s later (windows freed after 2 s idle)" \
        "$busy MiB, then $idle MiB" - -
    rm -f "$W/d64"
}
rss() { awk '$1 == "VmRSS:" {printf "%.1f", $2 / 1024}' "/proc/$1/status"; } # rss PID: VmRSS in MiB

# ---- 100 KB, first and second read ------------------------------------------
read100k() {
    local o=() o2=() f=() p=() p1=() t=() r
    head -c 100000 /dev/urandom >"$W/d100k"
    cp "$W/d100k" "$TMPFS/small"
    for r in $(seq "$RUNS"); do
        "$AL" put --store "$W/A" "small$r" --file "$W/d100k" >/dev/null
        "$AL" put --store "$W/A" "smallf$r" --file "$W/d100k" >/dev/null
    done
    for r in $(seq "$RUNS"); do
        if [ $((r % 2)) -eq 1 ]; then
            o+=("$($RT "$BT" readfile "$MNT/small$r")"); p+=("$(get2 "$OBJ/default/warm" "$OBJ/default/small$r")")
        else
            p+=("$(get2 "$OBJ/default/warm" "$OBJ/default/small$r")"); o+=("$($RT "$BT" readfile "$MNT/small$r")")
        fi
        o2+=("$($RT "$BT" readfile "$MNT/small$r")")
        t+=("$($RT "$BT" readfile "$TMPFS/small")")
        p1+=("$(get1 "$OBJ/default/small$r")")
        mount_b "$FRESH"; FDAEMON=$BPID
        f+=("$($RT "$BT" readfile "$FRESH/smallf$r")")
        cmp -s "$FRESH/smallf$r" "$W/d100k" || { log "smallf$r: wrong bytes through the mount"; exit 1; }
        fusermount3 -u "$FRESH"; wait "$FDAEMON"; FDAEMON=
        cmp -s "$MNT/small$r" "$W/d100k" || { log "small$r: wrong bytes through the mount"; exit 1; }
    done
    log "read100k: first ${o[*]}; GET ${p[*]}; second ${o2[*]}; tmpfs ${t[*]}; fresh mount ${f[*]}; GET, new connection ${p1[*]}"
    cmp_row "remote tier: first open+read of a 100 KB remote-only result through the mount (lookup included) vs one GET on a kept-alive connection (curl)" \
        "$(median "${o[@]}")" "$(median "${p[@]}")" 2
    cmp_row "remote tier: second open+read of it (page cache) vs the same file on tmpfs" \
        "$(median "${o2[@]}")" "$(median "${t[@]}")" 1.5
    cmp_row "remote tier: its first open+read through a fresh mount vs one GET on a new connection (a curl process)" \
        "$(median "${f[@]}")" "$(median "${p1[@]}")" -
    rm -f "$W/d100k" "$TMPFS/small"
}

# ---- 1 MB put -----------------------------------------------------------------
put1m() {
    local o=() l=() p=() r n=10
    head -c 1000000 /dev/urandom >"$W/d1m"
    putloop() { # putloop STORE R: N puts, each process under $RT
        for i in $(seq $n); do
            $RT "$AL" put --store "$1" "p$2-$i" --file "$W/d1m" >/dev/null || { log "put failed"; exit 1; }
        done
    }
    curlloop() { # curlloop R: N PUTs, each a curl process under $RT
        for i in $(seq $n); do
            $RT curl -sS --fail -K "$W/curl.conf" --aws-sigv4 "aws:amz:$AWS_REGION:s3" \
                -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' -o /dev/null -T "$W/d1m" "$OBJ/plain/p$1-$i" ||
                { log "curl PUT failed"; exit 1; }
        done
    }
    tl() { # wall seconds of a loop function (its commands run under $RT themselves)
        local s=$EPOCHREALTIME
        "$@" >/dev/null
        awk "BEGIN {print $EPOCHREALTIME - $s}"
    }
    for r in $(seq "$RUNS"); do
        if [ $((r % 2)) -eq 1 ]; then
            o+=("$(tl putloop "$W/A" "$r")")
            l+=("$(tl putloop "$W/L" "$r")"); p+=("$(tl curlloop "$r")")
        else
            l+=("$(tl putloop "$W/L" "$r")"); p+=("$(tl curlloop "$r")")
            o+=("$(tl putloop "$W/A" "$r")")
        fi
    done
    s3curl "$OBJ/default/p1-1" | cmp -s - "$W/d1m" || { log "put1m: the remote does not hold the put's bytes"; exit 1; }
    local mo ml mp
    mo=$(awk "BEGIN {print $(median "${o[@]}") / $n}")
    ml=$(awk "BEGIN {print $(median "${l[@]}") / $n}")
    mp=$(awk "BEGIN {print $(median "${p[@]}") / $n}")
    log "put1m (s per $n): remote store ${o[*]}; local ${l[*]}; curl PUT ${p[*]}"
    local r2; r2=$(ratio "$mo" "$(awk "BEGIN {print $ml + $mp}")")
    row "remote tier: \`agentlink put\` of 1 MB on a store with a remote vs a local-only \`agentlink put\` + a PUT of the same bytes (curl -T), per put, $n a run" \
        "$(ms "$mo") ms vs $(ms "$ml") + $(ms "$mp") ms: ratio $r2" "<= 1.3" "$(meets "$r2" 1.3)"
    rm -f "$W/d1m"
}

# ---- 8 hosts --------------------------------------------------------------------
# tests/remote/test_hosts.sh against this radosgw (it also kills and restarts
# radosgw at its end), then the same 672 GETs by 8 curl processes at once.
hosts() {
    local rps=() p99=() crps=() r line out
    for r in $(seq "$HRUNS"); do
        out=$(OFFLOADFS_BUILD=$B bash tests/remote/test_hosts.sh 2>&1) || true
        if grep -q '^not ok' <<<"$out" || ! line=$(grep '^# 8 hosts:' <<<"$out"); then
            echo "$out" >&2; row "remote tier: 8 hosts (tests/remote/test_hosts.sh)" "failed (its output is above)" - "**no**"
            return 0
        fi
        log "hosts: $line"
        rps+=("$(sed -n 's/.*(\([0-9]*\) reads\/s.*/\1/p' <<<"$line")")
        p99+=("$(sed -n 's/.*p99 \([0-9.]*\) ms.*/\1/p' <<<"$line")")
        crps+=("$(curl_hosts "$r")")
    done
    row "remote tier: 8 hosts (8 stores, 8 daemons, 32 writers, 96 results of 1-40 KB), each host reads the other 84 at once: first reads/s over all hosts; open+read p99" \
        "$(median "${rps[@]}") reads/s; p99 $(median "${p99[@]}") ms (median of $HRUNS runs)" - -
    row "remote tier: the same 672 reads as GETs by 8 curl processes at once (one per host, kept-alive)" \
        "$(median "${crps[@]}") reads/s" - -
}
curl_hosts() { # curl_hosts R: 96 objects of 1-40 KB, 8 readers of 84 each at once; prints reads/s
    local h k urls pids=() t0
    for k in $(seq 0 95); do # (radosgw wants a length: no chunked PUT from a pipe)
        head -c $((1000 + (k * 4111) % 40000)) /dev/urandom >"$W/hk"
        s3curl -o /dev/null -T "$W/hk" "$OBJ/hosts$1/k$k" || { log "curl PUT failed"; exit 1; }
    done
    t0=$EPOCHREALTIME
    for h in $(seq 0 7); do
        urls=()
        for k in $(seq 0 95); do [ $((k / 12)) -ne "$h" ] && urls+=("$OBJ/hosts$1/k$k" -o /dev/null); done
        $RT curl -sS --fail -K "$W/curl.conf" --aws-sigv4 "aws:amz:$AWS_REGION:s3" \
            -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "${urls[@]}" &
        pids+=($!)
    done
    for h in "${pids[@]}"; do wait "$h" || { log "a curl reader failed"; exit 1; }; done
    awk "BEGIN {printf \"%d\", 672 / ($EPOCHREALTIME - $t0)}"
}

case " $WHAT " in *" read64 "* | *" read100k "*) start_b ;; esac
for c in $WHAT; do
    log "remote: $c"
    "$c"
done
