#!/bin/bash
# Every errno of doc/contract.md through real syscalls: ENOENT for a
# never-written name, ENODATA for a removed or evicted one (stat, open, cat,
# ls NAME), EROFS for every write; extended attributes.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse

# A small bound so a put can evict: 100,000 bytes in all (random bytes:
# compression leaves them as they are).
S=$(m_store s 100000) || { t_not_ok "make a store"; t_done; }
M=$T_TMP/mnt
# Eviction drops the oldest first: old-big goes in first.
head -c 60000 /dev/urandom | m_put "$S" old-big
printf 'data\n' | m_put "$S" keep "" mytool
printf 'gone soon\n' | m_put "$S" removed
printf 'no tool here' | "$M_CTL" "$S" put notool >/dev/null
printf 'head...tail' | "$M_CTL" "$S" put cut default web_search 5000000 1 >/dev/null
m_mount "$S" "$M" || { t_not_ok "mount"; t_done; }
F=$M/keep

# Look the names up once so the kernel caches them: the errors below must
# hold for cached names too.
stat "$M/removed" "$M/old-big" >/dev/null
m_rm "$S" removed
head -c 60000 /dev/urandom | m_put "$S" new-big   # evicts old-big
t_check "old-big was evicted in the store" bash -c "! '$M_CTL' '$S' get old-big >/dev/null 2>&1"

# ---- ENOENT: never written ----------------------------------------------------------
for op in stat lstat open_r read; do
    t_eq "never-written: $op -> ENOENT" "$(m_errno $op "$M/never")" "ENOENT"
done
t_eq "never-written: getxattr -> ENOENT" "$(m_errno getxattr "$M/never" user.offload.tool)" "ENOENT"
t_eq "a name no key can have (.dot) -> ENOENT" "$(m_errno stat "$M/.hidden")" "ENOENT"
t_eq "a 300-byte name -> ENAMETOOLONG" "$(m_errno stat "$M/$(printf 'a%.0s' {1..300})")" "ENAMETOOLONG"
t_rc "cat never-written fails" 1 cat "$M/never"
t_check "cat says No such file or directory" grep -q "No such file or directory" "$T_TMP/err"
t_eq "python open -> FileNotFoundError" \
    "$(python3 -c 'import sys
try: open(sys.argv[1])
except FileNotFoundError: print("FileNotFoundError")' "$M/never")" "FileNotFoundError"

# ---- ENODATA: removed and evicted (waited for up to 10 s: a deadline, not a speed check)
for k in removed old-big; do
    t_check "'$k' turns ENODATA" t_wait_until 10 bash -c "[ \"\$('$M_PROBE' errno stat '$M/$k')\" = ENODATA ]"
    for op in stat lstat open_r read; do
        t_eq "$k: $op -> ENODATA" "$(m_errno $op "$M/$k")" "ENODATA"
    done
    t_rc "$k: cat fails" 1 cat "$M/$k"
    t_check "$k: cat says No data available" grep -q "No data available" "$T_TMP/err"
    t_rc "$k: ls NAME fails" 2 ls "$M/$k"
    t_check "$k: ls says No data available" grep -q "No data available" "$T_TMP/err"
    t_check "$k: not listed" bash -c "! ls '$M' | grep -qx '$k'"
done
t_eq "the evicting entry is there" "$(stat -c %s "$M/new-big")" "60000"

# ---- EROFS: every write ----------------------------------------------------------------
for op in open_w open_rw open_trunc creat truncate unlink chmod chown utimes access_w; do
    t_eq "$op on an entry -> EROFS" "$(m_errno $op "$F")" "EROFS"
done
t_eq "creat of a new name -> EROFS" "$(m_errno creat "$M/brand-new")" "EROFS"
t_eq "open_w of a new name -> EROFS" "$(m_errno creat "$M/never")" "EROFS"
t_eq "rename -> EROFS" "$(m_errno rename "$F" "$M/renamed")" "EROFS"
t_eq "mkdir -> EROFS" "$(m_errno mkdir "$M/dir")" "EROFS"
t_eq "rmdir of the root's child -> EROFS" "$(m_errno rmdir "$M/dir")" "EROFS"
t_eq "symlink -> EROFS" "$(m_errno symlink "$F" "$M/link")" "EROFS"
t_eq "link -> EROFS" "$(m_errno link "$F" "$M/hard")" "EROFS"
t_eq "mknod (fifo) -> EROFS" "$(m_errno mknod "$M/fifo")" "EROFS"
t_eq "setxattr -> EROFS" "$(m_errno setxattr "$F" user.mine)" "EROFS"
t_eq "removexattr -> EROFS" "$(m_errno removexattr "$F" user.offload.tool)" "EROFS"
t_eq "chmod the root -> EROFS" "$(m_errno chmod "$M")" "EROFS"
t_rc "shell redirection into an entry fails" 1 bash -c "echo x > '$F'"
t_check "and says Read-only file system" grep -q "Read-only file system" "$T_TMP/err"
t_eq "the entry is unchanged" "$(cat "$F")" "data"

