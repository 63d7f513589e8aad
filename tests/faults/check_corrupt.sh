#!/bin/bash
# check_corrupt.sh -- doc/faults.md, case 4, the sweep: one byte of data.mdb
# flipped (XOR 0xff) at a dozen places in every page -- page header, node
# pointers, nodes, middle, end; every field of both meta pages -- one copy
# at a time, and each copy used three ways:
#   the library (tests/faults/corrupt.c, in a child process: open, list,
#     read every key, stats, put), whose handles check every page of
#     data.mdb at open (store/verify.h);
#   the CLI (ls, get of three keys, put) on every flip in a tree page: it
#     checks quickly at open, and a fault on a deeper damaged page becomes
#     "store file is damaged", exit 1 (agentlink/cli/setup.c);
#   the daemon on every flip the library refused: it must refuse to mount
#     (it checks every page at start), or mount and serve the right bytes.
# Never: wrong bytes without an error (chunks carry a CRC-32C), a crash (a
# signal), a hang, a message that is not the program's own.
# The figures go into doc/faults.md. About a minute: make check-faults.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fs/mountlib.sh"
m_require_fuse

F=$T_BUILD/faults
[ -x "$F/corrupt" ] || { t_not_ok "$F/corrupt is built (run make)"; t_done; }
REF=$T_TMP/ref W=$T_TMP/want C=$T_TMP/c M=$T_TMP/mnt
mkdir -p "$W" "$M"
# The same small store as test_corrupt.sh: 12 values of 900 B to 130 KB,
# one removed key, one in another namespace; deterministic bytes.
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
    python3 -c 'import random, sys; r = random.Random(int(sys.argv[1]))
sys.stdout.buffer.write(bytes(r.getrandbits(8) for _ in range(int(sys.argv[2]))))' "$i" $((i * i * 900)) >"$W/k$i"
    "$M_AL" --store "$REF" put "k$i" --tool t --file "$W/k$i" >/dev/null
done
printf 'gone\n' | "$M_AL" --store "$REF" put gone >/dev/null
"$M_AL" --store "$REF" rm gone
printf 'other\n' | "$M_AL" --store "$REF" --namespace other put o1 >/dev/null
rm -f "$REF/lock.mdb"

start=$(date +%s)
CORRUPT_LIST=1 "$F/corrupt" sweep "$REF" "$W" "$T_TMP/work" >"$T_TMP/sweep.out" 2>&1
t_eq "the sweep ran to its end" "$?" "0"
grep -Ev '^(same|refused): ' "$T_TMP/sweep.out" | sed 's/^/# /'
echo "# sweep took $(($(date +%s) - start)) s"
total=$(grep '^total:' "$T_TMP/sweep.out")
n() { echo "$total" | sed -n "s/.* $1 \([0-9]*\).*/\1/p"; }
t_check "flips tried: $(($(n same) + $(n refused) + $(n WRONG) + $(n CRASH) + $(n HANG)))" \
    test "$(($(n same) + $(n refused)))" -gt 1000
t_eq "no flipped byte read back as wrong bytes without an error" "$(n WRONG)" "0"
t_eq "no flipped byte hung a reader or writer" "$(n HANG)" "0"
t_check "flips in chunks were refused (CRC-32C)" \
    test "$(awk '$1 == "overflow" {print $3}' "$T_TMP/sweep.out")" -gt 100

t_eq "no flipped byte crashed the library (every page checked at open)" "$(n CRASH)" "0"

copy_flipped() { # PAGE BYTE: a fresh copy of the store with that byte flipped
    rm -rf "$C"; cp -r "$REF" "$C"; "$F/corrupt" flip "$C/data.mdb" $(($1 * 4096 + $2)); }

# Every flip, for the CLI and the daemon.
sed -n 's/^\([a-z]*\): page \([0-9]*\) (\([a-z/]*\)), byte \([0-9]*\),.*/\1 \2 \3 \4/p' \
    "$T_TMP/sweep.out" >"$T_TMP/flips"

