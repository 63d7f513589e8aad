#!/bin/bash
# scripts/bench.sh -- offloadfs side by side with plain files (make bench).
#
# Prepares the same data in an offloadfs store (mounted), in a directory on
# tmpfs and in a directory on the root disk, then measures each case
# interleaved (offloadfs, tmpfs, disk, offloadfs, tmpfs, disk, ...)
# BENCH_RUNS times (default 5) and reports the median and the ratio
# offloadfs / plain files, and whether the bar set for that case is met.
# Writes the table to doc/benchmark.md (BENCH_OUT to change). Needs root
# (tmpfs, mounts). Nothing here is a test: no timing is asserted.
#
#   BENCH_RUNS=5                 runs per case (medians of these)
#   BENCH_CASES="start cat small ls grep writes churn scale ryw callgrind deepagents compress mcp metrics remote s3fs uploads"
#   BENCH_OUT=doc/benchmark.md   where the table goes
#   BENCH_SCALE_N=1000000        entries of the large store in the scale case
#   BENCH_OFS_OPTS=OPTS          more -o options for every mount (to compare
#                                settings, e.g. decode_ahead=0)
#   BENCH_RT=1                   run the daemon and the timed commands under
#                                SCHED_FIFO (chrt -f 10): on a machine shared with
#                                other work, what a quiet one would show
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
B=${OFFLOADFS_BUILD:-$TOP/build}
AL=$B/agentlink OFS=$B/offloadfs BT=$B/bench/benchtool
RUNS=${BENCH_RUNS:-5}
CASES=${BENCH_CASES:-start cat small ls grep writes churn scale ryw callgrind deepagents compress mcp metrics remote s3fs uploads}
OUT=${BENCH_OUT:-$TOP/doc/benchmark.md}
SCALE_N=${BENCH_SCALE_N:-1000000}
RT=${BENCH_RT:+chrt -f 10}
for p in "$AL" "$OFS" "$BT"; do
    [ -x "$p" ] || { echo "bench: $p is missing (run make)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (tmpfs and FUSE mounts)" >&2; exit 1; }
W=$(mktemp -d /var/tmp/offloadfs-bench.XXXXXX)
TMPFS=$W/tmpfs DISK=$W/disk MNT=$W/mnt
ROWS=() METRICS=()
mkdir -p "$TMPFS" "$DISK" "$MNT"
mount -t tmpfs -o size=3G tmpfs "$TMPFS"
DAEMON=
cleanup() {
    fusermount3 -u "$MNT" 2>/dev/null || true
    for m in "$W"/ryw-m*; do fusermount3 -u "$m" 2>/dev/null || true; done
    [ -n "$DAEMON" ] && wait "$DAEMON" 2>/dev/null || true
    umount "$TMPFS" 2>/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT

log() { echo "bench: $*" >&2; }

# Wall time of a command in seconds (bash's microsecond clock).
tm() {
    local s=$EPOCHREALTIME
    $RT "$@" >/dev/null
    awk "BEGIN {print $EPOCHREALTIME - $s}"
}

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ratio() { awk "BEGIN {printf \"%.2f\", $1 / $2}"; }
calc() { awk "BEGIN {print $*}"; }
fmt() { case $1 in -) echo -;; *) printf '%.4g' "$1";; esac; }
commas() { echo "$1" | sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/;ta'; } # 1000000 -> 1,000,000
meets() { awk "BEGIN {print ($1 <= $2) ? \"yes\" : \"**no**\"}"; } # meets VALUE MAX

# row CASE UNIT OFS TMPFS DISK BASE MAX: one side-by-side row. The bar is
# ratio <= MAX against BASE (tmpfs or disk); BASE "-" for no bar. A column
# may be "-" (not measured).
row() {
    local rt=- rd=- r bar=- ok=-
    [ "$4" != - ] && rt=$(ratio "$3" "$4")
    [ "$5" != - ] && rd=$(ratio "$3" "$5")
    case $6 in
    tmpfs) r=$rt ;; disk) r=$rd ;; *) r= ;;
    esac
    if [ -n "$r" ]; then bar="<= $7 vs $6"; ok=$(meets "$r" "$7"); fi
    ROWS+=("| $1 | $2 | $(fmt "$3") | $(fmt "$4") | $(fmt "$5") | $rt | $rd | $bar | $ok |")
    log "$1: offloadfs $3, tmpfs $4, disk $5 ($2)"
}

# metric WHAT VALUE BAR VERDICT: one row of the second table.
metric() {
    METRICS+=("| $1 | $2 | $3 | $4 |")
    log "$1: $2"
}

mount_store() { # mount_store STORE [NS]
    $RT "$OFS" -f -o "namespace=${2:-default},prefetch=64M${BENCH_OFS_OPTS:+,$BENCH_OFS_OPTS}" "$1" "$MNT" \
        2>"$W/daemon.log" &
    DAEMON=$!
    for _ in $(seq 500); do mountpoint -q "$MNT" && return 0; sleep 0.01; done
    log "mount failed"; cat "$W/daemon.log" >&2; exit 1
}
umount_store() {
    fusermount3 -u "$MNT"
    wait "$DAEMON"
    DAEMON=
}

