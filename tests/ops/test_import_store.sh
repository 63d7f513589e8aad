#!/bin/bash
# test_import_store.sh -- agentlink import refuses a directory that is, holds
# or lies inside an LMDB store (ours or any other LMDB environment), before
# touching anything: import moves files, and moving data.mdb or lock.mdb
# destroys the store. Paths that reach the store by a
# symlink or by '..' are caught too: the check walks up by device and inode.
# The last part imports from a store that a mounted daemon serves.
# run.sh: alone (make, an install or a machine-wide path)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fs/mountlib.sh"

al() { $AGENTLINK "$@"; }
unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG OFFLOADFS_STORE XDG_STATE_HOME
has() { case $2 in *"$3"*) t_ok "$1" ;; *) t_not_ok "$1"; printf '  %q lacks %q\n' "$2" "$3" ;; esac; }

S=$T_TMP/store
al --store "$S" init >/dev/null || { t_not_ok "init"; t_done; }
printf 'kept bytes\n' | al --store "$S" put k1 >/dev/null || { t_not_ok "put"; t_done; }
# What must never change: the store files (name -> inode, and data.mdb's bytes).
snap() { stat -c '%n %i' "$S/data.mdb" "$S/lock.mdb"; md5sum <"$S/data.mdb"; ls -a "$S"; }
before=$(snap)
intact() { # intact DESC : store files unchanged, k1 still readable
    t_eq "$1: store files untouched" "$(snap)" "$before"
    t_eq "$1: the stored result still reads back" "$(al --store "$S" get k1 2>&1)" "kept bytes"
}

# ---- the store's own directory, however it is spelled ---------------------------
t_rc "import of the store's own directory exits 2" 2 al --store "$S" import "$S"
t_eq "the message names the directory and the problem" "$(cat "$T_TMP/err")" \
    "agentlink: cannot import directory '$S': it is the store '$S' itself; import moves files and would destroy the store; nothing was touched"
intact "store dir"
t_rc "--keep does not make it acceptable" 2 al --store "$S" import "$S" --keep
intact "store dir --keep"
ln -s "$S" "$T_TMP/link"
t_rc "a symlink to the store is refused" 2 al --store "$S" import "$T_TMP/link"
has "the symlink: the message says it is the store" "$(cat "$T_TMP/err")" "it is the store '$S' itself"
mkdir "$S/sub"; printf 'spilled\n' >"$S/sub/r1"
before=$(snap)
t_rc "a path with '..' back into the store is refused" 2 al --store "$S" import "$S/sub/.."
intact "dotdot"

# ---- a directory inside the store ---------------------------------------------
t_rc "a directory inside the store is refused" 2 al --store "$S" import "$S/sub"
has "the message says it lies inside the store" "$(cat "$T_TMP/err")" \
    "cannot import directory '$S/sub': it lies inside the store '$S'"
t_eq "its file is left in place" "$(cat "$S/sub/r1")" "spilled"
t_rc "its file did not reach the store" 3 al --store "$S" get r1
intact "inside"

# ---- another store, or a foreign LMDB environment -------------------------------
O=$T_TMP/other
al --store "$O" init >/dev/null
oldsnap=$(stat -c '%n %i' "$O/data.mdb" "$O/lock.mdb")
t_rc "another offloadfs store is refused (import into the first)" 2 al --store "$S" import "$O"
has "the message names the LMDB file found" "$(cat "$T_TMP/err")" \
    "cannot import directory '$O': it holds an LMDB environment ('data.mdb'); import moves files and would destroy it; nothing was touched"
t_eq "the other store's files are untouched" "$(stat -c '%n %i' "$O/data.mdb" "$O/lock.mdb")" "$oldsnap"
F=$T_TMP/foreign
mkdir "$F"
printf 'VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n 6b6579\n 76616c7565\nDATA=END\n' | mdb_load "$F"
t_check "mdb_load made a foreign LMDB environment" test -f "$F/data.mdb"
t_rc "a foreign LMDB environment is refused" 2 al --store "$S" import "$F"
t_check "its data.mdb is still there" test -f "$F/data.mdb"
t_eq "and still a readable LMDB environment" "$(mdb_dump -p "$F" | grep -c '^ key$')" 1
mkdir -p "$F/deep/er"; printf 'x\n' >"$F/deep/er/r2"
t_rc "a directory two levels inside a foreign environment is refused" 2 al --store "$S" import "$F/deep/er"
has "the message names the environment above it" "$(cat "$T_TMP/err")" \
    "cannot import directory '$F/deep/er': it lies inside an LMDB environment ('$F' holds 'data.mdb'); nothing was touched"
t_check "the file there is left in place" test -f "$F/deep/er/r2"
L=$T_TMP/lockonly; mkdir "$L"; : >"$L/lock.mdb"; printf 'y\n' >"$L/r3"
t_rc "a directory holding only a lock.mdb is refused" 2 al --store "$S" import "$L"
has "lock.mdb is named" "$(cat "$T_TMP/err")" "it holds an LMDB environment ('lock.mdb')"

# ---- the store directory before it holds a store --------------------------------
N=$T_TMP/newstore; mkdir "$N"; printf 'z\n' >"$N/r4"
t_rc "the configured store directory, still without a store, is refused" 2 al --store "$N" import "$N"
has "the message says it is the store" "$(cat "$T_TMP/err")" "it is the store '$N' itself"
t_check "no store was created there" test ! -e "$N/data.mdb"
t_check "its file is left in place" test -f "$N/r4"

# ---- an ordinary directory next to the store still imports ---------------------
D=$T_TMP/spill; mkdir "$D"; printf 'spilled result\n' >"$D/r5"
t_rc "a plain directory beside the store imports" 0 al --store "$S" import "$D"
t_eq "its file is in the store" "$(al --store "$S" get r5)" "spilled result"

# ---- a daemon serving the store ---------------------------------------------------
m_require_fuse
M=$T_TMP/mnt
m_mount "$S" "$M" || { t_not_ok "mount"; t_done; }
before=$(snap) # after the mount: the daemon adds its wake-up directory, wake/
t_rc "import of a mounted store's directory exits 2" 2 al --store "$S" import "$S"
t_rc "and with --keep" 2 al --store "$S" import "$S" --keep
intact "mounted"
t_eq "the mount still serves the result" "$(cat "$M/k1")" "kept bytes"
t_check "the daemon is still running" kill -0 "$(m_pid "$M")"
t_eq "its log says nothing of lock.mdb" "$(grep -c 'lock.mdb' "$M.log")" 0
m_umount "$M"; t_eq "the daemon exits 0 after unmount" "$?" 0
t_done