# The CLI on every flip in a meta, branch or leaf page.
cli_bad=0 cli_runs=0 cli_refused=0 cli_guard=0
while read -r _ page kind byte; do
    [ "$kind" = overflow ] && continue
    copy_flipped "$page" "$byte" # reads change nothing; the put comes last
    for c in ls "get k1" "get k6" "get k12" "put newk"; do
        printf 'x\n' | timeout -k 1 10 "$T_BUILD/agentlink" --store "$C" $c >"$T_TMP/o" 2>"$T_TMP/e"
        rc=$? cli_runs=$((cli_runs + 1))
        what=""
        if [ "$rc" -ge 124 ]; then what="exit $rc (a signal or a hang)"
        elif [ "$rc" -ne 0 ] && ! tail -1 "$T_TMP/e" | grep -q "^agentlink: "; then what="unclear message"
        elif [ "$rc" -eq 0 ] && [ "${c%% *}" = get ] && ! cmp -s "$T_TMP/o" "$W/${c#get }"; then
            what="WRONG BYTES"
        fi
        [ "$rc" -ne 0 ] && cli_refused=$((cli_refused + 1))
        grep -q "a damaged page stopped LMDB" "$T_TMP/e" && cli_guard=$((cli_guard + 1))
        if [ -n "$what" ]; then
            cli_bad=$((cli_bad + 1))
            echo "# CLI, page $page ($kind) byte $byte, agentlink $c: $what: $(tail -1 "$T_TMP/e")"
        fi
    done
done <"$T_TMP/flips"
echo "# CLI: $cli_runs runs on tree-page flips, $cli_refused refused with a message, $cli_guard of them by the fault guard"
t_check "the CLI ran on tree-page flips ($cli_runs runs)" test "$cli_runs" -gt 1000
t_eq "no flipped byte crashed, hung or fooled the CLI" "$cli_bad" "0"

# The daemon on every flip the library refused.
fs_bad=0 fs_runs=0 fs_refused=0
while read -r outcome page kind byte; do
    [ "$outcome" = refused ] && [ "$kind" != overflow ] || continue
    copy_flipped "$page" "$byte"
    fs_runs=$((fs_runs + 1)) what=""
    "$M_FS" -f "$C" "$M" >"$T_TMP/fs.log" 2>&1 &
    pid=$!
    t_wait_until 10 _m_mounted_or_dead "$M" "$pid"
    if mountpoint -q "$M"; then
        timeout -k 1 10 ls "$M" >/dev/null 2>&1 || true
        for k in $(ls "$W"); do
            timeout -k 1 5 cat "$M/$k" >"$T_TMP/o" 2>/dev/null; rc=$?
            [ "$rc" -ge 124 ] && { what+=" hangs serving"; break; }
            [ "$rc" -eq 0 ] && ! cmp -s "$T_TMP/o" "$W/$k" && what+=" WRONG BYTES in $k"
        done
        kill -0 "$pid" 2>/dev/null || what+=" died serving"
        fusermount3 -u "$M" 2>/dev/null || fusermount3 -uz "$M" 2>/dev/null
        m_wait_gone "$pid" || { kill -KILL "$pid"; wait "$pid" 2>/dev/null; }
    elif kill -0 "$pid" 2>/dev/null; then
        what+=" hangs at start"; kill -KILL "$pid"; wait "$pid" 2>/dev/null
    else
        wait "$pid"; rc=$?
        if [ "$rc" -ne 1 ]; then what+=" exit $rc at start"
        elif ! grep -Eq "^offloadfs: store '$C': store (file is damaged|was made by another format)" "$T_TMP/fs.log"; then
            what+=" unclear message: $(head -1 "$T_TMP/fs.log")"
        else fs_refused=$((fs_refused + 1)); fi
    fi
    if [ -n "$what" ]; then
        fs_bad=$((fs_bad + 1))
        echo "# daemon, page $page ($kind) byte $byte:$what"
    fi
done <"$T_TMP/flips"
echo "# daemon: $fs_runs tree-page flips the library refused; $fs_refused refused at start"
t_check "the daemon ran on refused flips ($fs_runs)" test "$fs_runs" -gt 50
t_eq "no flipped byte crashed, hung or fooled the daemon" "$fs_bad" "0"
t_done
