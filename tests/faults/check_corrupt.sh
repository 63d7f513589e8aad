#!/bin/bash
# check_corrupt.sh -- issue 6, case 4, the sweep: one byte of data.mdb
# flipped (XOR 0xff) at a dozen places in every page -- page header, node
# pointers, nodes, middle, end; every field of both meta pages -- one copy
# at a time, each opened, listed, read key by key, and written by the
# agentlink library in a child process (tests/faults/corrupt.c). Then every
# case that crashed the library is tried against the real CLI and the real
# daemon, to say which command and which step dies.
#   never: wrong bytes without an error (chunks carry a CRC-32C), a hang;
#   known: LMDB trusts the contents of its pages, so some flips in branch,
#          leaf and meta pages crash it (SIGSEGV, or abort on an assertion):
#          a loud skip, a failure with OFFLOADFS_KNOWN_BUGS=1.
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
"$F/corrupt" sweep "$REF" "$W" "$T_TMP/work" >"$T_TMP/sweep.out" 2>&1
t_eq "the sweep ran to its end" "$?" "0"
sed 's/^/# /' "$T_TMP/sweep.out"
echo "# sweep took $(($(date +%s) - start)) s"
total=$(grep '^total:' "$T_TMP/sweep.out")
n() { echo "$total" | sed -n "s/.* $1 \([0-9]*\).*/\1/p"; }
t_check "flips tried: $(($(n same) + $(n refused) + $(n WRONG) + $(n CRASH) + $(n HANG)))" \
    test "$(($(n same) + $(n refused)))" -gt 1000
t_eq "no flipped byte read back as wrong bytes without an error" "$(n WRONG)" "0"
t_eq "no flipped byte hung a reader or writer" "$(n HANG)" "0"
t_check "flips in chunks were refused (CRC-32C)" \
    test "$(awk '$1 == "overflow" {print $3}' "$T_TMP/sweep.out")" -gt 100

# Each crash, again through the real programs.
flip() { python3 -c '
import sys
f = open(sys.argv[1], "r+b"); o = int(sys.argv[2]); f.seek(o); b = f.read(1)
f.seek(o); f.write(bytes([b[0] ^ 0xff]))' "$1" "$2"; }
grep '^CRASH' "$T_TMP/sweep.out" | while read -r _ _ page _ _ byte _; do
    page=${page%% *}; byte=${byte%,}
    where="page $page byte $byte"
    res=""
    for c in ls stats "get k1" "get k6" "get k12" "put newk"; do
        rm -rf "$C"; cp -r "$REF" "$C"; flip "$C/data.mdb" $((page * 4096 + byte))
        printf 'x\n' | timeout -k 1 10 "$T_BUILD/agentlink" --store "$C" $c >/dev/null 2>"$T_TMP/e"; rc=$?
        [ "$rc" -ge 124 ] && res+=" agentlink $c: exit $rc;"
    done
    rm -rf "$C"; cp -r "$REF" "$C"; flip "$C/data.mdb" $((page * 4096 + byte))
    "$M_FS" -f "$C" "$M" >"$T_TMP/fs.log" 2>&1 &
    pid=$!
    t_wait_until 10 _m_mounted_or_dead "$M" "$pid"
    if mountpoint -q "$M"; then
        timeout -k 1 10 ls "$M" >/dev/null 2>&1
        for k in $(ls "$W"); do
            timeout -k 1 5 cat "$M/$k" >/dev/null 2>&1
            [ $? -ge 124 ] && { res+=" offloadfs hangs serving;"; break; }
        done
        kill -0 "$pid" 2>/dev/null || { wait "$pid"; res+=" offloadfs died serving (exit $?);"; }
        fusermount3 -u "$M" 2>/dev/null || fusermount3 -uz "$M" 2>/dev/null
        m_wait_gone "$pid" || { kill -KILL "$pid"; wait "$pid" 2>/dev/null; }
    elif kill -0 "$pid" 2>/dev/null; then
        res+=" offloadfs hangs at start;"; kill -KILL "$pid"; wait "$pid" 2>/dev/null
    else
        wait "$pid"; rc=$?; [ "$rc" -ge 124 ] && res+=" offloadfs crashes at start (exit $rc);"
    fi
    echo "# crash at $where:${res:- (not through the CLI or the daemon)}"
done
crashes=$(n CRASH)
if [ "$crashes" -eq 0 ]; then
    t_ok "no flipped byte crashed agentlink"
elif [ -n "${OFFLOADFS_KNOWN_BUGS:-}" ]; then
    t_not_ok "no flipped byte crashed agentlink: $crashes did"
else
    t_skip "KNOWN LIMIT (LMDB trusts page contents, doc/faults.md): $crashes of the flipped bytes crash LMDB (listed above); OFFLOADFS_KNOWN_BUGS=1 makes this a failure"
fi
t_done
