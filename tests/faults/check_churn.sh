#!/bin/bash
# check_churn.sh -- doc/faults.md, case 6: rewrites and evictions while readers
# read through the mount. One writer (churn) rewrites, adds, removes and --
# through a small byte bound -- evicts entries about a thousand times a
# second, keeping 1,000 "stable-NNNN" names live throughout; meanwhile
#   - readers hold handles on "held" (rewritten every 5 ms) and read random
#     pieces: every piece is bytes of the version the handle was opened on,
#     or ENODATA once that version is gone -- never a torn read;
#   - listers list the mount in slow passes: no name twice in one pass, and
#     every stable name exactly once.
# Slow (CHURN_SECONDS, 20 s by default): runs in make check-faults.
# Duplicate or missing names in a pass are a known daemon bug (doc/faults.md):
# reported as a loud skip, a failure with OFFLOADFS_KNOWN_BUGS=1.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fs/mountlib.sh"
. "$(dirname "$0")/faultlib.sh"
m_require_fuse

SECS=${CHURN_SECONDS:-20}
F=$T_BUILD/faults
for b in churn mreader; do
    [ -x "$F/$b" ] || { t_not_ok "$F/$b is built (run make)"; t_done; }
done
S=$T_TMP/s M=$T_TMP/mnt STOP=$T_TMP/stop
"$M_AL" --store "$S" init >/dev/null || { t_not_ok "init"; t_done; }
m_mount "$S" "$M" || { t_not_ok "mount"; t_done; }

# The writer runs first for a moment so the stable names exist.
"$F/churn" "$S" "$SECS" 1000 $((4 << 20)) >"$T_TMP/churn.out" 2>&1 &
writer=$!
t_wait_until 10 test -e "$M/held" || t_not_ok "the writer started"
sleep 0.5
pids=()
for r in 0 1; do
    "$F/mreader" hold "$M" held "$STOP" >"$T_TMP/hold$r.out" 2>"$T_TMP/hold$r.err" &
    pids+=($!)
done
for r in 0 1; do
    "$F/mreader" readdir "$M" "$STOP" stable- 1000 >"$T_TMP/rd$r.out" 2>"$T_TMP/rd$r.err" &
    pids+=($!)
done
wait "$writer"; wrc=$?
touch "$STOP"
for p in "${pids[@]}"; do wait "$p"; done

echo "# $(cat "$T_TMP/churn.out")"
cat "$T_TMP"/hold*.out "$T_TMP"/rd*.out | sed 's/^/# /'
t_eq "the writer kept its model of the store exact and every call succeeded" "$wrc" "0"
holdv=$(cat "$T_TMP"/hold*.out | awk '{s += $(NF)} END {print s + 0}')
t_eq "no torn read: every piece was of the handle's version, or ENODATA" "$holdv" "0"
cat "$T_TMP"/hold*.err | head -10
t_check "held handles saw versions come and go" \
    test "$(cat "$T_TMP"/hold*.out | awk '{s += $5} END {print s + 0}')" -gt 10
rdv=$(cat "$T_TMP"/rd*.out | awk '{s += $(NF)} END {print s + 0}')
passes=$(cat "$T_TMP"/rd*.out | awk '{s += $2} END {print s + 0}')
t_check "readdir passes ran ($passes)" test "$passes" -gt 2
if [ "$rdv" -eq 0 ]; then
    t_ok "each readdir pass listed every stable name once, no name twice ($passes passes)"
elif [ -n "${OFFLOADFS_KNOWN_BUGS:-}" ]; then
    t_not_ok "each readdir pass listed every stable name once, no name twice: $rdv violations"
    cat "$T_TMP"/rd*.err | head -10
else
    t_skip "KNOWN BUG (fs/, doc/faults.md): $rdv duplicate or missing names in $passes readdir passes under churn; OFFLOADFS_KNOWN_BUGS=1 makes this a failure"
    cat "$T_TMP"/rd*.err | head -5
fi
f_umount "$M"; t_eq "daemon exits 0 after fusermount3 -u" "$?" "0"
t_done
