#!/bin/bash
# A writer removes from STORE/wake only sockets nobody listens on (daemons
# killed with SIGKILL), never anything else named *.sock, even on a
# filesystem whose directory listings carry no file types (d_type
# DT_UNKNOWN: ext4 without "filetype", XFS with ftype=0): there a regular
# file, a FIFO and a symlink named *.sock were connected to (through the
# symlink), refused, and unlinked. The store sits on such an ext4 image,
# loop-mounted.
. "$(dirname "$0")/../lib.sh"

if [ "$(id -u)" -ne 0 ]; then t_skip "a loop mount needs root"; t_done; fi
# Like /dev/fuse for the mount tests: a machine without loop devices skips,
# loudly.
if ! losetup -f >/dev/null 2>&1; then t_skip "no free loop device (losetup -f)"; t_done; fi
IMG=$T_TMP/notype.img
D=$T_TMP/fs
mkdir -p "$D"
truncate -s 32M "$IMG"
mkfs.ext4 -q -F -O ^filetype,^has_journal "$IMG" >/dev/null 2>&1 \
    || { t_not_ok "mkfs.ext4 -O ^filetype (e2fsprogs)"; t_done; }
mount -o loop "$IMG" "$D" || { t_not_ok "loop-mount an ext4 image"; t_done; }
t_on_exit "umount '$D'"
python3 - "$D" <<'PY' || t_not_ok "the filesystem lists no file types"
import ctypes, os, sys
# os.scandir's DirEntry.is_socket() stats when d_type is DT_UNKNOWN: read
# d_type itself through readdir(3).
class Dirent(ctypes.Structure):
    _fields_ = [("ino", ctypes.c_ulong), ("off", ctypes.c_long), ("reclen", ctypes.c_ushort),
                ("type", ctypes.c_ubyte), ("name", ctypes.c_char * 256)]
libc = ctypes.CDLL(None)
libc.opendir.restype = ctypes.c_void_p
libc.readdir.restype = ctypes.POINTER(Dirent)
libc.readdir.argtypes = [ctypes.c_void_p]
open(os.path.join(sys.argv[1], "probe"), "w").close()
d = libc.opendir(sys.argv[1].encode())
types = set()
while True:
    e = libc.readdir(d)
    if not e:
        break
    types.add(e.contents.type)
sys.exit(0 if types == {0} else 1)  # DT_UNKNOWN only
PY

S=$D/store
$AGENTLINK --store "$S" init >/dev/null || { t_not_ok "init a store"; t_done; }
W=$S/wake
mkdir -m 700 "$W"
echo "not a socket" >"$W/file.sock"
mkfifo "$W/fifo.sock"
echo "the link's target" >"$D/target"
ln -s ../../target "$W/link.sock"
# A stale socket: bound, then its owner gone.
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).bind(sys.argv[1])' \
    "$W/1-dead.sock"
printf 'v\n' | $AGENTLINK --store "$S" put k >/dev/null
t_eq "the put succeeds" "$?" 0
t_eq "the stale socket is removed" "$(test -e "$W/1-dead.sock"; echo $?)" 1
t_eq "a regular file named *.sock stays" "$(cat "$W/file.sock")" "not a socket"
t_eq "a FIFO named *.sock stays" "$(test -p "$W/fifo.sock"; echo $?)" 0
t_eq "a symlink named *.sock stays, and its target" \
    "$(readlink "$W/link.sock"):$(cat "$D/target")" "../../target:the link's target"
t_done
