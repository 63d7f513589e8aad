#!/bin/bash
# check_load.sh -- doc/faults.md, case 1: 64 writer processes (the agentlink
# library) put values of random sizes, some over max_result_bytes (cut to
# the bound, recorded as truncated), rewrite their own keys and keys they
# share, and remove some; meanwhile
#   - an independent checker (i2check: LMDB opened read-only, one read
#     transaction per check) verifies I2 and I4 after every commit it sees;
#   - four readers through a real mount read listed names whole and check
#     every byte (I1), ENODATA for names gone since listing, ENOENT for
#     never-written names (I5);
# afterwards every acknowledged key reads back exactly through the mount or
# answers ENODATA, never ENOENT, and a last check verifies every chunk's CRC.
# Slow (about a minute): runs in make check-faults.
#   LOAD_WRITERS (64), LOAD_PUTS (calls per writer, 40), LOAD_READERS (4)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fs/mountlib.sh"
. "$(dirname "$0")/faultlib.sh"
m_require_fuse

WRITERS=${LOAD_WRITERS:-64} PUTS=${LOAD_PUTS:-40} READERS=${LOAD_READERS:-4}
MAXT=$((16 << 20)) MAXR=$((1 << 20))
F=$T_BUILD/faults
for b in i2check loadwriter mreader; do
    [ -x "$F/$b" ] || { t_not_ok "$F/$b is built (run make)"; t_done; }
done

S=$T_TMP/s M=$T_TMP/mnt STOP=$T_TMP/stop L=$T_TMP/logs
mkdir -p "$L"
"$M_AL" --store "$S" init --max-total-bytes $MAXT --max-result-bytes $MAXR >/dev/null ||
    { t_not_ok "init the store"; t_done; }
m_mount "$S" "$M" || { t_not_ok "mount"; t_done; }

"$F/i2check" "$S" watch "$STOP" >"$T_TMP/i2.out" 2>"$T_TMP/i2.err" &
checker=$!
readers=()
for ((r = 0; r < READERS; r++)); do
    "$F/mreader" load "$M" $MAXR "$STOP" >"$T_TMP/r$r.out" 2>"$T_TMP/r$r.err" &
    readers+=($!)
done

start=$(date +%s%N)
writers=()
for ((w = 0; w < WRITERS; w++)); do
    "$F/loadwriter" "$S" $w "$PUTS" 6 $MAXR "$L/w$w.log" 2>"$L/w$w.err" &
    writers+=($!)
done
wfail=0
for p in "${writers[@]}"; do wait "$p" || wfail=$((wfail + 1)); done
ms=$((($(date +%s%N) - start) / 1000000))
touch "$STOP"
wait "$checker"; crc=$?
rfail=0
for p in "${readers[@]}"; do wait "$p" || rfail=$((rfail + 1)); done

puts=$(cat "$L"/w*.log | grep -c '^put ')
cut=$(cat "$L"/w*.log | awk '$1 == "put" && $6 == 1' | wc -l)
rms=$(cat "$L"/w*.log | grep -c '^rm ')
errs=$(cat "$L"/w*.log | grep -c '^err ')
echo "# $WRITERS writers: $puts puts acknowledged ($cut over max_result_bytes, cut), $rms removals, $errs failed calls, in $ms ms"
echo "# checker: $(cat "$T_TMP/i2.out")"
cat "$T_TMP"/r*.out | sed 's/^/# /'
t_eq "every writer exited 0 ($WRITERS writers)" "$wfail" "0"
t_eq "no call failed" "$errs" "0"
grep -h '^err' "$L"/w*.log | head -5
t_check "puts over max_result_bytes happened and were cut ($cut)" test "$cut" -gt 0
t_eq "I2/I4 held after every commit the checker saw" "$crc" "0"
head -20 "$T_TMP/i2.err"
t_check "the checker saw commits ($(awk '{print $4}' "$T_TMP/i2.out"))" \
    test "$(awk '{print $4}' "$T_TMP/i2.out")" -gt 50
