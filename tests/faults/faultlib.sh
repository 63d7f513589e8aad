# tests/faults/faultlib.sh -- helpers of the fault tests. Source after
# tests/lib.sh and tests/fs/mountlib.sh.
#
#   f_umount MNT   as m_umount (fusermount3 -u, then the daemon's exit
#                  status), but retries for up to 5 s while the kernel still
#                  calls the mount busy: readers just killed or finished may
#                  leave requests in flight for a moment.

f_umount() {
    local mnt=$1 pid=${M_PIDS[$1]:-} i
    for ((i = 0; i < 50; i++)); do
        fusermount3 -u "$mnt" 2>/dev/null && break
        sleep 0.1
    done
    if [ "$i" -ge 50 ]; then
        fusermount3 -u "$mnt"
        return 99
    fi
    [ -n "$pid" ] || return 0
    m_wait_gone "$pid" || { echo "  daemon $pid still running after unmount"; return 98; }
    unset "M_PIDS[$mnt]"
    return "$M_STATUS"
}
