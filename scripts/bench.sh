#!/bin/bash
# scripts/bench.sh -- offloadfs side by side with plain files (make bench).
#
# Prepares the same data in an offloadfs store (mounted), in a directory on
# tmpfs and in a directory on the root disk, then measures each case
# interleaved (A B C A B C ...) BENCH_RUNS times (default 5) and reports the
# median and the ratio offloadfs / plain files. Writes the table to
# doc/benchmark.md (BENCH_OUT to change). Needs root (tmpfs, mounts).
# Nothing here is a test: no timing is asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
B=${OFFLOADFS_BUILD:-$TOP/build}
AL=$B/agentlink OFS=$B/offloadfs BT=$B/bench/benchtool
RUNS=${BENCH_RUNS:-5}
OUT=${BENCH_OUT:-$TOP/doc/benchmark.md}
W=$(mktemp -d /var/tmp/offloadfs-bench.XXXXXX)
TMPFS=$W/tmpfs DISK=$W/disk MNT=$W/mnt
ROWS=()
mkdir -p "$TMPFS" "$DISK" "$MNT"
mount -t tmpfs -o size=3G tmpfs "$TMPFS"
DAEMON=
cleanup() {
    fusermount3 -u "$MNT" 2>/dev/null || true
    [ -n "$DAEMON" ] && wait "$DAEMON" 2>/dev/null || true
    umount "$TMPFS" 2>/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT

log() { echo "bench: $*" >&2; }

# Wall time of a command in seconds (bash's microsecond clock).
tm() {
    local s=$EPOCHREALTIME
    "$@" >/dev/null
    awk "BEGIN {print $EPOCHREALTIME - $s}"
}

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ratio() { awk "BEGIN {printf \"%.2f\", $1 / $2}"; }
calc() { awk "BEGIN {print $*}"; }
fmt() { printf '%.4g' "$1"; }

# row CASE UNIT OFS TMPFS DISK BAR : one table row, ratios against both.
row() {
    ROWS+=("| $1 | $2 | $(fmt "$3") | $(fmt "$4") | $(fmt "$5") | $(ratio "$3" "$4") | $(ratio "$3" "$5") | $6 |")
    log "$1: offloadfs $3, tmpfs $4, disk $5 ($2)"
}

mount_store() { # mount_store STORE [NS]
    "$OFS" -f -o "namespace=${2:-default}" "$1" "$MNT" 2>"$W/daemon.log" &
    DAEMON=$!
    for _ in $(seq 500); do mountpoint -q "$MNT" && return 0; sleep 0.01; done
    log "mount failed"; cat "$W/daemon.log" >&2; exit 1
}
umount_store() {
    fusermount3 -u "$MNT"
    wait "$DAEMON"
    DAEMON=
}

new_store() { # new_store NAME: an empty store with a bound that never evicts
    rm -rf "$W/$1"
    "$AL" init --store "$W/$1" --max-total-bytes 16G --max-result-bytes 64M >/dev/null
    echo "$W/$1"
}

# ---- 1. cat of a 64 MiB result ------------------------------------------
case_cat() {
    local S f1o=() f2o=() f1t=() f2t=() f1d=() f2d=()
    head -c $((64 << 20)) /dev/urandom >"$W/data64"
    S=$(new_store cat)
    mount_store "$S"
    for r in $(seq "$RUNS"); do
        "$AL" put --store "$S" "big$r" --file "$W/data64" >/dev/null
        sleep 0.3 # the daemon's change watcher (the contract allows 1 s)
        f1o+=("$(tm cat "$MNT/big$r")"); f2o+=("$(tm cat "$MNT/big$r")")
        cat "$W/data64" >"$TMPFS/big$r"
        f1t+=("$(tm cat "$TMPFS/big$r")"); f2t+=("$(tm cat "$TMPFS/big$r")")
        cat "$W/data64" >"$DISK/big$r"
        f1d+=("$(tm cat "$DISK/big$r")"); f2d+=("$(tm cat "$DISK/big$r")")
        rm -f "$TMPFS/big$r"
    done
    umount_store
    row "cat 64 MiB, first read" s "$(median "${f1o[@]}")" "$(median "${f1t[@]}")" "$(median "${f1d[@]}")" "<= 2.0"
    row "cat 64 MiB, second read" s "$(median "${f2o[@]}")" "$(median "${f2t[@]}")" "$(median "${f2d[@]}")" "<= 1.1"
    rm -f "$DISK"/big* "$W/data64"
}

# ---- 2. 10,000 results of 4 KiB: open+read+close -----------------------
case_small() {
    local S p1o=() p2o=() p1t=() p2t=() p1d=() p2d=()
    S=$(new_store small)
    head -c 4096 /dev/urandom >"$W/f4k"
    for i in $(seq -f '%07g' 0 9999); do
        cp "$W/f4k" "$TMPFS/f$i"; cp "$W/f4k" "$DISK/f$i"
    done
    "$BT" fill "$S" 10000 4096 >/dev/null
    for r in $(seq "$RUNS"); do
        mount_store "$S"
        p1o+=("$("$BT" openread "$MNT" 10000)"); p2o+=("$("$BT" openread "$MNT" 10000)")
        umount_store
        p1t+=("$("$BT" openread "$TMPFS" 10000)"); p2t+=("$("$BT" openread "$TMPFS" 10000)")
        p1d+=("$("$BT" openread "$DISK" 10000)"); p2d+=("$("$BT" openread "$DISK" 10000)")
    done
    row "10,000 x 4 KiB open+read+close, first pass" s "$(median "${p1o[@]}")" "$(median "${p1t[@]}")" "$(median "${p1d[@]}")" "<= 3"
    row "10,000 x 4 KiB open+read+close, second pass" s "$(median "${p2o[@]}")" "$(median "${p2t[@]}")" "$(median "${p2d[@]}")" "<= 1.5"
    rm -f "$TMPFS"/f* "$DISK"/f*
}

# ---- 3. ls -l of 100,000 entries -----------------------------------------
case_ls() {
    local S co=() wo=() ct=() wt=() cd=() wd=()
    S=$(new_store ls)
    "$BT" fill "$S" 100000 100 >/dev/null
    python3 - "$TMPFS" "$DISK" <<'EOF'
import sys
for d in sys.argv[1:]:
    for i in range(100000):
        with open(f"{d}/f{i:07d}", "wb") as f:
            f.write(f"f{i:07d}".encode()[:8] + bytes(92))
EOF
    for r in $(seq "$RUNS"); do
        mount_store "$S"
        co+=("$(tm ls -l --color=never "$MNT")"); wo+=("$(tm ls -l --color=never "$MNT")")
        umount_store
        ct+=("$(tm ls -l --color=never "$TMPFS")"); wt+=("$(tm ls -l --color=never "$TMPFS")")
        cd+=("$(tm ls -l --color=never "$DISK")"); wd+=("$(tm ls -l --color=never "$DISK")")
    done
    row "ls -l 100,000 entries, cold (fresh mount)" s "$(median "${co[@]}")" "$(median "${ct[@]}")" "$(median "${cd[@]}")" "<= 1.5"
    row "ls -l 100,000 entries, warm" s "$(median "${wo[@]}")" "$(median "${wt[@]}")" "$(median "${wd[@]}")" "<= 1.2"
    rm -rf "$TMPFS"/f* ; find "$DISK" -name 'f*' -delete
}

# ---- 4. grep -rl over 200 results of 400 KB -----------------------------
case_grep() {
    local S go=() gt=() gd=()
    S=$(new_store grep)
    mkdir -p "$W/src"
    python3 - "$W/src" <<'EOF'
import random, sys
random.seed(5)
words = [''.join(random.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(random.randint(2, 9))) for _ in range(5000)]
for i in range(200):
    lines, size = [], 0
    while size < 400_000:
        l = ' '.join(random.choice(words) for _ in range(12))
        if i % 20 == 0 and random.random() < 0.001:
            l += ' needle_xyzzy'
        lines.append(l); size += len(l) + 1
    open(f"{sys.argv[1]}/r{i:03d}", "w").write('\n'.join(lines) + '\n')
EOF
    for f in "$W/src"/*; do
        "$AL" put --store "$S" "$(basename "$f")" --file "$f" >/dev/null
        cp "$f" "$TMPFS/"; cp "$f" "$DISK/"
    done
    mount_store "$S"
    cat "$MNT"/* >/dev/null; cat "$TMPFS"/* "$DISK"/r* >/dev/null
    for r in $(seq "$RUNS"); do
        go+=("$(tm grep -rl needle_xyzzy "$MNT")")
        gt+=("$(tm grep -rl needle_xyzzy "$TMPFS")")
        gd+=("$(tm grep -rl needle_xyzzy "$DISK")")
    done
    umount_store
    row "grep -rl over 200 x 400 KB" s "$(median "${go[@]}")" "$(median "${gt[@]}")" "$(median "${gd[@]}")" "<= 1.5"
    rm -rf "$TMPFS"/r* "$DISK"/r* "$W/src"
}

# ---- 5. writes -------------------------------------------------------------
case_writes() {
    local dur=() nos=() ft=() fd=() fdn=() fs=() po=() pt=() pd=()
    head -c 4096 /dev/urandom >"$W/f4k"
    for r in $(seq "$RUNS"); do
        rm -rf "$W/pd" "$W/pn"; mkdir -p "$DISK/w" "$TMPFS/w"
        dur+=("$("$BT" puts "$W/pd" 10000 4096 durable | cut -d' ' -f1)")
        fs+=("$("$BT" files "$DISK/w" 10000 4096 fsync | cut -d' ' -f1)")
        nos+=("$("$BT" puts "$W/pn" 10000 4096 nosync | cut -d' ' -f1)")
        fdn+=("$("$BT" files "$DISK/w" 10000 4096 nofsync | cut -d' ' -f1)")
        ft+=("$("$BT" files "$TMPFS/w" 10000 4096 nofsync | cut -d' ' -f1)")
        rm -rf "$DISK/w" "$TMPFS/w"; mkdir -p "$DISK/w" "$TMPFS/w"
        rm -rf "$W/pp"; "$AL" init --store "$W/pp" >/dev/null
        po+=("$(tm bash -c "for i in \$(seq 200); do '$AL' put --store '$W/pp' k\$i --file '$W/f4k' >/dev/null; done")")
        pt+=("$(tm bash -c "for i in \$(seq 200); do cat '$W/f4k' > '$TMPFS/w/k'\$i; done")")
        pd+=("$(tm bash -c "for i in \$(seq 200); do cat '$W/f4k' > '$DISK/w/k'\$i; done")")
        rm -rf "$DISK/w" "$TMPFS/w"
    done
    row "10,000 library puts of 4 KiB, durable (vs file write+fsync on disk)" s "$(median "${dur[@]}")" "$(median "${fs[@]}")" "$(median "${fs[@]}")" "<= 1.0 vs fsync"
    row "10,000 library puts of 4 KiB, STORE_NOSYNC (vs file write, no fsync)" s "$(median "${nos[@]}")" "$(median "${ft[@]}")" "$(median "${fdn[@]}")" "-"
    row "200 agentlink put processes vs 200 cat > file" s "$(median "${po[@]}")" "$(median "${pt[@]}")" "$(median "${pd[@]}")" "<= 2"
}

# ---- 6. eviction churn ------------------------------------------------------
CHURN=
case_churn() {
    rm -rf "$W/churn"
    CHURN=$("$BT" churn "$W/churn" 256M)
    log "churn: $CHURN"
    rm -rf "$W/churn"
}

# ---- 7. scale ---------------------------------------------------------------
SCALE=
case_scale() {
    local s1k s1m g1k g1m rss S n
    for n in 1000 1000000; do
        S=$W/scale$n
        rm -rf "$S"
        "$BT" fill "$S" "$n" 16 >/dev/null
        mount_store "$S"
        local st=() gt=()
        for r in $(seq "$RUNS"); do
            st+=("$("$BT" stat "$MNT" "$n" 20000)")
            gt+=("$(tm bash -c "for i in \$(seq 100); do '$AL' get --store '$S' f\$(printf %07d \$((RANDOM * 32768 % $n + RANDOM % $n))) ; done" )")
        done
        if [ "$n" = 1000 ]; then s1k=$(median "${st[@]}"); g1k=$(median "${gt[@]}")
        else
            s1m=$(median "${st[@]}"); g1m=$(median "${gt[@]}")
            ls -l --color=never "$MNT" >/dev/null
            rss=$(awk '/VmHWM/ {print $2}' "/proc/$DAEMON/status")
        fi
        umount_store
        rm -rf "$S"
    done
    SCALE="$s1k $s1m $g1k $g1m $rss"
}

# ---- instruction counts ----------------------------------------------------
CALLGRIND=
case_callgrind() {
    local S=$W/cg put rd
    rm -rf "$S"; "$AL" init --store "$S" >/dev/null
    "$BT" put1 "$S" 4096 # warm: the store exists, as for any put but the first
    put=$(valgrind --tool=callgrind --toggle-collect=store_put --callgrind-out-file="$W/cg.put" \
        "$BT" put1 "$S" 4096 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    head -c $((1 << 20)) /dev/urandom | "$AL" put --store "$S" big >/dev/null
    rd=$(valgrind --tool=callgrind --toggle-collect=store_read --callgrind-out-file="$W/cg.read" \
        "$BT" read1 "$S" big $((1 << 20)) 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    CALLGRIND="$put $rd"
}

START=$EPOCHSECONDS
for c in ${BENCH_CASES:-cat small ls grep writes churn scale callgrind}; do
    log "case $c"
    "case_$c"
done

mkdir -p "$(dirname "$OUT")"
{
    echo "# offloadfs benchmark"
    echo
    echo "Made by \`make bench\` on $(date -u +%Y-%m-%d) in $((EPOCHSECONDS - START)) s: $(nproc) cores,"
    echo "$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr),"
    echo "$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1). Medians of $RUNS interleaved runs;"
    echo "ratio = offloadfs / plain files in the same run. The store lives on the root disk."
    echo
    echo "| case | unit | offloadfs | tmpfs | disk | ratio vs tmpfs | ratio vs disk | bar (vs tmpfs) |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
    printf '%s\n' "${ROWS[@]}"
    echo
    if [ -n "$CHURN" ]; then
        read -r cr p50f p99f p50e p99e <<<"$CHURN"
        echo "Eviction churn (10x a 256 MiB bound, durable puts of 0-4 MiB): data.mdb = ${cr}x the bound"
        echo "(bar <= 1.5); put latency p50/p99 without eviction ${p50f}/${p99f} us, with eviction"
        echo "${p50e}/${p99e} us (bar: p99 with <= 2x without)."
        echo
    fi
    if [ -n "$SCALE" ]; then
        read -r s1k s1m g1k g1m rss <<<"$SCALE"
        echo "Scale: stat of a random name through the mount $(fmt "$(calc "$s1k*1000000")") us at 1,000"
        echo "entries, $(fmt "$(calc "$s1m*1000000")") us at 1,000,000 (ratio $(ratio "$s1m" "$s1k"), bar <= 1.5);"
        echo "100 \`agentlink get\` processes $(fmt "$g1k") s vs $(fmt "$g1m") s (ratio $(ratio "$g1m" "$g1k"));"
        echo "daemon peak RSS after \`ls -l\` of 1,000,000 entries: $((rss / 1024)) MiB (bar <= 64 MiB)."
        echo
    fi
    if [ -n "$CALLGRIND" ]; then
        read -r put rd <<<"$CALLGRIND"
        echo "Instruction counts (callgrind, stable on noisy machines): one durable library put of"
        echo "4 KiB (store_put) $put instructions; one 1 MiB read of the store (store_read) $rd."
    fi
} >"$OUT"
cat "$OUT"