new_store() { # new_store NAME [COMPRESSION]: an empty store with a bound that never evicts
    rm -rf "${W:?}/$1"         # (raw unless told: the cases before "compress" measure
    "$AL" init --store "$W/$1" --max-total-bytes 16G --max-result-bytes 64M \
        --compression "${2:-none}" >/dev/null # the raw path against plain files)
    echo "$W/$1"
}

# make_files DIR N SIZE: DIR/f0000000.. of SIZE bytes each, what `fill`
# puts into a store (the first 8 bytes are the name, the rest zeros).
make_files() {
    mkdir -p "$1"
    python3 - "$@" <<'EOF'
import sys
d, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    name = "f%07d" % i
    with open("%s/%s" % (d, name), "wb") as f:
        f.write((name.encode()[:8] + bytes(size))[:size])
EOF
}

# ---- 1. cat of a 64 MiB result ------------------------------------------
# First read after writing: the result is put while the mount is up, as an
# agent does, and read once the watcher has seen it (the daemon pushes new
# results into the page cache meanwhile: -o prefetch). The same result is
# read once more on a fresh mount, where nothing is cached and every byte
# goes through the daemon.
case_cat() {
    local S f1o=() f2o=() f3o=() f1t=() f2t=() f3t=() f1d=() f2d=() f3d=()
    head -c $((64 << 20)) /dev/urandom >"$W/data64"
    S=$(new_store cat)
    for r in $(seq "$RUNS"); do
        mount_store "$S"
        "$AL" put --store "$S" "big$r" --file "$W/data64" >/dev/null
        sleep 0.5 # the change watcher polls every 20 ms; doc/contract.md allows 1 s
        f1o+=("$(tm cat "$MNT/big$r")"); f2o+=("$(tm cat "$MNT/big$r")")
        cat "$W/data64" >"$TMPFS/big$r"
        f1t+=("$(tm cat "$TMPFS/big$r")"); f2t+=("$(tm cat "$TMPFS/big$r")")
        cat "$W/data64" >"$DISK/big$r"
        f1d+=("$(tm cat "$DISK/big$r")"); f2d+=("$(tm cat "$DISK/big$r")")
        umount_store
        mount_store "$S"
        f3o+=("$(tm cat "$MNT/big$r")")
        umount_store
        f3t+=("$(tm cat "$TMPFS/big$r")"); f3d+=("$(tm cat "$DISK/big$r")")
        rm -f "$TMPFS/big$r" "$DISK/big$r"
    done
    row "cat 64 MiB, first read after writing (-o prefetch=64M)" s "$(median "${f1o[@]}")" "$(median "${f1t[@]}")" "$(median "${f1d[@]}")" tmpfs 2.0
    row "cat 64 MiB, second read" s "$(median "${f2o[@]}")" "$(median "${f2t[@]}")" "$(median "${f2d[@]}")" tmpfs 1.1
    row "cat 64 MiB, first read on a fresh mount (nothing cached)" s "$(median "${f3o[@]}")" "$(median "${f3t[@]}")" "$(median "${f3d[@]}")" - -
    rm -rf "$S" "$W/data64"
}

# ---- 2. 10,000 results of 4 KiB: open+read+close -----------------------
# Each run mounts afresh, so the first pass finds no name, attribute or page
# of the mount cached (tmpfs and the disk directory have theirs cached).
case_small() {
    local S p1o=() p2o=() p1t=() p2t=() p1d=() p2d=()
    S=$(new_store small)
    "$BT" fill "$S" 10000 4096 >/dev/null
    make_files "$TMPFS/small" 10000 4096
    make_files "$DISK/small" 10000 4096
    sync # no writeback of the set-up running under the measurements
    for r in $(seq "$RUNS"); do
        mount_store "$S"
        p1o+=("$("$BT" openread "$MNT" 10000)"); p2o+=("$("$BT" openread "$MNT" 10000)")
        umount_store
        p1t+=("$("$BT" openread "$TMPFS/small" 10000)"); p2t+=("$("$BT" openread "$TMPFS/small" 10000)")
        p1d+=("$("$BT" openread "$DISK/small" 10000)"); p2d+=("$("$BT" openread "$DISK/small" 10000)")
    done
    row "10,000 x 4 KiB open+read+close, first pass (fresh mount)" s "$(median "${p1o[@]}")" "$(median "${p1t[@]}")" "$(median "${p1d[@]}")" tmpfs 3
    row "10,000 x 4 KiB open+read+close, second pass" s "$(median "${p2o[@]}")" "$(median "${p2t[@]}")" "$(median "${p2d[@]}")" tmpfs 1.5
    rm -rf "$S" "$TMPFS/small" "$DISK/small"
}

