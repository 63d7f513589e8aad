#!/bin/bash
# test_perms.sh -- doc/faults.md, case 7 (I6): the mount is read-only and every
# write syscall tests/fs/test_errno.sh does not try answers EROFS (or the
# errno that comes first by POSIX) and changes nothing; another user cannot
# read a mount made without allow_other, and can with it; the store is a
# 0700 directory of 0600 files whatever the umask, unreadable to others;
# namespaces cannot reach each other by any name nor by file handle.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fs/mountlib.sh"
. "$(dirname "$0")/faultlib.sh"
m_require_fuse

F=$T_BUILD/faults
[ -x "$F/nsprobe" ] || { t_not_ok "$F/nsprobe is built (run make)"; t_done; }
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
# Mount points another user can reach: T_TMP is 0700.
P=$T_TMP/pub; mkdir -p "$P"; chmod 755 "$T_TMP" "$P"
S=$T_TMP/store
printf 'alpha secret\n' | m_put "$S" ka alpha tool-a
printf 'beta secret\n' | m_put "$S" kb beta tool-b
printf 'alphabet secret\n' | m_put "$S" kab alphabet
printf 'default secret\n' | m_put "$S" kd
chmod 711 "$T_TMP"  # others may pass through to $P, not list or read the rest
gen() { "$M_CTL" "$S" gen; }

# ---- every write: EROFS, nothing changes -------------------------------------------------
MA=$P/alpha MB=$P/beta
m_mount "$S" "$MA" -o namespace=alpha || { t_not_ok "mount alpha"; t_done; }
m_mount "$S" "$MB" -o namespace=beta || { t_not_ok "mount beta"; t_done; }
g0=$(gen)
sum0=$(cat "$MA/ka" | md5sum)
echo outside >"$T_TMP/outside"
cat >"$T_TMP/erofs.py" <<'EOF'
import errno, mmap, os, sys
m, outside = sys.argv[1], sys.argv[2]
f = os.path.join(m, "ka")
def t(name, fn):
    try:
        fn()
        r = "0"
    except OSError as e:
        r = errno.errorcode[e.errno]
    print(name, r)
def on_fd(path, op):
    fd = os.open(path, os.O_RDONLY)
    try:
        op(fd)
    finally:
        os.close(fd)
