#!/bin/sh
# scripts/run.sh -- make run: mount the default store at the default mount
# in the background and say how to feed it and how to unmount.
#   scripts/run.sh stop   -- make stop: unmount what run mounted.
set -eu
cd "$(dirname "$0")/.."
B=${OFFLOADFS_BUILD:-build}
MNT=${OFFLOADFS_MOUNT:-/large_tool_results}
if [ -n "${OFFLOADFS_STORE:-}" ]; then STORE=$OFFLOADFS_STORE
elif [ "$(id -u)" -eq 0 ]; then STORE=/var/lib/offloadfs
else STORE=${XDG_STATE_HOME:-$HOME/.local/state}/offloadfs
fi

if [ "${1:-}" = stop ]; then
    if mountpoint -q "$MNT"; then
        fusermount3 -u "$MNT" && echo "offloadfs: unmounted $MNT"
    else
        echo "offloadfs: nothing is mounted at $MNT"
    fi
    exit 0
fi

if mountpoint -q "$MNT"; then
    echo "offloadfs: $MNT is already mounted (make stop unmounts it)"
    exit 0
fi
[ -e "$STORE/data.mdb" ] || "$B/agentlink" init --store "$STORE"
mkdir -p "$MNT"
"$B/offloadfs" -o auto_unmount "$STORE" "$MNT"
cat <<MSG
offloadfs: store $STORE is mounted read-only at $MNT

Feed it:    seq 1 100000 | $B/agentlink put --store $STORE build-log --tool bash
            $B/agentlink offload --store $STORE --tool web_search --call-id call_1 < page.html
Read it:    ls -l $MNT; grep -n 99999 $MNT/build-log; sed -n 10,20p $MNT/build-log
Unmount:    make stop   (or: fusermount3 -u $MNT)
MSG