# ---- 3. ls -l of 100,000 entries -----------------------------------------
case_ls() {
    local S co=() wo=() ct=() wt=() cd=() wd=()
    S=$(new_store ls)
    "$BT" fill "$S" 100000 100 >/dev/null
    make_files "$TMPFS/ls" 100000 100
    make_files "$DISK/ls" 100000 100
    sync
    for r in $(seq "$RUNS"); do
        mount_store "$S"
        co+=("$(tm ls -l --color=never "$MNT")"); wo+=("$(tm ls -l --color=never "$MNT")")
        umount_store
        ct+=("$(tm ls -l --color=never "$TMPFS/ls")"); wt+=("$(tm ls -l --color=never "$TMPFS/ls")")
        cd+=("$(tm ls -l --color=never "$DISK/ls")"); wd+=("$(tm ls -l --color=never "$DISK/ls")")
    done
    row "ls -l 100,000 entries, cold (fresh mount)" s "$(median "${co[@]}")" "$(median "${ct[@]}")" "$(median "${cd[@]}")" tmpfs 1.5
    row "ls -l 100,000 entries, warm" s "$(median "${wo[@]}")" "$(median "${wt[@]}")" "$(median "${wd[@]}")" tmpfs 1.2
    rm -rf "$S" "$TMPFS/ls" "$DISK/ls"
}