t("open O_APPEND", lambda: os.close(os.open(f, os.O_WRONLY | os.O_APPEND)))
t("open O_CREAT|O_EXCL (existing)", lambda: os.close(os.open(f, os.O_WRONLY | os.O_CREAT | os.O_EXCL)))
t("open O_CREAT (new)", lambda: os.close(os.open(os.path.join(m, "new"), os.O_WRONLY | os.O_CREAT)))
t("open O_RDONLY|O_CREAT (new)", lambda: os.close(os.open(os.path.join(m, "new"), os.O_RDONLY | os.O_CREAT)))
t("open O_TMPFILE", lambda: os.close(os.open(m, os.O_TMPFILE | os.O_WRONLY)))
t("unlink (never written)", lambda: os.unlink(os.path.join(m, "never")))
t("rename (never written)", lambda: os.rename(os.path.join(m, "never"), os.path.join(m, "x")))
t("rename onto itself", lambda: os.rename(f, f))
t("rename in from outside", lambda: os.rename(outside, os.path.join(m, "in")))
t("rename out", lambda: os.rename(f, outside + ".out"))
t("link in from outside", lambda: os.link(outside, os.path.join(m, "in")))
t("mknod regular", lambda: os.mknod(os.path.join(m, "reg"), 0o100644))
t("mkfifo", lambda: os.mkfifo(os.path.join(m, "fifo")))
t("chown the root", lambda: os.chown(m, 1, 1))
t("utime the root", lambda: os.utime(m, (1, 1)))
t("utime an entry", lambda: os.utime(f, (1, 1)))
t("setxattr the root", lambda: os.setxattr(m, "user.x", b"1"))
t("setxattr user.offload.tool", lambda: os.setxattr(f, "user.offload.tool", b"evil"))
t("removexattr the root", lambda: os.removexattr(m, "user.x"))
t("mmap PROT_WRITE MAP_SHARED", lambda: on_fd(f, lambda fd: mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_WRITE)))
t("ftruncate (read-only fd)", lambda: on_fd(f, lambda fd: os.ftruncate(fd, 0)))
t("write (read-only fd)", lambda: on_fd(f, lambda fd: os.write(fd, b"x")))
t("fallocate (read-only fd)", lambda: on_fd(f, lambda fd: os.posix_fallocate(fd, 0, 10)))
t("copy_file_range into an entry", lambda: on_fd(outside, lambda src: on_fd(f, lambda dst: os.copy_file_range(src, dst, 10))))
EOF
python3 "$T_TMP/erofs.py" "$MA" "$T_TMP/outside" >"$T_TMP/erofs.out" 2>&1
# What each must answer: EROFS; POSIX puts EEXIST, EXDEV first where they
# apply; an fd opened read-only (the only kind there is) gives EBADF/EINVAL;
# a shared writable map of a read-only fd, EACCES.
while read -r want what; do
    got=$(grep -F "$what " "$T_TMP/erofs.out" | tail -1); got=${got##* }
    t_eq "$what -> $want" "$got" "$want"
done <<'EOF'
EROFS open O_APPEND
EEXIST open O_CREAT|O_EXCL (existing)
EROFS open O_CREAT (new)
EROFS open O_RDONLY|O_CREAT (new)
EROFS open O_TMPFILE
EROFS unlink (never written)
EROFS rename (never written)
EROFS rename onto itself
EXDEV rename in from outside
EXDEV rename out
EROFS link in from outside
EROFS mknod regular
EROFS mkfifo
EROFS chown the root
EROFS utime the root
EROFS utime an entry
EROFS setxattr the root
EROFS setxattr user.offload.tool
EROFS removexattr the root
EACCES mmap PROT_WRITE MAP_SHARED
EINVAL ftruncate (read-only fd)
EBADF write (read-only fd)
EBADF fallocate (read-only fd)
EBADF copy_file_range into an entry
EOF
t_eq "no write changed the store (generation)" "$(gen)" "$g0"
t_eq "the entry's bytes are unchanged" "$(cat "$MA/ka" | md5sum)" "$sum0"
t_eq "its tool attribute is unchanged" \
    "$(python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "user.offload.tool").decode())' "$MA/ka")" "tool-a"
t_eq "nothing appeared in the listing" "$(ls "$MA")" "ka"
t_check "the outside file stayed outside" test -f "$T_TMP/outside"

# ---- namespaces cannot reach each other ----------------------------------------------------
t_eq "alpha lists only its own key (not alphabet's, not beta's)" "$(ls -a "$MA" | tr '\n' ' ')" ". .. ka "
for name in kb kab kd beta alphabet default 'beta%2Fkb' 'beta%00kb' 'beta\kb' '..%2Fbeta%2Fkb' \
            'beta kb' ' kb' 'kb ' 'KB' 'kb~0000000000000000' "$(printf 'k%.0s' {1..255})"; do
    t_eq "alpha: '$name' -> ENOENT" "$(m_errno stat "$MA/$name")" "ENOENT"
done
t_eq "alpha: beta/kb -> ENOENT" "$(m_errno stat "$MA/beta/kb")" "ENOENT"
t_eq "alpha: ka/.. is not a way out -> ENOTDIR" "$(m_errno stat "$MA/ka/..")" "ENOTDIR"
t_eq "alpha: a 256-byte name -> ENAMETOOLONG" "$(m_errno stat "$MA/$(printf 'k%.0s' {1..256})")" "ENAMETOOLONG"
t_eq "alpha/.. is the directory the mount sits in" "$(stat -c %i "$MA/..")" "$(stat -c %i "$P")"
t_eq "beta reads its own" "$(cat "$MB/kb")" "beta secret"
t_eq "beta: ka -> ENOENT" "$(m_errno stat "$MB/ka")" "ENOENT"
t_eq "beta's inode is not alpha's" "$([ "$(stat -c %i "$MA/ka")" != "$(stat -c %i "$MB/kb")" ] && echo distinct)" "distinct"
t_eq "a handle of beta's entry does not open through alpha" \
    "$("$F/nsprobe" handle "$MA" "$MB/kb")" "refused ESTALE"
t_eq "alpha's handle forged with beta's inode number does not open" \
    "$("$F/nsprobe" forge "$MA" "$MA/ka" "$MB/kb")" "refused ESTALE"
t_eq "alpha's own handle opens (the probe works)" "$("$F/nsprobe" handle "$MA" "$MA/ka")" "opened, read 13 bytes"
t_rc "agentlink --namespace alpha get kb exits 3" 3 $AGENTLINK --store "$S" --namespace alpha get kb
t_rc "agentlink --namespace alphabe get kab exits 3" 3 $AGENTLINK --store "$S" --namespace alphabe get kab
t_rc "agentlink default namespace get ka exits 3" 3 $AGENTLINK --store "$S" get ka
t_rc "removing in beta exits 0" 0 $AGENTLINK --store "$S" --namespace beta rm kb
t_wait_until 10 bash -c "[ \"\$('$M_PROBE' errno stat '$MB/kb')\" = ENODATA ]"
t_eq "beta: kb evicted-state ENODATA" "$(m_errno stat "$MB/kb")" "ENODATA"
t_eq "alpha: kb still never-written ENOENT" "$(m_errno stat "$MA/kb")" "ENOENT"
# Longest names: a 255-byte namespace and a 255-byte key; a namespace one
# byte shorter sees nothing of it.
ns255=$(printf 'n%.0s' {1..255}) ns254=$(printf 'n%.0s' {1..254}) k255=$(printf 'k%.0s' {1..255})
printf 'long\n' | m_put "$S" "$k255" "$ns255"
ML=$P/long
m_mount "$S" "$ML" -o "namespace=$ns254" || t_not_ok "mount a 254-byte namespace"
t_eq "a 254-byte namespace does not see the 255-byte one's key" "$(ls "$ML" | wc -l) $(m_errno stat "$ML/$k255")" "0 ENOENT"
t_rc "agentlink in the 254-byte namespace: exit 3" 3 $AGENTLINK --store "$S" --namespace "$ns254" get "$k255"
t_rc "the 255-byte namespace reads it" 0 $AGENTLINK --store "$S" --namespace "$ns255" get "$k255"
f_umount "$ML"; t_eq "daemon exits 0 (long namespace)" "$?" "0"

# ---- other users -------------------------------------------------------------------------------
t_rc "without allow_other another user cannot read an entry" 1 $NOBODY cat "$MA/ka"
t_check "it is told Permission denied" grep -q "Permission denied" "$T_TMP/err"
t_rc "nor list the mount" 2 $NOBODY ls "$MA"
t_rc "nor stat an entry" 1 $NOBODY stat "$MA/ka"
f_umount "$MA"; t_eq "daemon exits 0 (alpha)" "$?" "0"
f_umount "$MB"; t_eq "daemon exits 0 (beta)" "$?" "0"
m_mount "$S" "$MA" -o namespace=alpha,allow_other || t_not_ok "mount with allow_other"
t_rc "with allow_other another user reads an entry" 0 $NOBODY cat "$MA/ka"
t_eq "the bytes" "$(cat "$T_TMP/out")" "alpha secret"
t_rc "and lists the mount" 0 $NOBODY ls "$MA"
t_rc "but cannot write: EROFS" 1 $NOBODY touch "$MA/ka"
t_check "it is told Read-only file system" grep -q "Read-only file system" "$T_TMP/err"
f_umount "$MA"; t_eq "daemon exits 0 (allow_other)" "$?" "0"

# ---- the store's own files ----------------------------------------------------------------------
for mask in 000 022 077; do
    d=$T_TMP/umask$mask/a/b
    (umask $mask; printf 'x' | $AGENTLINK --store "$d" put k >/dev/null)
    t_eq "umask $mask: store directory (and the parents it made) 0700" \
        "$(stat -c %a "$d" "$T_TMP/umask$mask/a" | sort -u)" "700"
    t_eq "umask $mask: data.mdb and lock.mdb 0600" "$(stat -c %a "$d/data.mdb" "$d/lock.mdb" | sort -u)" "600"
done
m_mount "$S" "$MA" -o allow_other || t_not_ok "mount for modes"
t_eq "a mounted store keeps 0700 / 0600" "$(stat -c %a "$S"; stat -c %a "$S"/*.mdb | sort -u)" "$(printf '700\n600')"
chmod 755 "$T_TMP"
t_rc "another user cannot read data.mdb" 1 $NOBODY cat "$S/data.mdb"
t_rc "another user's agentlink cannot open the store: exit 1" 1 $NOBODY "$T_BUILD/agentlink" --store "$S" ls
t_check "it says Permission denied" grep -q "Permission denied" "$T_TMP/err"
# The daemon started by a user who cannot read the store: a clear error
# that says so. Today it says "directory holds no store": store_open()
# takes a data.mdb it may not see for a missing one (doc/faults.md).
mkdir -p "$P/nob" && chmod 777 "$P/nob"
timeout -k 1 10 $NOBODY "$M_FS" -f "$S" "$P/nob" >"$T_TMP/out" 2>"$T_TMP/err"; rc=$?
mountpoint -q "$P/nob" && fusermount3 -u "$P/nob"
if [ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] && grep -q "Permission denied" "$T_TMP/err"; then
    t_ok "offloadfs run by a user who cannot read the store: exit $rc, Permission denied"
elif [ -n "${OFFLOADFS_KNOWN_BUGS:-}" ]; then
    t_not_ok "offloadfs run by a user who cannot read the store: Permission denied"
    echo "  exit $rc: $(head -c 300 "$T_TMP/err")"
else
    t_skip "KNOWN BUG (store/, doc/faults.md): offloadfs on an unreadable store says: $(head -1 "$T_TMP/err") (exit $rc); OFFLOADFS_KNOWN_BUGS=1 makes this a failure"
fi
chmod 711 "$T_TMP"
f_umount "$MA"; t_eq "daemon exits 0" "$?" "0"
t_done
