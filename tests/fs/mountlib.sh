# tests/fs/mountlib.sh -- mount helpers for the offloadfs shell tests.
# Source after tests/lib.sh. Every mount made with m_mount is unmounted by
# t_cleanup even when a test dies half-way; m_umount checks the daemon's
# exit status.
#
#   m_require_fuse            skip (loudly) unless root with /dev/fuse
#   m_store NAME [MAX_TOTAL]  makes a fresh store $T_TMP/NAME, prints its path
#   m_put S KEY [NS [TOOL]]   stores stdin under KEY
#   m_rm S KEY [NS]           removes KEY
#   m_get S KEY [NS]          the stored bytes on stdout
#   m_mount S MNT [ARGS...]   starts offloadfs -f ARGS S MNT, log in MNT.log,
#                             waits (T_WAIT_MIN s deadline, M_MOUNT_WAIT s
#                             when set: a daemon under valgrind) for the mount
#   m_umount MNT              fusermount3 -u, then returns the daemon's status
#   m_pid MNT                 the daemon's pid
#   m_wait_gone PID           waits (T_WAIT_MIN s, or M_MOUNT_WAIT) for PID to exit,
#                             returns its status
#   m_refused DESC MNT ARGS...  ok when offloadfs -f ARGS exits 2 (T_WAIT_MIN s
#                             deadline, or M_MOUNT_WAIT s; M_REFUSED_RC=N: exits N)
#                             adding no mount on MNT; stderr in $T_TMP/err. A daemon
#                             that mounts anyway is SIGKILLed at once and MNT lazily
#                             unmounted.
#   m_mounts_at PATH          how many mounts sit on PATH (mountinfo only)
#   m_second_user             makes a system user for this test (removed on
#                             exit): M_USER, M_UID, M_GID; m_as_user CMD...
#                             runs CMD as that user, without groups
#
# The store is fed with build/agentlink when it exists (the real CLI), else
# with build/tools/storectl; M_FEEDER=storectl forces the latter.
M_FS=${OFFLOADFS_BIN:-$T_BUILD/offloadfs}
M_PROBE=$T_BUILD/tools/fsprobe
M_CTL=$T_BUILD/tools/storectl
M_AL=$T_BUILD/agentlink
declare -A M_PIDS=()

if [ "${M_FEEDER:-}" != storectl ] && [ -x "$M_AL" ]; then M_FEEDER=agentlink
else M_FEEDER=storectl; fi

m_require_fuse() {
    if [ "$(id -u)" -ne 0 ]; then t_skip "offloadfs mount tests need root"; t_done; fi
    if [ ! -c /dev/fuse ]; then t_skip "offloadfs mount tests need /dev/fuse"; t_done; fi
    if [ ! -x "$M_FS" ] || [ ! -x "$M_PROBE" ] || [ ! -x "$M_CTL" ]; then
        t_not_ok "build/offloadfs and build/tools/* are built (run make)"; t_done
    fi
}

m_store() { # m_store NAME [MAX_TOTAL_BYTES]
    local s=$T_TMP/$1
    if [ "$M_FEEDER" = agentlink ]; then
        "$M_AL" --store "$s" init ${2:+--max-total-bytes "$2"} >/dev/null || return 1
    else
        "$M_CTL" "$s" init ${2:+"$2"} || return 1
    fi
    echo "$s"
}

m_put() { # m_put STORE KEY [NS [TOOL]] < data
    if [ "$M_FEEDER" = agentlink ]; then
        "$M_AL" --store "$1" ${3:+--namespace "$3"} put "$2" ${4:+--tool "$4"} >/dev/null
    else
        "$M_CTL" "$1" put "$2" "${3:-default}" ${4:+"$4"} >/dev/null
    fi
}

m_rm() { # m_rm STORE KEY [NS]
    if [ "$M_FEEDER" = agentlink ]; then
        "$M_AL" --store "$1" ${3:+--namespace "$3"} rm "$2" >/dev/null
    else
        "$M_CTL" "$1" rm "$2" "${3:-default}"
    fi
}

m_get() { # m_get STORE KEY [NS]
    if [ "$M_FEEDER" = agentlink ]; then
        "$M_AL" --store "$1" ${3:+--namespace "$3"} get "$2"
    else
        "$M_CTL" "$1" get "$2" "${3:-default}"
    fi
}

m_pid() { echo "${M_PIDS[$1]:-}"; }

# Returns 0 once PID has exited (status in M_STATUS), 1 after the deadline.
m_wait_gone() {
    local pid=$1 i
    for ((i = 0; i < ${M_MOUNT_WAIT:-$T_WAIT_MIN} * 50; i++)); do
        if ! kill -0 "$pid" 2>/dev/null; then
            wait "$pid" 2>/dev/null; M_STATUS=$?; return 0
        fi
        sleep 0.02
    done
    return 1
}

_m_mounted_or_dead() { mountpoint -q "$1" || ! kill -0 "$2" 2>/dev/null; }

