#!/bin/bash
# offloadfs command line: help, version, bad invocations (clear message,
# non-zero exit, no mount left), mount options, read-only, fsname/subtype,
# clean exit 0 on fusermount3 -u / SIGINT / SIGTERM, background mode,
# mount.fuse3, a corrupt store.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse

S=$(m_store s) || { t_not_ok "make a store"; t_done; }
printf 'hello\n' | m_put "$S" greeting
M=$T_TMP/mnt
mkdir -p "$M"

# ---- help and version -----------------------------------------------------
t_rc "-h exits 0" 0 "$M_FS" -h
t_check "-h prints the usage line" grep -q 'usage: .*STORE MOUNTPOINT' "$T_TMP/out"
t_check "-h documents -o namespace" grep -q 'namespace=NS' "$T_TMP/out"
t_rc "--help exits 0" 0 "$M_FS" --help
t_rc "-V exits 0" 0 "$M_FS" -V
t_check "-V prints the version" grep -qE '^offloadfs [0-9]+\.[0-9]+\.[0-9]+$' "$T_TMP/out"
t_rc "--version exits 0" 0 "$M_FS" --version

# ---- bad invocations: message naming the problem, non-zero, no mount --------
bad() { # bad DESC GREP ARGS...
    local d=$1 pat=$2 rc; shift 2
    timeout 120 "$M_FS" -f "$@" >"$T_TMP/out" 2>"$T_TMP/err"; rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -qi -- "$pat" "$T_TMP/err" && ! mountpoint -q "$M"; then
        t_ok "$d"
    else
        t_not_ok "$d"; echo "  exit $rc; stderr: $(head -c 300 "$T_TMP/err")"
        mountpoint -q "$M" && fusermount3 -u "$M"
    fi
}
bad "no arguments: usage" "usage"
bad "missing mountpoint: says so" "missing MOUNTPOINT" "$S"
bad "missing store dir: names it" "store '$T_TMP/nope'.*No such file" "$T_TMP/nope" "$M"
mkdir -p "$T_TMP/empty"
bad "dir without a store: names it" "store '$T_TMP/empty'" "$T_TMP/empty" "$M"
bad "missing mountpoint dir: names it" "mountpoint '$T_TMP/nomnt'" "$S" "$T_TMP/nomnt"
bad "unknown option: names it" "bogus_opt" -o bogus_opt "$S" "$M"
bad "unknown flag: names it" "--frobnicate" --frobnicate "$S" "$M"
bad "bad namespace: names the rule" "namespace '.hidden'" -o namespace=.hidden "$S" "$M"
bad "namespace with a slash: names the rule" "namespace 'a/b'" -o namespace=a/b "$S" "$M"
bad "too many arguments" "too many" "$S" "$M" extra
echo x >"$T_TMP/afile"
bad "store that is a file: names it" "store '$T_TMP/afile'" "$T_TMP/afile" "$M"

# ---- a corrupt store: clear error at start, never a crash ----------------------
C=$T_TMP/corrupt; mkdir -p "$C"
head -c 65536 /dev/urandom >"$C/data.mdb"
timeout 120 "$M_FS" -f "$C" "$M" >"$T_TMP/out" 2>"$T_TMP/err"; rc=$?
if [ "$rc" -ge 1 ] && [ "$rc" -lt 124 ] && grep -q "store '$C'" "$T_TMP/err" && ! mountpoint -q "$M"; then
    t_ok "corrupt data.mdb: clear error, exit $rc, no mount"
else
    t_not_ok "corrupt data.mdb: clear error, no crash"; echo "  exit $rc: $(cat "$T_TMP/err")"
fi
mountpoint -q "$M" && fusermount3 -u "$M"

