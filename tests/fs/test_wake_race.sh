#!/bin/bash
# A root daemon serving a user's store, raced by that user for real: a
# second local user owns a scratch store and runs tests/tools/wakeracer,
# which watches the store with inotify and, the moment the daemon makes its
# wake-up socket,
#   link: renames a hard link to a root-owned 0666 file over the socket's
#         temporary name (the old daemon then chowned and chmodded that
#         file to the user, or published it as its socket);
#   dir:  swaps STORE/wake for a symlink to a root-owned directory (the old
#         daemon then bound a root-owned socket there, never removed).
# The daemon is mounted (-o allow_other) and unmounted WAKE_RACE_N times
# per mode (50; 3 when the daemon runs under valgrind). Each attempt must
# leave root's file root's, 0666, with its bytes, nothing in root's
# directory, and every *.sock in STORE/wake a socket of the user's.
# The daemon of 43c9784 lost 26 to 36 of the 50 link attempts (root's file
# became the user's, 0600, and was published as the daemon's socket) and
# 11 to 20 of the 50 dir attempts (a root socket left in root's directory),
# in five runs on a 2-core VM; the fixed one loses none.
# First, without the attacker: the socket is the user's, 0600, and works.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse
RACER=$T_BUILD/tools/wakeracer
[ -x "$RACER" ] || { t_not_ok "build/tools/wakeracer is built (run make)"; t_done; }
for c in useradd userdel setpriv; do
    command -v "$c" >/dev/null || { t_not_ok "$c is installed (scripts/deps.sh)"; t_done; }
done
WRAP=${OFFLOADFS_WRAP:-}
N=${WAKE_RACE_N:-$([ -n "$WRAP" ] && echo 3 || echo 50)}

# ---- the second user ----------------------------------------------------
m_second_user || { t_not_ok "make a second user"; t_done; }
U=$M_USER UID_=$M_UID GID_=$M_GID
as_user() { m_as_user "$@"; }

chmod 711 "$T_TMP" # let the user reach the store and root's file
S=$(m_store st) || { t_not_ok "make a store"; t_done; }
chown -R "$UID_:$GID_" "$S"
as_user mkdir -m 700 "$S/wake" || { t_not_ok "the user makes STORE/wake"; t_done; }
mkdir -m 755 "$T_TMP/vdir" "$T_TMP/rootdir"
V=$T_TMP/vdir/victim R=$T_TMP/rootdir M=$T_TMP/m
mkdir -p "$M"
victim_reset() { printf "root's secret\n" >"$V"; chown 0:0 "$V"; chmod 666 "$V"; }
victim_ok() { [ "$(stat -c '%u %g %a' "$V")" = "0 0 666" ] && [ "$(cat "$V")" = "root's secret" ]; }
victim_reset