# ---- extended attributes ------------------------------------------------------------------
cat >"$T_TMP/xa.py" <<'EOF'
import ctypes, errno, os, re, sys
d = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
def g(name, attr):
    try: return os.getxattr(os.path.join(d, name), attr).decode()
    except OSError as e: return errno.errorcode[e.errno]
def size_query(name, attr):
    n = libc.getxattr(os.path.join(d, name).encode(), attr.encode(), None, 0)
    return n if n >= 0 else errno.errorcode[ctypes.get_errno()]
def small_buf(name, attr):
    buf = ctypes.create_string_buffer(2)
    n = libc.getxattr(os.path.join(d, name).encode(), attr.encode(), buf, 2)
    return n if n >= 0 else errno.errorcode[ctypes.get_errno()]
cmd = sys.argv[2]
if cmd == 'get': print(g(sys.argv[3], sys.argv[4]))
elif cmd == 'list': print(' '.join(sorted(os.listxattr(os.path.join(d, sys.argv[3])))))
elif cmd == 'size': print(size_query(sys.argv[3], sys.argv[4]))
elif cmd == 'small': print(small_buf(sys.argv[3], sys.argv[4]))
EOF
xa() { python3 "$T_TMP/xa.py" "$M" "$@" 2>&1; }
t_eq "user.offload.tool" "$(xa get keep user.offload.tool)" "mytool"
t_eq "user.offload.original_size" "$(xa get keep user.offload.original_size)" "5"
t_eq "user.offload.truncated" "$(xa get keep user.offload.truncated)" "0"
created=$(xa get keep user.offload.created)
t_check "user.offload.created is RFC 3339 UTC ($created)" \
    bash -c "[[ '$created' =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$ ]]"
t_eq "created agrees with mtime" "${created:0:19}" "$(date -u -d "@$(stat -c %Y "$F")" +%Y-%m-%dT%H:%M:%S)"
t_eq "truncated entry: truncated = 1" "$(xa get cut user.offload.truncated)" "1"
t_eq "truncated entry: original_size" "$(xa get cut user.offload.original_size)" "5000000"
t_eq "truncated entry: st_size is the stored length" "$(stat -c %s "$M/cut")" "11"
t_eq "listxattr names all four" "$(xa list keep)" \
    "user.offload.created user.offload.original_size user.offload.tool user.offload.truncated"
t_eq "no tool: user.offload.tool is not listed" "$(xa list notool)" \
    "user.offload.created user.offload.original_size user.offload.truncated"
t_eq "no tool: getxattr user.offload.tool -> ENODATA" "$(xa get notool user.offload.tool)" "ENODATA"
t_eq "unknown name -> ENODATA" "$(xa get keep user.offload.nope)" "ENODATA"
t_eq "unknown user.* name on the root -> ENODATA" "$(xa get . user.offload.tool)" "ENODATA"
t_eq "ACL name -> EOPNOTSUPP (no ACLs here)" "$(xa get keep system.posix_acl_access)" "ENOTSUP"
t_eq "security.* -> EOPNOTSUPP (no labels here)" "$(xa get keep security.selinux)" "ENOTSUP"
t_eq "trusted.* -> EOPNOTSUPP" "$(xa get keep trusted.x)" "ENOTSUP"
t_eq "size query returns the length" "$(xa size keep user.offload.tool)" "6"
t_eq "too small a buffer -> ERANGE" "$(xa small keep user.offload.tool)" "ERANGE"
t_eq "the root lists only its own two" "$(xa list .)" "user.offloadfs.namespace user.offloadfs.store"
t_eq "removed entry: getxattr -> ENODATA" "$(xa get removed user.offload.tool)" "ENODATA"

m_umount "$M"; t_eq "daemon exits 0 after fusermount3 -u" "$?" "0"
t_done