# ---- a good mount: options, read-only, fsname, subtype ------------------------------
KOPTS="rw,dev,suid,exec,nofail,noauto,_netdev,defaults,user,relatime,x-systemd.automount"
t_check "kernel-style options are accepted" m_mount "$S" "$M" -o "$KOPTS" -o nodev,nosuid
line=$(awk -v m="$M" '$2 == m' /proc/mounts)
t_check "mount is read-only despite -o rw" bash -c "[[ '$line' == *' ro,'* ]]"
t_eq "fsname is the store path" "$(echo "$line" | cut -d' ' -f1)" "$S"
t_eq "type is fuse.offloadfs" "$(echo "$line" | cut -d' ' -f3)" "fuse.offloadfs"
t_check "default_permissions is set" bash -c "[[ '$line' == *default_permissions* ]]"
t_eq "entry readable" "$(cat "$M/greeting")" "hello"
t_eq "writing fails EROFS" "$(m_errno creat "$M/new")" "EROFS"
m_umount "$M"; t_eq "exit 0 after fusermount3 -u" "$?" "0"
t_check "no mount left" bash -c "! mountpoint -q '$M'"

t_check "fsname/subtype can be overridden, FUSE tuning options pass" \
    m_mount "$S" "$M" -o fsname=myresults,subtype=mine,max_readahead=1048576,max_threads=4
line=$(awk -v m="$M" '$2 == m' /proc/mounts)
t_eq "custom fsname and subtype" "$(echo "$line" | cut -d' ' -f1,3)" "myresults fuse.mine"
m_umount "$M"; t_eq "exit 0 after unmount (custom names)" "$?" "0"

# ---- signals ----------------------------------------------------------------
for sig in INT TERM; do
    m_mount "$S" "$M" || t_not_ok "mount for SIG$sig"
    pid=$(m_pid "$M")
    kill -s "$sig" "$pid"
    if m_wait_gone "$pid"; then t_eq "exit 0 on SIG$sig" "$M_STATUS" "0"
    else t_not_ok "daemon exits on SIG$sig"; fi
    t_check "no mount left after SIG$sig" bash -c "! mountpoint -q '$M'"
done

# ---- -d: debug tracing to the log ---------------------------------------------
m_mount "$S" "$M" -d
cat "$M/greeting" >/dev/null
m_umount "$M"; t_eq "exit 0 with -d" "$?" "0"
t_check "-d traces requests" grep -q 'LOOKUP\|lookup' "$M.log"

# ---- background mode (no -f) ----------------------------------------------------
"$M_FS" "$S" "$M" >"$T_TMP/bg.out" 2>&1; rc=$?
t_eq "background start exits 0" "$rc" "0"
t_check "background daemon mounted" t_wait_until 10 mountpoint -q "$M"
t_eq "background mount serves" "$(cat "$M/greeting" 2>&1)" "hello"
bgpid=$(pgrep -f "^$M_FS $S $M\$" | head -1)
fusermount3 -u "$M"
t_check "background daemon exits after unmount" t_wait_until 10 bash -c "! kill -0 $bgpid 2>/dev/null"

# ---- auto_unmount (what make run uses): the mount goes when the daemon dies ----
"$M_FS" -o auto_unmount "$S" "$M" >"$T_TMP/bg.out" 2>&1
t_eq "auto_unmount start exits 0" "$?" "0"
t_check "auto_unmount daemon mounted" t_wait_until 10 mountpoint -q "$M"
bgpid=$(pgrep -f "^$M_FS -o auto_unmount $S $M\$" | head -1)
[ -n "$bgpid" ] && kill -KILL "$bgpid"
t_check "SIGKILLed daemon: auto_unmount removes the mount" t_wait_until 10 bash -c "! mountpoint -q '$M'"

# ---- through mount.fuse3, as fstab would -----------------------------------------
mkdir -p "$T_TMP/bin"; ln -sf "$M_FS" "$T_TMP/bin/offloadfs"
PATH="$T_TMP/bin:$PATH" mount.fuse3 "offloadfs#$S" "$M" -o rw,nofail,_netdev,dev,suid,namespace=default >"$T_TMP/out" 2>&1
t_eq "mount.fuse3 with fstab options exits 0" "$?" "0"
t_check "mount.fuse3 mounted it" t_wait_until 10 mountpoint -q "$M"
t_eq "mount.fuse3 mount serves" "$(cat "$M/greeting" 2>&1)" "hello"
fusermount3 -u "$M" 2>/dev/null
t_on_exit "mountpoint -q '$M' && fusermount3 -uz '$M'"

t_done
