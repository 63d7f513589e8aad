#!/bin/bash
# test_corrupt_zstd.sh -- damaged compressed values: a store of real text
# (C headers, stored compressed in zstd frames, store/frame.h) and one value
# of text and noise (compressed and raw frames), with one byte of data.mdb
# flipped at a dozen places in every page, one copy at a time
# (tests/faults/corrupt.c sweep: the library opens, lists, reads every key,
# writes). Then, on every flip in a page of compressed bytes or frame table,
# the daemon: it mounts, and every file reads back right or fails with EIO.
# Never wrong bytes without an error, a crash or a hang. About 20 s.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fs/mountlib.sh"
m_require_fuse

F=$T_BUILD/faults
REF=$T_TMP/ref W=$T_TMP/want C=$T_TMP/c M=$T_TMP/mnt
mkdir -p "$W" "$M"
# Real text of 5 KB to 200 KB: one to four frames of 64 KiB.
i=0
for f in /usr/include/stdio.h /usr/include/stdlib.h /usr/include/string.h \
         /usr/include/unistd.h /usr/include/x86_64-linux-gnu/sys/stat.h; do
    i=$((i + 1))
    [ -f "$f" ] || f=/usr/include/stdio.h
    cat "$f" "$f" "$f" | head -c $((i * i * 8000)) >"$W/t$i"
done
{ head -c 70000 "$W/t5"; python3 -c 'import random, sys
sys.stdout.buffer.write(random.Random(7).randbytes(70000))'; head -c 20000 "$W/t4"; } >"$W/mixed"
for k in $(ls "$W"); do "$M_AL" --store "$REF" put "$k" --file "$W/$k" >/dev/null; done
rm -f "$REF/lock.mdb"
t_check "the reference store holds them compressed" \
    python3 -c 'import json, sys; s = json.load(sys.stdin); sys.exit(not s["stored_bytes"] < s["bytes"] / 2)' \
    < <("$M_AL" --store "$REF" stats --json)

start=$(date +%s)
CORRUPT_LIST=1 "$F/corrupt" sweep "$REF" "$W" "$T_TMP/work" >"$T_TMP/sweep.out" 2>&1
t_eq "the sweep ran to its end" "$?" "0"
grep -Ev '^(same|refused): ' "$T_TMP/sweep.out" | sed 's/^/# /'
echo "# sweep took $(($(date +%s) - start)) s"
total=$(grep '^total:' "$T_TMP/sweep.out")
n() { echo "$total" | sed -n "s/.* $1 \([0-9]*\).*/\1/p"; }
t_check "flips tried: $(($(n same) + $(n refused)))" test "$(($(n same) + $(n refused)))" -gt 200
t_eq "no flipped byte read back as wrong bytes without an error" "$(n WRONG)" "0"
t_eq "no flipped byte crashed or hung the library" "$(($(n CRASH) + $(n HANG)))" "0"
t_check "flips in the pages of compressed values were refused (CRC-32C)" \
    test "$(awk '$1 == "overflow" {print $3}' "$T_TMP/sweep.out")" -gt 30

# The daemon, on the refused flips in value pages: EIO or the right bytes.
bad=0 runs=0 eio=0
while read -r page byte; do
    rm -rf "$C"; cp -r "$REF" "$C"; "$F/corrupt" flip "$C/data.mdb" $((page * 4096 + byte))
    "$M_FS" -f "$C" "$M" >"$T_TMP/fs.log" 2>&1 &
    pid=$!
    t_wait_until 10 _m_mounted_or_dead "$M" "$pid"
    if ! mountpoint -q "$M"; then
        wait "$pid"; continue # refused at start (its page check): fine
    fi
    for k in $(ls "$W"); do
        runs=$((runs + 1))
        timeout -k 1 10 cat "$M/$k" >"$T_TMP/o" 2>"$T_TMP/e"; rc=$?
        if [ "$rc" -eq 0 ]; then
            cmp -s "$T_TMP/o" "$W/$k" || { bad=$((bad + 1)); echo "# page $page byte $byte: $k WRONG BYTES"; }
        elif grep -q "Input/output error" "$T_TMP/e"; then
            eio=$((eio + 1))
        else
            bad=$((bad + 1)); echo "# page $page byte $byte: $k: exit $rc $(head -1 "$T_TMP/e")"
        fi
    done
    fusermount3 -u "$M" 2>/dev/null || fusermount3 -uz "$M"
    m_wait_gone "$pid" || { bad=$((bad + 1)); kill -KILL "$pid"; }
done < <(sed -n 's/^refused: page \([0-9]*\) (overflow), byte \([0-9]*\),.*/\1 \2/p' "$T_TMP/sweep.out" | awk 'NR % 3 == 1')
echo "# daemon: $runs reads of damaged stores, $eio EIO"
t_check "the daemon read damaged compressed values ($runs reads)" test "$runs" -gt 20
t_check "some of them failed with EIO" test "$eio" -gt 5
t_eq "the daemon never gave wrong bytes, hung or died" "$bad" "0"
t_done
