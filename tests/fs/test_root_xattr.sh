#!/bin/bash
# The mount says which store and namespace it serves: extended attributes
# user.offloadfs.store (the store's real path, whatever -o fsname= says and
# however the store was named) and user.offloadfs.namespace on the root,
# shown by getfattr; entries keep their user.offload.* names only.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse
command -v getfattr >/dev/null || { t_not_ok "getfattr is installed (scripts/deps.sh: attr)"; t_done; }

# A store whose real path has a space and a comma, reached through a symlink.
mkdir -p "$T_TMP/real dir,x"
S=$(m_store "real dir,x/st") || { t_not_ok "make a store"; t_done; }
ln -s "$T_TMP/real dir,x" "$T_TMP/link"
printf 'data\n' | m_put "$S" k "" mytool
printf 'other\n' | m_put "$S" k other
REAL=$(realpath "$S")

M=$T_TMP/mnt
m_mount "$T_TMP/link/st" "$M" -o fsname=foo,namespace=other || { t_not_ok "mount"; t_done; }

# getfattr -d prints NAME="VALUE" lines after a "# file:" header.
getfattr -d -m - --absolute-names "$M" >"$T_TMP/fattr" 2>&1
t_eq "getfattr -d shows the store's real path" \
    "$(grep '^user.offloadfs.store=' "$T_TMP/fattr")" "user.offloadfs.store=\"$REAL\""
t_eq "getfattr -d shows the namespace" \
    "$(grep '^user.offloadfs.namespace=' "$T_TMP/fattr")" 'user.offloadfs.namespace="other"'
t_eq "getfattr -n gives the exact bytes of the store path" \
    "$(getfattr --absolute-names --only-values -n user.offloadfs.store "$M")" "$REAL"
t_eq "the mount's data is that namespace's" "$(cat "$M/k")" "other"

cat >"$T_TMP/xa.py" <<'EOF'
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
path, cmd = sys.argv[1], sys.argv[2]
def err(): return errno.errorcode[ctypes.get_errno()]
if cmd == 'list':
    print(' '.join(os.listxattr(path)))
elif cmd == 'get':
    try: print(os.getxattr(path, sys.argv[3]).decode())
    except OSError as e: print(errno.errorcode[e.errno])
elif cmd == 'size':
    n = libc.getxattr(path.encode(), sys.argv[3].encode(), None, 0)
    print(n if n >= 0 else err())
elif cmd == 'small':
    buf = ctypes.create_string_buffer(4)
    n = libc.getxattr(path.encode(), sys.argv[3].encode(), buf, 4)
    print(n if n >= 0 else err())
elif cmd == 'listsmall':
    buf = ctypes.create_string_buffer(8)
    n = libc.listxattr(path.encode(), buf, 8)
    print(n if n >= 0 else err())
EOF
xa() { python3 "$T_TMP/xa.py" "$@" 2>&1; }
t_eq "listxattr on the root lists both, in order" "$(xa "$M" list)" \
    "user.offloadfs.store user.offloadfs.namespace"
t_eq "size query on the root: the path's length" "$(xa "$M" size user.offloadfs.store)" \
    "$(printf '%s' "$REAL" | wc -c)"
t_eq "too small a buffer on the root -> ERANGE" "$(xa "$M" small user.offloadfs.store)" "ERANGE"
t_eq "too small a list buffer on the root -> ERANGE" "$(xa "$M" listsmall)" "ERANGE"
t_eq "unknown user.* name on the root -> ENODATA" "$(xa "$M" get user.offloadfs.nope)" "ENODATA"
t_eq "an entry's name on the root -> ENODATA" "$(xa "$M" get user.offload.tool)" "ENODATA"
t_eq "security.* on the root -> EOPNOTSUPP" "$(xa "$M" get security.selinux)" "ENOTSUP"
t_eq "an entry does not list the root's names" "$(xa "$M/k" list | tr ' ' '\n' | sort | tr '\n' ' ')" \
    "user.offload.created user.offload.original_size user.offload.truncated "
t_eq "an entry: user.offloadfs.store -> ENODATA" "$(xa "$M/k" get user.offloadfs.store)" "ENODATA"
t_eq "setxattr on the root -> EROFS" "$(m_errno setxattr "$M" user.offloadfs.namespace)" "EROFS"

# The root's ctime is the daemon's start and stays; its mtime moves with
# changes. A reader that cannot read attributes tells mounts apart by it.
times() { python3 -c 'import os, sys; s = os.stat(sys.argv[1]); print(s.st_ctime_ns, s.st_mtime_ns)' "$1"; }
read -r c1 m1 < <(times "$M")
sleep 0.05
printf 'more\n' | m_put "$S" k2 other
read -r c2 m2 < <(times "$M")
t_eq "a change: the root's ctime stays" "$c2" "$c1"
t_check "... its mtime moves ($m1 -> $m2)" test "$m2" -gt "$m1"

# The default namespace, store named by its real path.
M2=$T_TMP/mnt2
m_mount "$S" "$M2" || { t_not_ok "mount 2"; t_done; }
t_eq "default mount: namespace default" \
    "$(getfattr --absolute-names --only-values -n user.offloadfs.namespace "$M2")" "default"
t_eq "default mount: same store path" \
    "$(getfattr --absolute-names --only-values -n user.offloadfs.store "$M2")" "$REAL"

read -r c3 _ < <(times "$M2")
t_check "another daemon's root has another ctime ($c3, $c1)" test "$c3" != "$c1"
m_umount "$M2"; t_eq "daemon 2 exits 0 after fusermount3 -u" "$?" "0"
# The same path mounted again, as fast as can be: same mount id and device
# number as likely as not, but another ctime.
m_mount "$S" "$M2" || { t_not_ok "mount 2 again"; t_done; }
read -r c4 _ < <(times "$M2")
t_check "the same path mounted again: another ctime ($c4, $c3)" test "$c4" != "$c3"
m_umount "$M2"; t_eq "daemon 2 again exits 0 after fusermount3 -u" "$?" "0"
m_umount "$M"; t_eq "daemon exits 0 after fusermount3 -u" "$?" "0"
t_done
