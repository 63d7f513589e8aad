#!/bin/bash
# test_mountpoint.sh -- offloadfs refuses, before mounting, a store at or
# inside its mountpoint (the daemon would wait for ever on its own mount,
# and every process touching the path with it) and a mountpoint that is
# already an offloadfs mount, unless -o stack asks for that.
#
# A regression must not hang the suite: whether a daemon mounted is read
# from /proc/self/mountinfo only (never by touching the path, which would
# block on a daemon waiting on itself); a daemon that mounts where it must
# not is SIGKILLed at once (its mount then fails fast with ENOTCONN) and
# lazily unmounted, and every wait has a deadline.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse
unset OFFLOADFS_NAMESPACE OFFLOADFS_CONFIG
has() { case $2 in *"$3"*) t_ok "$1" ;; *) t_not_ok "$1"; printf '  %q lacks %q\n' "$2" "$3" ;; esac; }

# mount_over STORE MNT [ARGS...] : m_mount on a path that is already a
# mountpoint (where mountpoint -q cannot tell): waits for one more mount.
_more_mounts() { [ "$(m_mounts_at "$1")" -gt "$2" ]; }
mount_over() {
    local n; n=$(m_mounts_at "$2")
    m_mount "$@" && t_wait_until 10 _more_mounts "$2" "$n"
}

# ---- a store at or inside the mountpoint ---------------------------------------
S=$(m_store s1) && printf 'one\n' | m_put "$S" k || { t_not_ok "store"; t_done; }
m_refused "offloadfs S S: refused, nothing mounted" "$S" "$S" "$S"
t_eq "the message names both and the problem" "$(cat "$T_TMP/err")" \
    "offloadfs: store '$S' is the mountpoint '$S': the mount would hide the store from the daemon, which would then wait for ever on its own mount; use a store outside the mountpoint"
t_eq "the store still reads" "$(m_get "$S" k)" "one"

D=$T_TMP/d; mkdir -p "$D"
"$M_AL" --store "$D/store" init >/dev/null && printf 'two\n' | m_put "$D/store" k
m_refused "offloadfs DIR/store DIR: refused" "$D" "$D/store" "$D"
t_eq "the message says the store lies inside the mountpoint" "$(cat "$T_TMP/err")" \
    "offloadfs: store '$D/store' lies inside the mountpoint '$D': the mount would hide the store from the daemon, which would then wait for ever on its own mount; use a store outside the mountpoint"
mkdir -p "$D/a/b"; "$M_AL" --store "$D/a/b/store" init >/dev/null
m_refused "a store three levels down: refused" "$D" "$D/a/b/store" "$D"
ln -s "$D" "$T_TMP/mlink"
m_refused "a mountpoint that is a symlink to the store's parent: refused" "$D" "$D/store" "$T_TMP/mlink"
has "the message names the mountpoint as given" "$(cat "$T_TMP/err")" "lies inside the mountpoint '$T_TMP/mlink'"
ln -s "$D/store" "$T_TMP/slink"
m_refused "a store reached through a symlink into the mountpoint: refused" "$D" "$T_TMP/slink" "$D"
m_refused "a relative spelling with '..': refused" "$D" "$D/a/../store" "$D/a/.."
t_eq "nothing is mounted anywhere under the test dir" "$(awk -v p="$T_TMP/" 'index($5, p) == 1' /proc/self/mountinfo)" ""

# Allowed: a mountpoint inside the store directory (the store's files stay
# reachable), and a mountpoint beside the store.
m_mount "$S" "$S/mnt" && t_eq "a mountpoint inside the store directory mounts and serves" "$(cat "$S/mnt/k")" "one"
m_umount "$S/mnt"; t_eq "that daemon exits 0" "$?" 0

# ---- a mountpoint that is already an offloadfs mount ---------------------------
M=$T_TMP/m; S2=$(m_store s2) && printf 'second\n' | m_put "$S2" k
m_mount "$S" "$M" || { t_not_ok "first mount"; t_done; }
pid1=$(m_pid "$M")
m_refused "a second daemon on the same mountpoint: refused" "$M" "$S2" "$M"
t_eq "the message says what is there and how to go on" "$(cat "$T_TMP/err")" \
    "offloadfs: mountpoint '$M' is already an offloadfs mount (of '$S'); unmount it first (fusermount3 -u '$M'), or add -o stack to mount over it"
m_refused "the same store again: refused" "$M" "$S" "$M"
t_eq "one mount on the mountpoint" "$(m_mounts_at "$M")" 1
t_eq "the first daemon still serves" "$(cat "$M/k")" "one"
mount_over "$S2" "$M" -o stack || t_not_ok "-o stack mounts"
t_eq "-o stack: two mounts on the mountpoint" "$(m_mounts_at "$M")" 2
t_eq "-o stack: the new mount is the one seen" "$(cat "$M/k")" "second"
m_umount "$M"; t_eq "-o stack: its daemon exits 0 on unmount" "$?" 0
t_eq "the first mount shows again" "$(cat "$M/k")" "one"
fusermount3 -u "$M"; t_eq "the first mount unmounts" "$(m_mounts_at "$M")" 0
m_wait_gone "$pid1"; t_eq "the first daemon exits 0" "${M_STATUS:-}" 0

# Not refused: a mountpoint that is another kind of mount.
TM=$T_TMP/tmpfs; mkdir -p "$TM"
if mount -t tmpfs tmpfs "$TM"; then
    t_on_exit "umount -l '$TM' 2>/dev/null"
    mount_over "$S" "$TM" && t_eq "a tmpfs mountpoint is not refused" "$(cat "$TM/k")" "one"
    m_umount "$TM"; t_eq "its daemon exits 0" "$?" 0
    umount "$TM"
else
    t_not_ok "mount a tmpfs for the last check"
fi
t_done