t_eq "readers through the mount saw only exact bytes, ENODATA or ENOENT as due" "$rfail" "0"
grep -h 'VIOLATION:' "$T_TMP"/r*.err | grep -v READDIR | head -20
rdv=$(cat "$T_TMP"/r*.out | awk '{for (i = 1; i < NF; i++) if ($i == "readdir_violations") s += $(i + 1)} END {print s + 0}')
if [ "$rdv" -eq 0 ]; then
    t_ok "no name listed twice in one readdir pass"
elif [ -n "${OFFLOADFS_KNOWN_BUGS:-}" ]; then
    t_not_ok "no name listed twice in one readdir pass: $rdv"
    grep -h 'READDIR' "$T_TMP"/r*.err | head -5
else
    t_skip "KNOWN BUG (fs/, doc/faults.md): $rdv names listed twice in one readdir pass under load; OFFLOADFS_KNOWN_BUGS=1 makes this a failure"
fi
t_check "readers verified entries" test "$(cat "$T_TMP"/r*.out | awk '{s += $6} END {print s + 0}')" -gt 0

# Once the writers are done (and the mount has caught up: 1 s), every
# acknowledged key reads back exactly or answers ENODATA.
sleep 1.2
"$F/mreader" final "$M" $MAXR "$L"/w*.log >"$T_TMP/final.out" 2>"$T_TMP/final.err"
t_eq "final: acknowledged keys read back exactly or ENODATA (I1, I5)" "$?" "0"
echo "# $(cat "$T_TMP/final.out")"
head -20 "$T_TMP/final.err"
"$F/i2check" "$S" once --crc >"$T_TMP/i2f.out" 2>&1
t_eq "final: I2, I4 and every chunk's CRC hold" "$?" "0"
echo "# $(cat "$T_TMP/i2f.out")"
t_rc "agentlink stats still works" 0 "$M_AL" --store "$S" stats --json
t_check "stats: bytes within the bound" python3 -c "
import json, sys; j = json.load(open(sys.argv[1])); sys.exit(not (j['bytes'] <= j['max_total_bytes'] and j['evictions'] > 0))" "$T_TMP/out"

# The checkers can fail: a store whose recorded total is off by one byte,
# and a value whose bytes do not match its header.
cp -r "$S" "$T_TMP/off"
rm -f "$T_TMP/off/lock.mdb"
mdb_dump -s meta "$T_TMP/off" >"$T_TMP/meta.dump"
python3 - "$T_TMP/meta.dump" <<'EOF'
import struct, sys
lines = open(sys.argv[1]).read().split("\n")
for i, l in enumerate(lines):
    if l.startswith(" ") and i > 0 and lines[i - 1].strip() == "7374617465":  # "state"
        v = bytearray(bytes.fromhex(l.strip()))
        struct.pack_into("<Q", v, 64, struct.unpack_from("<Q", v, 64)[0] + 1)  # live_bytes
        lines[i] = " " + v.hex()
open(sys.argv[1], "w").write("\n".join(lines))
EOF
mdb_load -s meta "$T_TMP/off" <"$T_TMP/meta.dump" 2>/dev/null
"$F/i2check" "$T_TMP/off" once >/dev/null 2>"$T_TMP/off.err"
t_eq "i2check catches a total off by one byte" "$?" "1"
t_check "and says so" grep -q "sum of live sizes .* != recorded total" "$T_TMP/off.err"
printf 'OFSL key=forged seed=1 len=60\nthese bytes are not the ones seed 1 gives.' |
    "$M_AL" --store "$S" put forged >/dev/null
echo "put forged 1 60 60 0" >"$T_TMP/forged.log"
sleep 1.2
"$F/mreader" final "$M" $MAXR "$T_TMP/forged.log" >/dev/null 2>"$T_TMP/forged.err"
t_eq "mreader catches bytes that do not match their header" "$?" "1"
t_check "and says where" grep -q "'forged' (seed 1): .* first difference at" "$T_TMP/forged.err"

f_umount "$M"; t_eq "daemon exits 0 after fusermount3 -u" "$?" "0"
t_done
