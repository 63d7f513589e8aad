#!/bin/bash
# A root daemon serving a user's store makes its wake-up socket in STORE/wake,
# a directory that user owns. The user can swap the socket's temporary name
# for a symlink right after the bind: the daemon must never follow it, nor
# publish it as its socket (here a root-owned 0644 file must stay root's,
# 0644). The same for the directory: made by the daemon, the user may put a
# symlink in its place right after. (tests/fs/test_wake_race.sh races a real
# attacker; this one makes each swap every time.)
# strace widens each race to a second (bind's or mkdir's return is
# delayed), so the swap is made every time, not by luck.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse
command -v strace >/dev/null || { t_not_ok "strace is installed (scripts/deps.sh)"; t_done; }
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

chmod 711 "$T_TMP" # let nobody reach the store
# setup NAME SYSCALL: a store of nobody's ($S), a root file ($V) and a daemon
# mounting $S on $M whose SYSCALL returns a second late ($pid).
setup() {
    S=$(m_store "$1") || { t_not_ok "make a store"; t_done; }
    chown -R 65534:65534 "$S"
    V=$T_TMP/victim-$1
    echo "root's file" >"$V" && chmod 644 "$V"
    M=$T_TMP/m-$1
    mkdir -p "$M"
    # LeakSanitizer cannot run under ptrace: leaks are the other suites' to find.
    ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 strace -f -o /dev/null -e trace="$2" \
        -e inject="$2":delay_exit=1000000 "$M_FS" -f "$S" "$M" >"$M.log" 2>&1 &
    pid=$!
    M_PIDS[$M]=$pid
    t_on_exit "_m_cleanup '$M' $pid"
}

setup sock bind
new_name() { tmp=$(cd "$S/wake" 2>/dev/null && ls | grep '\.new$' | head -1); [ -n "$tmp" ]; }
if t_wait_until 10 new_name; then
    as_nobody sh -c "ln -s '$V' '$S/wake/swap' && mv -f '$S/wake/swap' '$S/wake/$tmp'"
    t_eq "the user swapped the daemon's socket name for a symlink to root's file" "$?" 0
else
    t_not_ok "the daemon binds its wake-up socket under a temporary name"
fi
t_wait_until 10 _m_mounted_or_dead "$M" "$pid"
t_eq "the daemon mounts all the same" "$(mountpoint -q "$M" && echo yes)" yes
t_eq "the wake-up directory the daemon made is the user's, private" \
    "$(stat -c '%u %a' "$S/wake")" "65534 700"
t_eq "root's file keeps its owner and mode" "$(stat -c '%u %a' "$V")" "0 644"
t_eq "root's file keeps its bytes" "$(cat "$V")" "root's file"
t_rc "the daemon exits 0 at unmount" 0 m_umount "$M"

# ---- the directory ----------------------------------------------------------
setup dir mkdir,mkdirat
if t_wait_until 10 test -d "$S/wake"; then
    as_nobody sh -c "rmdir '$S/wake' && ln -s '$V' '$S/wake'"
    t_eq "the user swapped the daemon's new wake directory for a symlink to root's file" "$?" 0
else
    t_not_ok "the daemon makes its wake-up directory"
fi
t_wait_until 10 _m_mounted_or_dead "$M" "$pid"
t_eq "the daemon mounts all the same" "$(mountpoint -q "$M" && echo yes)" yes
t_eq "root's file keeps its owner and mode" "$(stat -c '%u %a' "$V")" "0 644"
t_rc "the daemon exits 0 at unmount" 0 m_umount "$M"
t_done
