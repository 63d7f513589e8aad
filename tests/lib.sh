# tests/lib.sh -- shared helpers for shell tests. Source it; every check
# prints "ok - DESC" or "not ok - DESC" (tests/run.sh counts those lines),
# and t_done exits non-zero when any check failed.
set -u
T_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
T_BUILD=${OFFLOADFS_BUILD:-$T_TOP/build}
# Programs under test; OFFLOADFS_WRAP (e.g. valgrind) runs them under a tool.
AGENTLINK="${OFFLOADFS_WRAP:+$OFFLOADFS_WRAP }$T_BUILD/agentlink"
OFFLOADFS="${OFFLOADFS_WRAP:+$OFFLOADFS_WRAP }$T_BUILD/offloadfs"
T_FAILS=0
T_TMP=$(mktemp -d /tmp/offloadfs-t.XXXXXX)
T_CLEANUPS=()

t_ok()     { echo "ok - $*"; }
t_not_ok() { echo "not ok - $*"; T_FAILS=$((T_FAILS + 1)); }
t_skip()   { echo "skip - $*"; echo "SKIPPED LOUDLY: $*" >&2; }

# t_check DESC CMD... : ok when CMD exits 0.
t_check() { local d=$1; shift; if "$@"; then t_ok "$d"; else t_not_ok "$d"; fi; }

# t_eq DESC GOT WANT : ok when the two strings are equal.
t_eq() {
    if [ "$2" == "$3" ]; then t_ok "$1"
    else t_not_ok "$1"; printf '  got:  %q\n  want: %q\n' "$2" "$3"; fi
}

# t_rc DESC WANT CMD... : runs CMD (stdout, stderr to $T_TMP/out, err) and
# checks its exit code.
t_rc() {
    local d=$1 want=$2 rc; shift 2
    "$@" >"$T_TMP/out" 2>"$T_TMP/err"; rc=$?
    if [ "$rc" -eq "$want" ]; then t_ok "$d"
    else t_not_ok "$d"; echo "  exit $rc, want $want; stderr: $(head -c 400 "$T_TMP/err")"; fi
}

# t_wait_until SECONDS CMD... : polls CMD every 20 ms until it succeeds or
# the deadline passes; returns CMD's last status. The deadline is never less
# than T_WAIT_MIN seconds: it bounds a wait for what must happen, on a
# loaded machine or under valgrind (many times slower), and is never a
# figure a test asserts (m_within reports the time a wait took).
T_WAIT_MIN=${T_WAIT_MIN:-60}
t_wait_until() {
    local limit=$1 start; shift
    [ "$limit" -ge "$T_WAIT_MIN" ] || limit=$T_WAIT_MIN
    start=$(date +%s%N)
    while ! "$@"; do
        [ $(( ($(date +%s%N) - start) / 1000000 )) -ge $((limit * 1000)) ] && return 1
        sleep 0.02
    done
}

t_cleanup() {
    local i
    for ((i = ${#T_CLEANUPS[@]} - 1; i >= 0; i--)); do eval "${T_CLEANUPS[$i]}" || true; done
    rm -rf "$T_TMP"
}
trap t_cleanup EXIT
t_on_exit() { T_CLEANUPS+=("$*"); }

t_done() { [ "$T_FAILS" -eq 0 ]; exit $?; }