# sockets_ok: every *.sock in STORE/wake is a socket of the user's (those
# counted in SOCKS).
sockets_ok() {
    local f
    for f in "$S"/wake/*.sock; do
        [ -e "$f" ] || [ -L "$f" ] || continue
        [ "$(stat -c '%F %u' "$f")" = "socket $UID_" ] || { echo "  $f: $(stat -c '%F %U %a' "$f")"; return 1; }
        SOCKS=$((SOCKS + 1))
    done
}

# start: the daemon (under $WRAP) on $S at $M; 1 when it did not mount.
start() {
    local pid
    # prefetch=0 under valgrind: fs/fs.h says why
    $WRAP "$M_FS" -f -o allow_other ${WRAP:+-o prefetch=0} "$S" "$M" >"$M.log" 2>&1 &
    pid=$!
    M_PIDS[$M]=$pid
    t_wait_until 30 _m_mounted_or_dead "$M" "$pid"
    mountpoint -q "$M" && return 0
    echo "  did not mount:"; sed 's/^/    /' "$M.log"
    _m_cleanup "$M" "$pid"
    return 1
}

# attempt MODE: mounts and unmounts once; counts in LOST, BAD_RUN.
attempt() {
    local lost=0
    start || { BAD_RUN=$((BAD_RUN + 1)); return; }
    # dir: listing STORE/wake would itself set the attacker off
    [ "$1" = dir ] || sockets_ok || lost=1
    m_umount "$M" || { BAD_RUN=$((BAD_RUN + 1)); echo "  exit $?:"; sed 's/^/    /' "$M.log"; }
    if ! victim_ok; then
        lost=1; echo "  root's file: $(stat -c '%U %G %a' "$V") '$(cat "$V")'"; victim_reset
    fi
    if [ -n "$(ls -A "$R")" ]; then
        lost=1; echo "  in root's directory: $(ls -lA "$R" | tail -n +2)"; rm -rf "${R:?}"/* "$R"/.[!.]*
    fi
    LOST=$((LOST + lost))
}

# race MODE DIR TARGET: N attempts with the attacker running.
race() {
    local mode=$1 out=$T_TMP/racer-$1 rpid i swaps note
    # setpriv execs the attacker: $! is its pid, for kill
    setpriv --reuid="$UID_" --regid="$GID_" --clear-groups "$RACER" "$mode" "$2" "$3" >"$out" 2>&1 &
    rpid=$!
    t_on_exit "kill $rpid 2>/dev/null; wait $rpid 2>/dev/null"
    t_wait_until 10 grep -qs '^ready' "$out" || { t_not_ok "$mode: the attacker starts: $(cat "$out")"; return; }
    LOST=0 BAD_RUN=0 SOCKS=0
    for ((i = 0; i < N; i++)); do attempt "$mode"; done
    kill "$rpid"; wait "$rpid" 2>/dev/null
    # killed between its two swaps: the real directory back in place
    if [ -L "$S/wake" ] && [ -d "$S/.racer-link" ] && [ ! -L "$S/.racer-link" ]; then
        rm "$S/wake" && mv "$S/.racer-link" "$S/wake"
    fi
    swaps=$(grep -c '^swap' "$out")
    note=; [ "$mode" = dir ] || note=", $SOCKS daemons had their socket"
    echo "# $mode: $N attempts, the attacker swapped $swaps times, $LOST attempts lost$note"
    t_check "$mode: the attacker raced the daemon ($swaps swaps in $N attempts)" [ "$swaps" -gt 0 ]
    t_eq "$mode: every daemon mounted and exited 0 ($N attempts)" "$BAD_RUN" 0
    t_eq "$mode: no attempt lost to the attacker ($N attempts)" "$LOST" 0
}

# ---- no attacker: what the daemon makes, and that it works -------------
if start; then
    t_eq "the daemon's socket is the user's, 0600" \
        "$(stat -c '%F %u %g %a' "$S"/wake/*.sock)" "socket $UID_ $GID_ 600"
    t_eq "nothing else is left in STORE/wake" "$(ls -A "$S/wake" | grep -vc '\.sock$')" 0
    cat "$M/k" 2>/dev/null # the kernel now caches k as missing
    echo "the user's write" | as_user "$M_AL" --store "$S" put k >/dev/null
    t_eq "the user's write wakes the daemon: read at once through the mount" \
        "$(cat "$M/k")" "the user's write"
    t_rc "the daemon exits 0 at unmount" 0 m_umount "$M"
    t_eq "and removes its socket" "$(ls -A "$S/wake")" ""
else
    t_not_ok "the daemon mounts the user's store"
fi

race link "$S/wake" "$V"
race dir "$S" "$R"
t_check "root's file is root's, 0666, with its bytes" victim_ok
t_eq "nothing was made in root's directory" "$(ls -A "$R")" ""
t_eq "STORE/wake is the user's directory, private, and holds no socket" \
    "$(stat -c '%F %u %a' "$S/wake"; find "$S/wake" -type s | wc -l)" "directory $UID_ 700
0"
t_done