m_mount() { # m_mount STORE MNT [ARGS...]
    local s=$1 mnt=$2 pid; shift 2
    mkdir -p "$mnt"
    "$M_FS" -f "$@" "$s" "$mnt" >"$mnt.log" 2>&1 &
    pid=$!
    M_PIDS[$mnt]=$pid
    t_on_exit "_m_cleanup '$mnt' $pid"
    t_wait_until "${M_MOUNT_WAIT:-$T_WAIT_MIN}" _m_mounted_or_dead "$mnt" "$pid"
    if ! mountpoint -q "$mnt"; then
        echo "  offloadfs did not mount $mnt; log:"; sed 's/^/    /' "$mnt.log"
        return 1
    fi
}

m_umount() { # m_umount MNT : returns the daemon's exit status
    local mnt=$1 pid=${M_PIDS[$1]:-}
    fusermount3 -u "$mnt" || return 99
    [ -n "$pid" ] || return 0
    m_wait_gone "$pid" || { echo "  daemon $pid still running after unmount"; return 98; }
    unset "M_PIDS[$mnt]"
    return "$M_STATUS"
}

_m_cleanup() {
    local mnt=$1 pid=$2
    mountpoint -q "$mnt" 2>/dev/null && { fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null; }
    if kill -0 "$pid" 2>/dev/null; then
        m_wait_gone "$pid" || { kill "$pid" 2>/dev/null; m_wait_gone "$pid"; }
    fi
    return 0
}

# Mount state comes from /proc/self/mountinfo only: touching a mount whose
# daemon waits on itself would block the test with it.
m_mounts_at() { awk -v p="$1" '$5 == p {n++} END {print n + 0}' /proc/self/mountinfo; }

# Kills daemon PID hard (a FUSE wait always yields to SIGKILL, and the dead
# daemon's mount then fails fast) and lazily unmounts MNT down to KEEP mounts.
_m_hard_cleanup() {
    local pid=$1 mnt=$2 keep=${3:-0} i
    kill -9 "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    for ((i = 0; i < 5; i++)); do
        [ "$(m_mounts_at "$mnt")" -gt "$keep" ] || break
        timeout 5 umount -l "$mnt" 2>/dev/null || timeout 5 fusermount3 -uz "$mnt" 2>/dev/null
    done
    return 0
}
_m_exited_or_mounted() { ! kill -0 "$1" 2>/dev/null || [ "$(m_mounts_at "$2")" -gt "$3" ]; }

m_refused() { # m_refused DESC MNT ARGS...
    local desc=$1 mnt=$2 before pid rc want=${M_REFUSED_RC:-2}; shift 2
    before=$(m_mounts_at "$mnt")
    "$M_FS" -f "$@" >"$T_TMP/err" 2>&1 &
    pid=$!
    t_on_exit "_m_hard_cleanup $pid '$mnt' $before"
    t_wait_until "${M_MOUNT_WAIT:-$T_WAIT_MIN}" _m_exited_or_mounted "$pid" "$mnt" "$before"
    if kill -0 "$pid" 2>/dev/null; then
        t_not_ok "$desc"
        echo "  offloadfs did not exit: mounts on $mnt: $(m_mounts_at "$mnt") (were $before); killed it"
        _m_hard_cleanup "$pid" "$mnt" "$before"
        return 1
    fi
    wait "$pid"; rc=$?
    if [ "$rc" -eq "$want" ] && [ "$(m_mounts_at "$mnt")" -eq "$before" ]; then t_ok "$desc"; return 0; fi
    t_not_ok "$desc"
    echo "  exit $rc, want $want; mounts on $mnt: $(m_mounts_at "$mnt") (were $before); $(head -c 400 "$T_TMP/err")"
    _m_hard_cleanup "$pid" "$mnt" "$before"
    return 1
}

# m_errno OP PATH [ARG] : the errno name a real syscall gets ("0": success).
m_errno() { "$M_PROBE" errno "$@"; }

# m_within SECONDS CMD... : like t_wait_until, and prints the time it took
# (ms) into M_WAITED_MS.
m_within() {
    local limit=$1 start; shift
    start=$(date +%s%N)
    t_wait_until "$limit" "$@"; local rc=$?
    M_WAITED_MS=$(( ($(date +%s%N) - start) / 1000000 ))
    return $rc
}

m_second_user() {
    local i
    M_USER=ofst$$
    for ((i = 0; i < 100; i++)); do # another test may hold /etc/passwd's lock
        useradd --system --no-create-home --user-group --shell /usr/sbin/nologin "$M_USER" \
            2>"$T_TMP/useradd.err" && break
        sleep 0.2
    done
    id -u "$M_USER" >/dev/null 2>&1 || { echo "  useradd $M_USER: $(cat "$T_TMP/useradd.err")"; return 1; }
    t_on_exit "userdel '$M_USER' 2>/dev/null; groupdel '$M_USER' 2>/dev/null"
    M_UID=$(id -u "$M_USER") M_GID=$(id -g "$M_USER")
}
m_as_user() { setpriv --reuid="$M_UID" --regid="$M_GID" --clear-groups "$@"; }
