#!/bin/sh
# scripts/run.sh -- make run: mount the default store at the default mount
# in the background and say how to feed it and how to unmount.
#   scripts/run.sh stop   -- make stop: unmount what run mounted.
# Store, mountpoint and namespace follow the programs' own rules:
# $OFFLOADFS_STORE, $OFFLOADFS_MOUNT, $OFFLOADFS_NAMESPACE, else the defaults.
set -eu
cd "$(dirname "$0")/.."
B=${OFFLOADFS_BUILD:-build}
MNT=${OFFLOADFS_MOUNT:-/large_tool_results}
NS=${OFFLOADFS_NAMESPACE:-default}
if [ -n "${OFFLOADFS_STORE:-}" ]; then STORE=$OFFLOADFS_STORE
elif [ "$(id -u)" -eq 0 ]; then STORE=/var/lib/offloadfs
else STORE=${XDG_STATE_HOME:-$HOME/.local/state}/offloadfs
fi
say() { echo "offloadfs: $*"; }
die() { echo "offloadfs: $*" >&2; exit 1; }

case $MNT in
/*) [ "$MNT" = / ] || MNT=${MNT%/} ;;
*) die "mountpoint '$MNT' is not an absolute path (OFFLOADFS_MOUNT)" ;;
esac

# The type of what is mounted at $MNT, from the mount table rather than a
# stat(), so that a mount whose daemon died (ENOTCONN) is seen too.
mounted_type() { awk -v m="$MNT" '$5 == m { t = $(NF - 2) } END { print t }' /proc/self/mountinfo; }

if [ "${1:-}" = stop ]; then
    t=$(mounted_type)
    case $t in
    "") say "nothing is mounted at $MNT"; exit 0 ;;
    fuse.offloadfs) ;;
    *) die "$MNT holds a $t mount, not offloadfs: left alone" ;;
    esac
    if ! fusermount3 -u "$MNT" 2>/dev/null && [ "$(mounted_type)" = fuse.offloadfs ]; then
        if [ -e "$MNT" ]; then
            die "cannot unmount $MNT: it is busy (see: fuser -vm $MNT); close what uses it and run make stop again"
        fi
        fusermount3 -uz "$MNT" # the daemon is gone (ENOTCONN): detach the dead mount
    fi
    say "unmounted $MNT"
    exit 0
fi

[ -x "$B/offloadfs" ] && [ -x "$B/agentlink" ] || die "$B/offloadfs is not built: run make run (it builds first)"
t=$(mounted_type)
case $t in
"") ;;
fuse.offloadfs)
    if [ -e "$MNT" ]; then say "$MNT is already mounted (make stop unmounts it)"; exit 0; fi
    say "$MNT is a dead mount (its daemon exited): detaching it"
    fusermount3 -uz "$MNT" ;;
*) die "$MNT already holds a $t mount; unmount it or set OFFLOADFS_MOUNT=DIR" ;;
esac
[ -e "$STORE/data.mdb" ] || "$B/agentlink" init --store "$STORE" >/dev/null
if ! mkdir -p "$MNT" 2>/dev/null; then
    die "cannot create mountpoint $MNT (run as root, or set OFFLOADFS_MOUNT=DIR)"
fi
# auto_unmount: if the daemon dies, the mount goes with it.
"$B/offloadfs" -o auto_unmount "$STORE" "$MNT"
# The flags agentlink needs to write where this mount reads, when not the defaults.
AL="$B/agentlink${OFFLOADFS_STORE:+ --store $STORE}${OFFLOADFS_MOUNT:+ --mount $MNT}${OFFLOADFS_NAMESPACE:+ --namespace $NS}"
cat <<MSG
offloadfs: store $STORE (namespace $NS) is mounted read-only at $MNT

Feed it:    seq 1 100000 | $AL put build-log --tool bash
            seq 1 50000 | $AL offload --tool bash --call-id call_1
Read it:    ls -l $MNT; grep -n 99999 $MNT/build-log; sed -n 10,20p $MNT/build-log
Unmount:    ${OFFLOADFS_MOUNT:+OFFLOADFS_MOUNT=$MNT }make stop   (or: fusermount3 -u $MNT)
MSG
