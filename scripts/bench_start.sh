#!/bin/bash
# scripts/bench_start.sh -- what starting `agentlink` costs (make bench runs
# it as the "start" case): the CLI runs once per tool call (agentlink
# offload) or file operation (the deepagents backend), so its start is on
# the hot path of every integration.
#
# Interleaved BENCH_RUNS times (which side goes first alternates), each a
# loop of 200 processes started by bash, the same way on both sides:
#
#   version  200 `agentlink --version` vs 200 `/bin/true`
#   put      200 `echo result N | agentlink put wN` on a store without a
#            remote vs 200 `echo result N | cat > tmpfs/wN` (the bar: <= 2x)
#   remote   the same 200 puts on a store with a remote (a radosgw of its
#            own, scripts/s3-server.sh: each put uploads before it returns)
#            vs the same 200 writes to tmpfs, and vs the puts without remote
#
# A store without a remote loads no HTTP or TLS library (libcurl is
# dlopen()ed when a remote is first used: remote/curl_load.h); the rows
# say how many shared libraries each `agentlink` process mapped.
#
# Prints one row a line, "measure|value|bar|meets", as bench_remote.sh does
# (bench.sh puts them in its second table); --table prints them as a
# markdown table instead. Log lines go to stderr. Needs root (tmpfs).
#
#   BENCH_RUNS=5                      runs per measure (medians of these)
#   BENCH_START="version put remote"  what to measure ("remote" needs radosgw)
#   BENCH_RT=1                        the timed loops (and radosgw) under
#                                     SCHED_FIFO (chrt -f 10)
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
B=${OFFLOADFS_BUILD:-$TOP/build}
case $B in /*) ;; *) B=$TOP/$B ;; esac
AL=$B/agentlink
RUNS=${BENCH_RUNS:-5}
WHAT=${BENCH_START:-version put remote}
RT=${BENCH_RT:+chrt -f 10}
N=200
TABLE=
[ "${1:-}" = --table ] && TABLE=1
[ -x "$AL" ] || { echo "bench_start: $AL is missing (run make)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "bench_start: needs root (tmpfs)" >&2; exit 1; }
W=$(mktemp -d /var/tmp/offloadfs-bench-start.XXXXXX)
TMPFS=$W/tmpfs S3=
mkdir -p "$TMPFS"
mount -t tmpfs -o size=64M tmpfs "$TMPFS"
cleanup() {
    umount "$TMPFS" 2>/dev/null || true
    [ -n "$S3" ] && scripts/s3-server.sh destroy "$S3" >/dev/null 2>&1 || true
    rm -rf "$W"
}
trap cleanup EXIT

log() { echo "bench_start: $*" >&2; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ratio() { awk "BEGIN {printf \"%.2f\", $1 / $2}"; }
each_ms() { awk "BEGIN {printf \"%.3g\", $1 * 1000 / $N}"; } # a loop's seconds -> ms per process
meets() { awk "BEGIN {print ($1 <= $2) ? \"yes\" : \"**no**\"}"; }
ROWS=()
row() { ROWS+=("$1|$2|$3|$4"); log "$1: $2"; }
# cmp_row WHAT A B MAX: "A ms vs B ms a process: ratio R" from two loop times.
cmp_row() {
    local r; r=$(ratio "$2" "$3")
    if [ "$4" = - ]; then row "$1" "$(each_ms "$2") ms vs $(each_ms "$3") ms a process: ratio $r" - -
    else row "$1" "$(each_ms "$2") ms vs $(each_ms "$3") ms a process: ratio $r" "<= $4" "$(meets "$r" "$4")"; fi
}

# loop SCRIPT: wall seconds of `bash -c SCRIPT` (the loop of N processes);
# a loop that fails leaves $W/failed (checked by ok_so_far: a put that did
# not store its result must not pass for a fast one).
loop() {
    local s=$EPOCHREALTIME
    $RT bash -c "$1" >/dev/null || echo "$1" >"$W/failed"
    awk "BEGIN {print $EPOCHREALTIME - $s}"
}
ok_so_far() { [ ! -e "$W/failed" ] || { log "failed: $(cat "$W/failed")"; exit 1; }; }
V_AL="for i in \$(seq $N); do '$AL' --version; done"
V_TRUE="for i in \$(seq $N); do /bin/true; done"
p_al() { echo "for i in \$(seq $N); do echo \"result \$i\" | '$AL' put --store '$1' w\$i || exit 1; done"; }
P_TMPFS="for i in \$(seq $N); do echo \"result \$i\" | cat > '$TMPFS/w'\$i || exit 1; done"

# libs_of CMD...: how many shared libraries CMD's process loaded besides
# ld.so (LD_DEBUG=libs), and whether libcurl was among them. (No '|' in
# a measure's text: it separates the fields of a row.)
libs_of() {
    local n
    rm -f "$W/ld".*
    LD_DEBUG=libs LD_DEBUG_OUTPUT=$W/ld "$@" >/dev/null 2>&1 </dev/null || true
    n=$(cat "$W/ld".* | grep -c "calling init: " || true)
    if cat "$W/ld".* | grep -q "calling init: .*libcurl"; then echo "$n, libcurl among them"
    else echo "$n, no libcurl"; fi
}

version() {
    local a=() t=() r
    for r in $(seq "$RUNS"); do
        if [ $((r % 2)) -eq 1 ]; then a+=("$(loop "$V_AL")"); t+=("$(loop "$V_TRUE")")
        else t+=("$(loop "$V_TRUE")"); a+=("$(loop "$V_AL")"); fi
    done
    ok_so_far
    log "version: agentlink ${a[*]}; /bin/true ${t[*]}"
    cmp_row "start: $N \`agentlink --version\` vs $N \`/bin/true\` (shared libraries loaded: $(libs_of "$AL" --version))" \
        "$(median "${a[@]}")" "$(median "${t[@]}")" -
}

new_store() { # new_store DIR [URL]
    rm -rf "$1"
    "$AL" init --store "$1" ${2:+--remote "$2"} >/dev/null
}

put() {
    local a=() t=() r
    for r in $(seq "$RUNS"); do
        new_store "$W/L"; rm -f "$TMPFS"/w*
        if [ $((r % 2)) -eq 1 ]; then a+=("$(loop "$(p_al "$W/L")")"); t+=("$(loop "$P_TMPFS")")
        else t+=("$(loop "$P_TMPFS")"); a+=("$(loop "$(p_al "$W/L")")"); fi
    done
    ok_so_far
    PUT_LOCAL=$(median "${a[@]}")
    log "put: agentlink ${a[*]}; tmpfs ${t[*]}"
    cmp_row "start: $N \`agentlink put wN\` (stdin: \`result N\`), store without a remote, vs $N \`cat > tmpfs/wN\` (the same stdin) (libraries: $(libs_of "$AL" put --store "$W/L" x))" \
        "$PUT_LOCAL" "$(median "${t[@]}")" 2
}

remote() {
    local a=() t=() r url
    command -v radosgw >/dev/null || { log "no radosgw (scripts/deps.sh installs it): remote skipped"; return 0; }
    S3=$W/s3
    log "starting radosgw (scripts/s3-server.sh)"
    eval "$(scripts/s3-server.sh up "$S3" 2>"$W/s3-up.log")" || { cat "$W/s3-up.log" >&2; exit 1; }
    unset AWS_PROFILE AWS_DEFAULT_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL_S3
    if [ -n "$RT" ]; then
        for d in mon osd rgw; do chrt -a -f -p 10 "$(scripts/s3-server.sh pid "$d" "$S3")" >/dev/null; done
    fi
    url=s3://$OFFLOADFS_S3_BUCKET/bench-start-$$
    for r in $(seq "$RUNS"); do
        new_store "$W/R" "$url"; rm -f "$TMPFS"/w*
        if [ $((r % 2)) -eq 1 ]; then a+=("$(loop "$(p_al "$W/R")")"); t+=("$(loop "$P_TMPFS")")
        else t+=("$(loop "$P_TMPFS")"); a+=("$(loop "$(p_al "$W/R")")"); fi
    done
    ok_so_far
    log "remote: agentlink ${a[*]}; tmpfs ${t[*]}"
    cmp_row "start: the same $N puts on a store with a remote (each uploads to radosgw) vs $N writes to tmpfs (libraries: $(libs_of "$AL" put --store "$W/R" x))" \
        "$(median "${a[@]}")" "$(median "${t[@]}")" -
    [ -n "${PUT_LOCAL:-}" ] && cmp_row "start: $N puts with a remote vs $N puts without" "$(median "${a[@]}")" "$PUT_LOCAL" -
    return 0
}

PUT_LOCAL=
for w in $WHAT; do "$w"; done
if [ -n "$TABLE" ]; then
    echo "| measure | value | bar | meets |"
    echo "| --- | --- | --- | --- |"
    printf '%s\n' "${ROWS[@]}" | awk -F'|' '{printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4}'
else
    printf '%s\n' "${ROWS[@]}"
fi
