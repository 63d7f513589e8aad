#!/bin/bash
# test_mount.sh -- offloadfs through mount(8) and mount.fuse3: `mount -t
# fuse.offloadfs` and an fstab line (util-linux mount -T FILE, so /etc/fstab is
# never touched), after a real `make install` with the default PREFIX.
#
# mount(8) gives mount.fuse3 no PATH, and mount.fuse3 starts the daemon with
# /bin/sh, which then searches its built-in PATH (/usr/local/sbin:/usr/local/bin:
# /usr/sbin:/usr/bin:/sbin:/bin). So the test needs offloadfs really installed in
# /usr/local/bin. It does that inside a private mount namespace (unshare -m)
# with a scratch directory bind-mounted over /usr/local: the machine's
# /usr/local and mount table never change, and every mount made in there dies
# with the namespace even if this script is killed.
# run.sh: alone (make, an install or a machine-wide path)
. "$(dirname "$0")/../lib.sh"

# daemons_of PATH : pids of offloadfs processes whose command line names PATH
daemons_of() {
    local f p
    for f in /proc/[0-9]*/cmdline; do
        p=${f#/proc/}; p=${p%/cmdline}
        tr '\0' ' ' 2>/dev/null <"$f" | grep -qE "^([^ ]*/)?offloadfs .*$1" && echo "$p"
    done
    return 0
}

if [ "${1:-}" != --inside ]; then
    if [ "$(id -u)" -ne 0 ]; then t_skip "mount(8) tests need root"; t_done; fi
    if [ ! -c /dev/fuse ]; then t_skip "mount(8) tests need /dev/fuse"; t_done; fi
    for p in mount.fuse3 unshare mount umount findmnt; do
        command -v $p >/dev/null || { t_skip "mount(8) tests need $p"; t_done; }
    done
    unshare -m --propagation private true 2>/dev/null || { t_skip "mount(8) tests need unshare -m"; t_done; }
    make -s --no-print-directory -C "$T_TOP" all >/dev/null || { t_not_ok "make builds"; t_done; }
    export OPS_W=$T_TMP
    timeout 120 unshare -m --propagation private bash "$0" --inside; rc=$?
    t_eq "the checks inside the mount namespace ran to the end" "$rc" 0
    # Daemons are started by mount.fuse3 (detached): none may outlive its umount.
    left=$(daemons_of "$OPS_W/")
    t_eq "no offloadfs daemon is left running" "$left" ""
    for pid in $left; do kill "$pid"; done # they are ours: the path is this test's
    t_done
fi

# ---- inside a private mount namespace -------------------------------------------------
W=$OPS_W
T_FAILS=0
mkdir -p "$W/usr-local" "$W/mnt1" "$W/mnt2" "$W/mnt3" "$W/mnt4"
cleanup_inside() {
    local m
    for m in "$W"/mnt*; do
        if findmnt -rn "$m" >/dev/null 2>&1; then umount "$m" 2>/dev/null || umount -l "$m"; fi
    done
    findmnt -rn /usr/local >/dev/null 2>&1 && umount -l /usr/local
}
t_on_exit cleanup_inside
mount --bind "$W/usr-local" /usr/local || { t_not_ok "bind a scratch /usr/local"; t_done; }

t_rc "make install (PREFIX=/usr/local) exits 0" 0 make -s --no-print-directory -C "$T_TOP" install LDCONFIG=true
# The exact lookup mount.fuse3 makes: /bin/sh with PATH unset.
t_eq "/bin/sh without PATH finds the installed offloadfs" "$(env -i /bin/sh -c 'command -v offloadfs')" \
    /usr/local/bin/offloadfs
AL=/usr/local/bin/agentlink
S=$W/store
$AL --store "$S" init >/dev/null
printf 'one\n' | $AL --store "$S" --namespace ns1 put r1 >/dev/null
seq 1 20000 | $AL --store "$S" --namespace ns1 put big --tool bash >/dev/null
printf 'two\n' | $AL --store "$S" --namespace ns2 put r2 >/dev/null
printf 'three\n' | $AL --store "$S" put r3 >/dev/null

daemon_of() { daemons_of "$1" | head -1; }
# umount_and_wait MNT : umount(8), then the daemon must exit within 10 s
umount_and_wait() {
    local pid; pid=$(daemon_of "$1")
    umount "$1" || return 1
    [ -z "$pid" ] && return 0
    t_wait_until 10 test ! -e "/proc/$pid"
}

# ---- mount -t fuse.offloadfs -----------------------------------------------------------------
t_rc "mount -t fuse.offloadfs STORE MNT -o namespace=ns1 exits 0" 0 mount -t fuse.offloadfs "$S" "$W/mnt1" -o namespace=ns1
t_eq "it is an offloadfs mount of the store" "$(findmnt -rn -o FSTYPE,SOURCE "$W/mnt1")" "fuse.offloadfs $S"
opts=",$(findmnt -rn -o VFS-OPTIONS "$W/mnt1"),"
t_check "read-only, nosuid, nodev although mount.fuse3 adds dev,suid" \
    bash -c "case '$opts' in *,ro,*nosuid*nodev*) exit 0;; *) exit 1;; esac"
t_eq "it shows namespace ns1 only" "$(ls "$W/mnt1" | tr '\n' ' ')" "big r1 "
t_eq "content byte for byte" "$(cat "$W/mnt1/r1")" "one"
t_check "a large result reads back whole" cmp -s <(seq 1 20000) "$W/mnt1/big"
pid=$(daemon_of "$W/mnt1")
t_eq "mount.fuse3 ran offloadfs with the options plus dev,suid" "$(tr '\0' ' ' <"/proc/$pid/cmdline")" \
    "offloadfs $S $W/mnt1 -o rw,namespace=ns1,dev,suid "
t_eq "the one installed in /usr/local/bin" "$(readlink "/proc/$pid/exe")" /usr/local/bin/offloadfs
t_check "umount unmounts and the daemon exits" umount_and_wait "$W/mnt1"
t_check "nothing is mounted there any more" bash -c "! findmnt -rn '$W/mnt1' >/dev/null"

# ---- fstab -----------------------------------------------------------------------------------
cat >"$W/fstab" <<EOF
# the documented line, with a scratch mountpoint
$S $W/mnt2 fuse.offloadfs ro,namespace=ns2 0 0
# the options an operator adds: all accepted
$S $W/mnt3 fuse.offloadfs ro,allow_other,nofail,noauto,_netdev,x-systemd.automount 0 0
EOF
t_rc "mount -T FSTAB MNT (ro,namespace=ns2) exits 0" 0 mount -T "$W/fstab" "$W/mnt2"
t_eq "it shows namespace ns2" "$(ls "$W/mnt2")" "r2"
t_eq "its content" "$(cat "$W/mnt2/r2")" "two"
t_rc "the line with allow_other,nofail,noauto,_netdev,x-systemd.* mounts" 0 mount -T "$W/fstab" "$W/mnt3"
t_eq "without namespace= it shows 'default'" "$(ls "$W/mnt3")" "r3"
t_check "allow_other took effect" bash -c "findmnt -rn -o OPTIONS '$W/mnt3' | grep -q allow_other"
t_check "a write through agentlink succeeds" bash -c \
    "printf new | $AL --store '$S' put r4 >/dev/null"
t_check "... and shows in the mount" t_wait_until 2 test -e "$W/mnt3/r4"
t_eq "the new entry reads back" "$(cat "$W/mnt3/r4" 2>&1)" "new"
t_check "umount of the fstab mounts" bash -c "umount '$W/mnt2' && umount '$W/mnt3'"

# ---- failures leave no mount ------------------------------------------------------------------
mount -t fuse.offloadfs "$W/no-store" "$W/mnt4" >"$T_TMP/out" 2>"$T_TMP/err"; rc=$?
t_check "a missing store fails the mount" test "$rc" -ne 0
t_check "with the daemon's message" grep -qF "offloadfs: store '$W/no-store': No such file or directory" "$T_TMP/err"
t_check "and no mount" bash -c "! findmnt -rn '$W/mnt4' >/dev/null"
mount -t fuse.offloadfs "$S" "$W/mnt4" -o namespace=.bad >"$T_TMP/out" 2>"$T_TMP/err"; rc=$?
t_check "a bad namespace fails the mount" test "$rc" -ne 0
t_check "it names the rule" grep -q "namespace '.bad': starts with '.'" "$T_TMP/err"
t_check "and no mount" bash -c "! findmnt -rn '$W/mnt4' >/dev/null"

# ---- the systemd unit, against the installed programs ---------------------------------------------
if command -v systemd-analyze >/dev/null; then
    mkdir -p "$W/units"
    cp "$T_TOP/scripts/systemd/offloadfs@.service" "$W/units/offloadfs@default.service"
    t_rc "systemd-analyze verify accepts the unit" 0 systemd-analyze verify --man=no "$W/units/offloadfs@default.service"
    t_eq "and finds both programs it runs" "$(cat "$T_TMP/err")" ""
else
    t_skip "systemd-analyze is not installed"
fi

t_rc "make uninstall exits 0" 0 make -s --no-print-directory -C "$T_TOP" uninstall LDCONFIG=true
t_eq "it leaves no file under /usr/local" "$(find /usr/local \( -type f -o -type l \) | head -3)" ""
t_done