# ---- 4. grep -rl over 200 results of 400 KB -----------------------------
case_grep() {
    local S go=() gt=() gd=()
    S=$(new_store grep)
    mkdir -p "$W/src" "$TMPFS/grep" "$DISK/grep"
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
    done
    cp "$W/src"/* "$TMPFS/grep/"; cp "$W/src"/* "$DISK/grep/"
    sync
    mount_store "$S"
    # The results were just written: read once, as the agent that wrote them
    # would have been told about them, then grep the cached bytes.
    cat "$MNT"/* "$TMPFS/grep"/* "$DISK/grep"/* >/dev/null
    for r in $(seq "$RUNS"); do
        go+=("$(tm grep -rl needle_xyzzy "$MNT")")
        gt+=("$(tm grep -rl needle_xyzzy "$TMPFS/grep")")
        gd+=("$(tm grep -rl needle_xyzzy "$DISK/grep")")
    done
    umount_store
    row "grep -rl over 200 x 400 KB" s "$(median "${go[@]}")" "$(median "${gt[@]}")" "$(median "${gd[@]}")" tmpfs 1.5
    rm -rf "$S" "$TMPFS/grep" "$DISK/grep" "$W/src"
}

# ---- 5. writes -------------------------------------------------------------
# Durable puts are compared with plain files made durable on the same disk:
# write+fsync (the bar), and write to a temporary+fsync+rename+fsync
# of the directory, which is what a plain file needs to be replaced
# atomically and survive a crash, as a put is.
case_writes() {
    local dur=() nos=() fs=() fa=() ft=() fd=() po=() pt=() pd=() N=10000
    head -c 4096 /dev/urandom >"$W/f4k"
    for r in $(seq "$RUNS"); do
        rm -rf "$W/pd" "$W/pn" "$DISK/w" "$TMPFS/w"; mkdir -p "$DISK/w" "$TMPFS/w"
        dur+=("$("$BT" puts "$W/pd" $N 4096 durable | cut -d' ' -f1)")
        fs+=("$("$BT" files "$DISK/w" $N 4096 fsync | cut -d' ' -f1)")
        rm -rf "$DISK/w"; mkdir -p "$DISK/w"
        fa+=("$("$BT" files "$DISK/w" $N 4096 atomic | cut -d' ' -f1)")
        rm -rf "$DISK/w"; mkdir -p "$DISK/w"
        nos+=("$("$BT" puts "$W/pn" $N 4096 nosync | cut -d' ' -f1)")
        ft+=("$("$BT" files "$TMPFS/w" $N 4096 nofsync | cut -d' ' -f1)")
        fd+=("$("$BT" files "$DISK/w" $N 4096 nofsync | cut -d' ' -f1)")
        rm -rf "$DISK/w" "$TMPFS/w" "$W/pp"; mkdir -p "$DISK/w" "$TMPFS/w"
        "$AL" init --store "$W/pp" >/dev/null
        po+=("$(tm bash -c "for i in \$(seq 200); do '$AL' put --store '$W/pp' k\$i --file '$W/f4k' >/dev/null; done")")
        pt+=("$(tm bash -c "for i in \$(seq 200); do cat '$W/f4k' > '$TMPFS/w/k'\$i; done")")
        pd+=("$(tm bash -c "for i in \$(seq 200); do cat '$W/f4k' > '$DISK/w/k'\$i; done")")
    done
    rm -rf "$DISK/w" "$TMPFS/w" "$W/pd" "$W/pn" "$W/pp"
    row "10,000 library puts of 4 KiB, durable, vs file write+fsync" s "$(median "${dur[@]}")" - "$(median "${fs[@]}")" disk 1.0
    row "10,000 library puts of 4 KiB, durable, vs atomic file write (tmp+fsync+rename+fsync dir)" s "$(median "${dur[@]}")" - "$(median "${fa[@]}")" - -
    row "10,000 library puts of 4 KiB, STORE_NOSYNC, vs file write (no fsync)" s "$(median "${nos[@]}")" "$(median "${ft[@]}")" "$(median "${fd[@]}")" - -
    row "200 \`agentlink put\` processes (durable) vs 200 \`cat > file\`" s "$(median "${po[@]}")" "$(median "${pt[@]}")" "$(median "${pd[@]}")" tmpfs 2
}

# ---- 6. eviction churn ------------------------------------------------------
case_churn() {
    local cr p50f p99f p50e p99e
    rm -rf "$W/churn"
    read -r cr p50f p99f p50e p99e < <("$BT" churn "$W/churn" 256M)
    rm -rf "$W/churn"
    metric "eviction churn: data.mdb size / bound after writing 10x a 256 MiB bound (durable puts of 0-4 MiB)" "$cr" "<= 1.5" "$(meets "$cr" 1.5)"
    metric "eviction churn: put latency p50 / p99 without eviction" "$p50f / $p99f us" - -
    metric "eviction churn: put latency p50 / p99 with eviction" "$p50e / $p99e us" - -
    metric "eviction churn: p99 with eviction / p99 without" "$(ratio "$p99e" "$p99f")" "<= 2" "$(meets "$(ratio "$p99e" "$p99f")" 2)"
}

# ---- 7. scale ---------------------------------------------------------------
# stat of 1,000 distinct random names, each on a fresh mount so every stat
# is a lookup through the daemon, at 1,000 and at SCALE_N entries; 100
# `agentlink get` of random keys; the daemon's peak memory during `ls -l`
# of SCALE_N entries (sampled every 10 ms: VmHWM counts the pages of the
# store file the daemon maps, RssAnon its own memory).
peak_rss() { # peak_rss PID: samples until PID's mount is idle, prints "hwm_kb anon_kb"
    local pid=$1 anon=0 a
    while kill -0 "$pid" 2>/dev/null && [ ! -e "$W/ls.done" ]; do
        a=$(awk '/^RssAnon/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
        [ "${a:-0}" -gt "$anon" ] && anon=$a
        sleep 0.01
    done
    echo "$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status") $anon"
}

case_scale() {
    local S n st gt s1k s1m g1k g1m hwm anon
    for n in 1000 "$SCALE_N"; do
        S=$W/scale$n
        rm -rf "$S"
        log "scale: filling $n entries"
        "$BT" fill "$S" "$n" 16 >/dev/null
        sync
        st=() gt=()
        for r in $(seq "$RUNS"); do
            mount_store "$S"
            st+=("$("$BT" stat "$MNT" "$n" 1000)")
            umount_store
            gt+=("$(tm bash -c "for i in \$(seq 100); do '$AL' get --store '$S' f\$(printf %07d \$(( (RANDOM * 32768 + RANDOM) % $n ))) >/dev/null || exit 1; done")")
        done
        if [ "$n" = 1000 ]; then
            s1k=$(median "${st[@]}"); g1k=$(median "${gt[@]}")
        else
            s1m=$(median "${st[@]}"); g1m=$(median "${gt[@]}")
            mount_store "$S"
            rm -f "$W/ls.done"
            peak_rss "$DAEMON" >"$W/rss" &
            ls -l --color=never "$MNT" >/dev/null
            touch "$W/ls.done"; wait $!
            read -r hwm anon <"$W/rss"
            umount_store
        fi
        rm -rf "$S"
    done
    local big; big=$(commas "$SCALE_N")
    metric "stat of a random name through the mount (cold lookup), 1,000 vs $big entries" \
        "$(fmt "$(calc "$s1k*1e6")") us vs $(fmt "$(calc "$s1m*1e6")") us: ratio $(ratio "$s1m" "$s1k")" \
        "<= 1.5" "$(meets "$(ratio "$s1m" "$s1k")" 1.5)"
    metric "100 \`agentlink get\` processes, 1,000 vs $big entries" \
        "$(fmt "$g1k") s vs $(fmt "$g1m") s: ratio $(ratio "$g1m" "$g1k")" - -
    metric "daemon peak memory during \`ls -l\` of $big entries: own (RssAnon)" \
        "$((anon / 1024)) MiB" "<= 64 MiB" "$(meets "$anon" $((64 * 1024)))"
    metric "daemon peak memory during \`ls -l\` of $big entries: VmHWM (with mapped store pages)" \
        "$((hwm / 1024)) MiB" - -
}

# ---- 9. read-your-writes ------------------------------------------------------
# A library put of 4 KiB (STORE_NOSYNC, so that the wake-up's own cost shows)
# with no daemon, one and four daemons on the store: each woken daemon
# processes the change and invalidates before it answers. Then a put
# followed at once by open+read+close through the mount, against a plain
# file rewritten (open O_TRUNC+write+close) then read. Last, the puts of a
# writer while one of the daemons is SIGSTOPped: the first waits the bound,
# the later ones of that process do not wait for that daemon again.
RP=$B/tools/rywprobe
case_ryw() {
    local p0=() p1=() p4=() ro=() rt=() rd=() st=() sn=() N=2000 s m pids a b
    s=$(new_store ryw)
    mkdir -p "$W/ryw-m2" "$W/ryw-m3" "$W/ryw-m4" "$TMPFS/ryw" "$DISK/ryw"
    for r in $(seq "$RUNS"); do
        p0+=("$("$RP" putlat "$s" $N | cut -d' ' -f1)")
        mount_store "$s"
        p1+=("$("$RP" putlat "$s" $N | cut -d' ' -f1)")
        ro+=("$("$RP" rywlat "$s" "$MNT" $N)")
        rt+=("$("$RP" filelat "$TMPFS/ryw" $N)")
        rd+=("$("$RP" filelat "$DISK/ryw" $N)")
        pids=()
        for m in 2 3 4; do "$OFS" -f "$s" "$W/ryw-m$m" 2>/dev/null & pids+=($!); done
        for m in 2 3 4; do
            for _ in $(seq 500); do mountpoint -q "$W/ryw-m$m" && break; sleep 0.01; done
        done
        p4+=("$("$RP" putlat "$s" $N | cut -d' ' -f1)")
        kill -STOP "${pids[0]}"
        read -r a b < <("$RP" putlat "$s" 5) # median, max of 5 puts by one process
        st+=("$b") # the first put waits the bound ...
        sn+=("$a") # ... the process's later ones do not wait again
        kill -CONT "${pids[0]}"
        # The daemon just continued is catching up (its prefetch stat of the
        # writes it missed can make this unmount EBUSY): retry.
        for m in 2 3 4; do
            for _ in $(seq 100); do fusermount3 -u "$W/ryw-m$m" 2>/dev/null && break; sleep 0.02; done
        done
        wait "${pids[@]}"
        umount_store
    done
    rm -rf "$s" "$TMPFS/ryw" "$DISK/ryw" "$W"/ryw-m*
    metric "put of 4 KiB (library, STORE_NOSYNC), no daemon running" "$(median "${p0[@]}") us" - -
    metric "put of 4 KiB (library, STORE_NOSYNC), one daemon (woken, answers)" "$(median "${p1[@]}") us" - -
    metric "put of 4 KiB (library, STORE_NOSYNC), four daemons" "$(median "${p4[@]}") us" - -
    metric "put while one of four daemons is SIGSTOPped, a process's first (bound: 200 ms)" "$(median "${st[@]}") us" "< 1 s" "$(meets "$(median "${st[@]}")" 1000000)"
    metric "put while one of four daemons is SIGSTOPped, median of a process's 5 puts" "$(median "${sn[@]}") us" - -
    row "replace-then-read 4 KiB: put+open+read+close through the mount vs file rewrite+read" us "$(median "${ro[@]}")" "$(median "${rt[@]}")" "$(median "${rd[@]}")" - -
}

# ---- 8. compression ----------------------------------------------------------
# On real text collected from this machine (scripts/bench/corpus.sh: C
# headers, package docs, dpkg's database, logs), a store compressing with
# zstd against one made with --compression none.
case_compress() {
    local C=$W/corpus r cz cn f1z=() f1n=() f2z=() f2n=() pz=() pn=() p99z=() p99n=()
    local sz4=() sn4=() lz=() ln=()
    local dz=() dn=() mz=() mn=() x
    scripts/bench/corpus.sh "$C" $((64 << 20))
    # Capacity and the file under churn: 10x the bound written, slices of
    # 0-4 MiB of the corpus under 1,000 keys (once each: deterministic).
    rm -rf "$W/capz" "$W/capn"
    read -r cz sz fz < <(BENCHTOOL_COMPRESSION=zstd "$BT" capacity "$W/capz" 64M "$C")
    read -r cn sn fn < <(BENCHTOOL_COMPRESSION=none "$BT" capacity "$W/capn" 64M "$C")
    rm -rf "$W/capz" "$W/capn"
    metric "capacity: live original bytes / max_total_bytes after writing 10x a 64 MiB bound of real text, zstd (none)" \
        "$cz ($cn); stored/bound $sz" ">= 4" "$(awk "BEGIN {print ($cz >= 4) ? \"yes\" : \"**no**\"}")"
    metric "compressed churn: data.mdb size / bound after writing 10x a 64 MiB bound, zstd (none)" \
        "$fz ($fn)" "<= 1.5" "$(meets "$fz" 1.5)"
    # Reads of a 64 MiB result of real text through a fresh mount.
    local SZ SN; SZ=$(new_store cz zstd); SN=$(new_store cn none)
    "$AL" put --store "$SZ" big --file "$C" >/dev/null
    "$AL" put --store "$SN" big --file "$C" >/dev/null
    for r in $(seq "$RUNS"); do
        for m in z n; do
            local S=$SZ; [ $m = n ] && S=$SN
            mount_store "$S"
            read -r x p50 p99 < <($RT "$BT" preads "$MNT/big" 2000 4096)
            umount_store
            mount_store "$S"
            if [ $m = z ]; then pz+=("$p50"); p99z+=("$p99"); f1z+=("$(tm cat "$MNT/big")"); f2z+=("$(tm cat "$MNT/big")")
            else pn+=("$p50"); p99n+=("$p99"); f1n+=("$(tm cat "$MNT/big")"); f2n+=("$(tm cat "$MNT/big")"); fi
            umount_store
            # Small sequential reads, each on a fresh mount: read() of 4 KiB
            # at a time, and Python's line iteration (timed inside Python).
            mount_store "$S"
            x=$($RT "$BT" seqread "$MNT/big" 4096)
            if [ $m = z ]; then sz4+=("$x"); else sn4+=("$x"); fi
            umount_store
            mount_store "$S"
            x=$($RT python3 -c 'import sys, time
t = time.monotonic()
for line in open(sys.argv[1], "rb"):
    pass
print(time.monotonic() - t)' "$MNT/big")
            if [ $m = z ]; then lz+=("$x"); else ln+=("$x"); fi
            umount_store
        done
    done
    rm -rf "$SZ" "$SN"
    cmp_row() { # cmp_row WHAT UNIT ZSTD NONE MAX
        local rr bar=- ok=-; rr=$(ratio "$3" "$4")
        [ "$5" != - ] && bar="<= $5" && ok=$(meets "$rr" "$5")
        METRICS+=("| $1 | $(fmt "$3") vs $(fmt "$4") $2: ratio $rr | $bar | $ok |")
        log "$1: zstd $3, none $4 ($2)"
    }
    cmp_row "cat 64 MiB of real text, first read on a fresh mount, zstd vs none" s "$(median "${f1z[@]}")" "$(median "${f1n[@]}")" 1.5
    cmp_row "cat 64 MiB of real text, second read, zstd vs none" s "$(median "${f2z[@]}")" "$(median "${f2n[@]}")" 1.1
    cmp_row "sequential 4 KiB read()s of it on a fresh mount, zstd vs none" s "$(median "${sz4[@]}")" "$(median "${sn4[@]}")" 1.5
    cmp_row "Python line iteration over it on a fresh mount, zstd vs none" s "$(median "${lz[@]}")" "$(median "${ln[@]}")" 1.5
    cmp_row "random 4 KiB pread of it on a fresh mount, p50, zstd vs none" us "$(median "${pz[@]}")" "$(median "${pn[@]}")" -
    cmp_row "random 4 KiB pread of it on a fresh mount, p99, zstd vs none" us "$(median "${p99z[@]}")" "$(median "${p99n[@]}")" -
    # Durable library puts of real text.
    for r in $(seq "$RUNS"); do
        rm -rf "$W/pz" "$W/pn" "$W/mz" "$W/mn"
        dz+=("$(BENCHTOOL_COMPRESSION=zstd "$BT" puts "$W/pz" 2000 4096 durable "$C" | cut -d' ' -f1)")
        dn+=("$(BENCHTOOL_COMPRESSION=none "$BT" puts "$W/pn" 2000 4096 durable "$C" | cut -d' ' -f1)")
        mz+=("$(BENCHTOOL_COMPRESSION=zstd "$BT" puts "$W/mz" 100 1000000 durable "$C" | cut -d' ' -f1)")
        mn+=("$(BENCHTOOL_COMPRESSION=none "$BT" puts "$W/mn" 100 1000000 durable "$C" | cut -d' ' -f1)")
    done
    rm -rf "$W/pz" "$W/pn" "$W/mz" "$W/mn"
    cmp_row "2,000 durable library puts of 4 KiB of real text, zstd vs none" s "$(median "${dz[@]}")" "$(median "${dn[@]}")" 1.3
    cmp_row "100 durable library puts of 1 MB of real text, zstd vs none" s "$(median "${mz[@]}")" "$(median "${mn[@]}")" 1.3
    rm -f "$C"
}

# ---- instruction counts ----------------------------------------------------
case_callgrind() {
    local S=$W/cg put rd
    command -v valgrind >/dev/null || { log "no valgrind: instruction counts skipped"; return 0; }
    rm -rf "$S"; "$AL" init --store "$S" >/dev/null
    "$BT" put1 "$S" 4096 # warm: the store exists, as for any put but the first
    put=$(valgrind --tool=callgrind --toggle-collect=store_put --callgrind-out-file="$W/cg.put" \
        "$BT" put1 "$S" 4096 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    head -c $((1 << 20)) /dev/urandom | "$AL" put --store "$S" big >/dev/null
    rd=$(valgrind --tool=callgrind --toggle-collect=store_read --callgrind-out-file="$W/cg.read" \
        "$BT" read1 "$S" big $((1 << 20)) 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    metric "instructions (callgrind): one durable library put of 4 KiB (store_put)" "$put" - -
    metric "instructions (callgrind): one 1 MiB read of the store (store_read)" "$rd" - -
    rm -rf "$S"
}

# ---- deepagents backend -----------------------------------------------------
# One write (deepagents' eviction of a 200 KB tool result) and one read
# (read_file, offset 1000, 100 lines) through OffloadBackend (agentlink/js:
# a write is one `agentlink put` process, a read the mounted file) against
# deepagents' own FilesystemBackend on a tmpfs and a disk directory, and the
# read through the CLI when no mount is up (scripts/bench/deepagents.mjs).
case_deepagents() {
    local S out name o t d
    command -v node >/dev/null || { log "no node: deepagents case skipped"; return 0; }
    scripts/npm-deps.sh tests/js >/dev/null || { log "npm-deps failed: deepagents case skipped"; return 0; }
    S=$(new_store deepagents)
    mkdir -p "$TMPFS/da" "$DISK/da"
    mount_store "$S"
    out=$(node scripts/bench/deepagents.mjs "$S" "$MNT" "$TMPFS/da" "$DISK/da" "$AL" $((RUNS * 10))) ||
        { log "deepagents: scripts/bench/deepagents.mjs failed"; out=; }
    umount_store
    while read -r name o t d; do
        case $name in
        write) row "deepagents backend: one write() of 200 KB (OffloadBackend: agentlink put, fsync'd; FilesystemBackend: no fsync)" s "$o" "$t" "$d" - - ;;
        read) row "deepagents backend: one read() of 100 lines at offset 1000 of 200 KB (mounted)" s "$o" "$t" "$d" - - ;;
        readcli) row "deepagents backend: the same read() with no mount up (agentlink get)" s "$o" "$t" "$d" - - ;;
        spawn) row "deepagents backend: of a write, starting a process (agentlink --version from node)" s "$o" "$t" "$d" - - ;;
        esac
    done <<<"$out"
    rm -rf "$S" "$TMPFS/da" "$DISK/da"
}

# ---- agentlink mcp-proxy ---------------------------------------------------
# scripts/bench_mcp.sh: a real MCP client and server, directly and through
# the proxy (small-call latency, offloading 1 MB and 50 MB, peak memory).
case_mcp() {
    local out w v b m
    if ! out=$(scripts/bench_mcp.sh); then
        metric "mcp-proxy benchmark" "failed (its error is above)" - "**no**"; return 0
    fi
    while IFS='|' read -r w v b m; do metric "$w" "$v" "$b" "$m"; done <<<"$out"
}

# ---- process start -------------------------------------------------------------
# scripts/bench_start.sh: `agentlink --version` vs /bin/true, and 200 CLI
# puts vs 200 writes to tmpfs, without a remote and with one (a radosgw of
# its own): what every tool call pays for starting the CLI.
case_start() {
    local out w v b m
    if ! out=$(scripts/bench_start.sh); then
        metric "process start benchmark" "failed (its error is above)" - "**no**"; return 0
    fi
    while IFS='|' read -r w v b m; do metric "$w" "$v" "$b" "$m"; done <<<"$out"
}

# ---- remote tier -------------------------------------------------------------
# scripts/bench_remote.sh: a radosgw of its own (scripts/s3-server.sh), the
# tier's reads and puts against the same work done with curl on it, and the
# 8-host run (doc/benchmark.md, "Remote tier").
case_remote() {
    local out w v b m
    if ! out=$(scripts/bench_remote.sh); then
        metric "remote tier benchmark" "failed (its error is above)" - "**no**"; return 0
    fi
    while IFS='|' read -r w v b m; do metric "$w" "$v" "$b" "$m"; done <<<"$out"
}

# ---- the remote read path against s3fs ------------------------------------
# scripts/bench_s3fs.sh: a radosgw of its own, the same objects read by a
# daemon whose store's remote holds them and by s3fs (installed by that
# script when missing), fresh mounts and cold caches per round
# (doc/benchmark.md, "Remote reads against s3fs").
case_s3fs() {
    local out w v b m
    if ! out=$(scripts/bench_s3fs.sh); then
        metric "s3fs benchmark" "failed (its error is above)" - "**no**"; return 0
    fi
    while IFS='|' read -r w v b m; do metric "$w" "$v" "$b" "$m"; done <<<"$out"
}

# ---- uploads in parallel -------------------------------------------------------
# scripts/bench_uploads.sh: a radosgw of its own behind a relay adding 50 ms a
# request; 8 Python threads on one handle, and 8 handles, against 1 thread.
case_uploads() {
    local out w v b m
    if ! out=$(scripts/bench_uploads.sh); then
        metric "uploads benchmark" "failed (its error is above)" - "**no**"; return 0
    fi
    while IFS='|' read -r w v b m; do metric "$w" "$v" "$b" "$m"; done <<<"$out"
}

# ---- metrics ---------------------------------------------------------------
# A read loop through the mount (O_DIRECT preads of 64 KiB over 16 results of
# 4 MiB: every read reaches the daemon, none is served from the page cache)
# while a scraper GETs /metrics every 100 ms, against the same loop with no
# scraper, on the same daemon (-o metrics), interleaved. The scraper is one
# Python process, so its own cost is one request each time, not a fork.
case_metrics() {
    local S url with=() without=() scrapes=() sp i
    S=$(new_store metrics)
    head -c $((4 << 20)) /dev/urandom >"$W/m4"
    for i in $(seq 0 15); do "$AL" put --store "$S" "m$i" --file "$W/m4" >/dev/null; done
    "$OFS" -f -o "metrics=127.0.0.1:0" "$S" "$MNT" 2>"$W/daemon.log" &
    DAEMON=$!
    for _ in $(seq 500); do mountpoint -q "$MNT" && break; sleep 0.01; done
    url=$(sed -n 's/^offloadfs: metrics at //p' "$W/daemon.log")
    [ -n "$url" ] || { log "no metrics URL"; cat "$W/daemon.log" >&2; exit 1; }
    cat >"$W/readloop.py" <<'EOF'
import mmap, os, sys, time
mnt, n = sys.argv[1], int(sys.argv[2])
buf = mmap.mmap(-1, 65536)  # page-aligned, as O_DIRECT wants
fds = [os.open("%s/m%d" % (mnt, i), os.O_RDONLY | os.O_DIRECT) for i in range(16)]
t = time.perf_counter()
for k in range(n):
    if os.preadv(fds[k % 16], [buf], (k * 65536) % (4 << 20)) != 65536:
        sys.exit("short read")
print(time.perf_counter() - t)
EOF
    cat >"$W/scraper.py" <<'EOF'
import signal, sys, time, urllib.request
n = 0
def done(*_):
    print(n); sys.exit(0)
signal.signal(signal.SIGTERM, done)
while True:
    with urllib.request.urlopen(sys.argv[1], timeout=5) as r:
        if b"offloadfs_evicted_reads_total" not in r.read():
            sys.exit("bad scrape")
    n += 1
    time.sleep(0.1)
EOF
    python3 "$W/readloop.py" "$MNT" 2000 >/dev/null # warm up
    for r in $(seq "$RUNS"); do # which goes first alternates
        [ $((r % 2)) -eq 1 ] && without+=("$(python3 "$W/readloop.py" "$MNT" 50000)")
        python3 "$W/scraper.py" "$url" >"$W/scrapes" & sp=$!
        with+=("$(python3 "$W/readloop.py" "$MNT" 50000)")
        kill -TERM "$sp"; wait "$sp" || true
        scrapes+=("$(cat "$W/scrapes")")
        [ $((r % 2)) -eq 0 ] && without+=("$(python3 "$W/readloop.py" "$MNT" 50000)")
    done
    log "metrics: with scrapes ${with[*]}; without ${without[*]}; reads counted $(curl -s "$url" | sed -n 's/^offloadfs_reads_total{.*} //p')"
    # What one scrape costs the daemon: CPU time (utime + stime of the
    # whole process, all threads) over 1,000 scrapes in a row, per scrape.
    local cpu0 cpu1 t0 t1
    cpu0=$(awk '{print $14 + $15}' "/proc/$DAEMON/stat") t0=$EPOCHREALTIME
    python3 - "$url" <<'EOF'
import sys, urllib.request
for _ in range(1000):
    with urllib.request.urlopen(sys.argv[1], timeout=5) as r:
        r.read()
EOF
    cpu1=$(awk '{print $14 + $15}' "/proc/$DAEMON/stat") t1=$EPOCHREALTIME
    umount_store
    rm -rf "$S" "$W/m4"
    metric "one scrape of /metrics: daemon CPU (1,000 in a row)" \
        "$(calc "($cpu1 - $cpu0) * 1000000 / $(getconf CLK_TCK) / 1000") us ($(calc "($t1 - $t0) * 1000") us a scrape, wall, client included)" - -
    local mw mo rt
    mw=$(median "${with[@]}") mo=$(median "${without[@]}") rt=$(ratio "$mw" "$mo")
    metric "read loop through the mount (50,000 O_DIRECT preads of 64 KiB), scrape of /metrics every 100 ms vs none: ratio of medians ($(fmt "$mw") s vs $(fmt "$mo") s, $(median "${scrapes[@]}") scrapes a run)" \
        "$rt" "within noise (<= 1.05)" "$(meets "$rt" 1.05)"
}

START=$EPOCHSECONDS
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
for c in $CASES; do
    log "case $c"
    "case_$c"
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# The table goes between the two marker lines of OUT, so the notes written
# around it (where the time goes) stay; a file without them is replaced.
BEGIN_MARK='<!-- bench.sh: table begins -->' END_MARK='<!-- bench.sh: table ends -->'
{
    echo "$BEGIN_MARK"
    echo "Made by \`make bench\` on $(date -u +%Y-%m-%d) in $((EPOCHSECONDS - START)) s: $(nproc) cores,"
    echo "$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr),"
    echo "$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), load average $LOAD0 at the start, $LOAD1 at the end."
    [ -n "$RT" ] && echo "BENCH_RT: the daemon and the timed commands ran under SCHED_FIFO (\`$RT\`)."
    [ -n "${BENCH_OFS_OPTS:-}" ] && echo "BENCH_OFS_OPTS: every mount had \`-o $BENCH_OFS_OPTS\`."
    echo "Medians of $RUNS interleaved runs; ratio = offloadfs / plain files in the same run; the"
    echo "store and the disk directory live on the root disk. Times in seconds."
    echo
    echo "| case | unit | offloadfs | tmpfs | disk | ratio vs tmpfs | ratio vs disk | bar | meets |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    [ ${#ROWS[@]} -gt 0 ] && printf '%s\n' "${ROWS[@]}"
    if [ ${#METRICS[@]} -gt 0 ]; then
        echo
        echo "| measure | value | bar | meets |"
        echo "| --- | --- | --- | --- |"
        printf '%s\n' "${METRICS[@]}"
    fi
    echo "$END_MARK"
} >"$W/table.md"
mkdir -p "$(dirname "$OUT")"
if [ -f "$OUT" ] && grep -qxF "$BEGIN_MARK" "$OUT" && grep -qxF "$END_MARK" "$OUT"; then
    awk -v b="$BEGIN_MARK" -v e="$END_MARK" -v t="$W/table.md" '
        $0 == b { while ((getline l < t) > 0) print l; skip = 1; next }
        $0 == e { skip = 0; next }
        !skip' "$OUT" >"$W/out.md"
    cat "$W/out.md" >"$OUT"
else
    { echo "# offloadfs benchmark"; echo; cat "$W/table.md"; } >"$OUT"
fi
cat "$W/table.md"
