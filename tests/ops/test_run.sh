#!/bin/bash
# test_run.sh -- make run / make stop with a scratch OFFLOADFS_STORE and
# OFFLOADFS_MOUNT, and make demo's script run to the end.
# run.sh: alone (make, an install or a machine-wide path)
. "$(dirname "$0")/../lib.sh"

if [ "$(id -u)" -ne 0 ] && [ ! -w /dev/fuse ]; then t_skip "make run needs FUSE"; t_done; fi
[ -c /dev/fuse ] || { t_skip "make run needs /dev/fuse"; t_done; }
unset OFFLOADFS_NAMESPACE OFFLOADFS_CONFIG
export OFFLOADFS_STORE=$T_TMP/store OFFLOADFS_MOUNT=$T_TMP/mnt
M=$OFFLOADFS_MOUNT
mk() { make -s --no-print-directory -C "$T_TOP" "$@"; }
# The daemon make run leaves in the background, found by its mountpoint.
daemon_pid() {
    local f
    for f in /proc/[0-9]*/cmdline; do
        tr '\0' ' ' 2>/dev/null <"$f" | grep -qE "^([^ ]*/)?offloadfs .* $M $" && { f=${f#/proc/}; echo "${f%/cmdline}"; }
    done
    return 0
}
is_mounted() { awk -v m="$M" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo; }
t_on_exit 'is_mounted && { fusermount3 -u "$M" || fusermount3 -uz "$M"; }'

t_rc "make run exits 0" 0 mk run
t_check "it created the store" test -f "$T_TMP/store/data.mdb"
t_check "it mounted the store" mountpoint -q "$M"
t_eq "as fuse.offloadfs" "$(findmnt -rn -o FSTYPE "$M")" fuse.offloadfs
t_eq "its first line says what is mounted where" "$(head -1 "$T_TMP/out")" \
    "offloadfs: store $T_TMP/store (namespace default) is mounted read-only at $M"
t_check "it says how to feed it" grep -qF "agentlink --store $T_TMP/store --mount $M put build-log --tool bash" "$T_TMP/out"
t_check "and how to unmount" grep -qF "OFFLOADFS_MOUNT=$M make stop" "$T_TMP/out"
pid=$(daemon_pid)
t_check "the daemon runs in the background" test -n "$pid"
# Feed it the way make run says.
seq 1 100000 | "$T_TOP/build/agentlink" --store "$T_TMP/store" --mount "$M" put build-log --tool bash >/dev/null
t_wait_until 2 test -e "$M/build-log"
t_eq "what was fed reads back through the mount" "$(sed -n 10,12p "$M/build-log" | tr '\n' ' ')" "10 11 12 "
t_rc "make run again exits 0" 0 mk run
t_eq "and says it is already mounted" "$(cat "$T_TMP/out")" "offloadfs: $M is already mounted (make stop unmounts it)"
t_eq "one daemon still" "$(daemon_pid)" "$pid"

t_rc "make stop exits 0" 0 mk stop
t_eq "it says so" "$(cat "$T_TMP/out")" "offloadfs: unmounted $M"
t_check "the mount is gone" bash -c "! mountpoint -q '$M'"
t_check "the daemon exits" t_wait_until 10 test ! -e "/proc/$pid"
t_rc "make stop with nothing mounted exits 0" 0 mk stop
t_eq "and says so" "$(cat "$T_TMP/out")" "offloadfs: nothing is mounted at $M"
OFFLOADFS_MOUNT=relative t_rc "a relative OFFLOADFS_MOUNT exits 1" 1 "$T_TOP/scripts/run.sh"
t_eq "with a message" "$(cat "$T_TMP/err")" "offloadfs: mountpoint 'relative' is not an absolute path (OFFLOADFS_MOUNT)"
mkdir -p "$T_TMP/other"
mount -t tmpfs none "$T_TMP/other" 2>/dev/null && {
    t_on_exit "mountpoint -q '$T_TMP/other' && umount '$T_TMP/other'"
    OFFLOADFS_MOUNT=$T_TMP/other t_rc "make stop leaves another filesystem alone" 1 "$T_TOP/scripts/run.sh" stop
    t_eq "and says why" "$(cat "$T_TMP/err")" "offloadfs: $T_TMP/other holds a tmpfs mount, not offloadfs: left alone"
    umount "$T_TMP/other"
}

# ---- make demo's script --------------------------------------------------------------------
unset OFFLOADFS_STORE OFFLOADFS_MOUNT
timeout 60 "$T_TOP/scripts/demo.sh" >"$T_TMP/demo" 2>&1; rc=$?
t_eq "scripts/demo.sh exits 0" "$rc" 0
t_check "it shows \"No data available\" for the evicted result" grep -q "call_build_1: No data available" "$T_TMP/demo"
t_check "it reads the result back with grep" grep -qx "60001:error: linker failed at step 60000" "$T_TMP/demo"
t_check "the read-back is identical to the tool's output" grep -qx "identical to what the tool returned" "$T_TMP/demo"
t_check "it unmounts and the daemon exits 0" grep -qx "daemon exited 0" "$T_TMP/demo"
t_check "no demo line reports a failure" bash -c "! grep -q '^demo:' '$T_TMP/demo'"
t_check "no colour codes when not on a terminal" bash -c "! grep -q $'\\033' '$T_TMP/demo'"
W=$(sed -n 's/^Done\. Scratch files in \(.*\) are removed\..*/\1/p' "$T_TMP/demo")
t_check "it names its scratch directory" test -n "$W"
t_check "and removes it" test ! -e "$W"
t_check "leaving no mount behind" bash -c "! grep -qF '$W' /proc/self/mountinfo"

t_done
