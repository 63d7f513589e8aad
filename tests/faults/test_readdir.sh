#!/bin/bash
# test_readdir.sh -- doc/faults.md, case 6, the quick and deterministic part:
# - one readdir pass split around a change: a name sorting first is added,
#   or removed, while a handle is half-way through a 1,000-name listing (the
#   first part served from the kernel's cached listing, and again with
#   another lister in between); every name that lived throughout must be
#   listed exactly once. A known daemon bug today (doc/faults.md): a loud
#   skip, a failure with OFFLOADFS_KNOWN_BUGS=1.
# - a few seconds of rewrites and evictions while two readers hold handles
#   on a rewritten name: no torn read, ENODATA once the version is gone.
# check_churn.sh runs the long version under make check-faults.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fs/mountlib.sh"
. "$(dirname "$0")/faultlib.sh"
m_require_fuse

F=$T_BUILD/faults
for b in churn mreader; do
    [ -x "$F/$b" ] || { t_not_ok "$F/$b is built (run make)"; t_done; }
done

# ---- a pass split around a change -------------------------------------------
S=$(m_store s) || { t_not_ok "make a store"; t_done; }
"$M_CTL" "$S" bulk k- 1000 10 || t_not_ok "bulk insert"
M=$T_TMP/mnt
m_mount "$S" "$M" || { t_not_ok "mount"; t_done; }
"$F/mreader" split "$M" "$S" k- 1000 >"$T_TMP/split.out" 2>"$T_TMP/split.err"; rc=$?
sed 's/^/# /' "$T_TMP/split.out"
if [ "$rc" -eq 0 ]; then
    t_ok "a readdir pass split around an added or removed name lists every other name once"
elif [ -n "${OFFLOADFS_KNOWN_BUGS:-}" ]; then
    t_not_ok "a readdir pass split around an added or removed name lists every other name once"
    cat "$T_TMP/split.err"
else
    t_skip "KNOWN BUG (fs/, doc/faults.md): a readdir pass split around a change lists a name twice or misses one: $(tr '\n' ' ' <"$T_TMP/split.err"); OFFLOADFS_KNOWN_BUGS=1 makes this a failure"
fi
f_umount "$M"; t_eq "daemon exits 0 after fusermount3 -u" "$?" "0"

# ---- no torn read under rewrites and evictions --------------------------------
# A round: churn rewrites "held" for SECS seconds while two readers hold
# handles on it. The checks below mean something only if the readers saw
# the value replaced; on a busy machine (a starved writer or watcher) a
# round may end before they do, and then runs again, longer, on a fresh
# store: up to three rounds (4, 12, 36 s). Every round's bytes are checked.
round_versions=0
for SECS in 4 12 36; do
    S2=$T_TMP/s2-$SECS M2=$T_TMP/mnt2-$SECS STOP=$T_TMP/stop-$SECS
    "$M_AL" --store "$S2" init >/dev/null || { t_not_ok "init"; t_done; }
    m_mount "$S2" "$M2" || { t_not_ok "mount"; t_done; }
    "$F/churn" "$S2" "$SECS" 200 $((2 << 20)) >"$T_TMP/churn.out" 2>&1 &
    writer=$!
    t_wait_until 10 test -e "$M2/held" || t_not_ok "the writer started"
    pids=()
    for r in 0 1; do
        "$F/mreader" hold "$M2" held "$STOP" >"$T_TMP/hold$r.out" 2>"$T_TMP/hold$r.err" &
        pids+=($!)
    done
    wait "$writer"; wrc=$?
    touch "$STOP"
    hfail=0
    for p in "${pids[@]}"; do wait "$p" || hfail=$((hfail + 1)); done
    echo "# churn $SECS s: $(cat "$T_TMP/churn.out")"
    cat "$T_TMP"/hold*.out | sed 's/^/# /'
    t_eq "the writer's model of the store stayed exact ($SECS s)" "$wrc" "0"
    t_eq "held handles: every piece of the handle's version, or ENODATA ($SECS s)" "$hfail" "0"
    cat "$T_TMP"/hold*.err | head -5
    f_umount "$M2"; t_eq "daemon exits 0 after fusermount3 -u" "$?" "0"
    round_versions=$(cat "$T_TMP"/hold*.out | awk '{s += $5} END {print s + 0}')
    [ "$round_versions" -gt 4 ] && break
done
t_check "held handles saw the value replaced ($round_versions versions seen)" test "$round_versions" -gt 4
t_done
