#!/bin/bash
# scripts/demo.sh -- make demo: a round trip a newcomer can watch. Offload a
# large tool result, read it back with ls, cat, grep and sed, evict it by
# writing more than the bound, see "No data available", unmount.
# Uses a scratch store and mountpoint; leaves nothing behind.
set -u
cd "$(dirname "$0")/.."
B=${OFFLOADFS_BUILD:-$PWD/build}
W=$(mktemp -d /tmp/offloadfs-demo.XXXXXX)
S=$W/store M=$W/mnt
PATH=$B:$PATH
export OFFLOADFS_STORE=$S OFFLOADFS_MOUNT=$M
DAEMON=
cleanup() {
    mountpoint -q "$M" && fusermount3 -u "$M"
    [ -n "$DAEMON" ] && wait "$DAEMON"
    rm -rf "$W"
}
trap cleanup EXIT

say() { printf '\n\033[1m# %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; eval "$@"; }

say "A store bounded at 3 MiB, mounted read-only at $M"
run agentlink init --max-total-bytes 3M --max-result-bytes 2M
mkdir -p "$M"
offloadfs -f "$S" "$M" 2>"$W/daemon.log" &
DAEMON=$!
for _ in $(seq 500); do mountpoint -q "$M" && break; sleep 0.01; done
mountpoint -q "$M" || { echo "mount failed:"; cat "$W/daemon.log"; exit 1; }

say "A tool returns 1.3 MB of build log; the agent offloads it and gets a pointer"
run "seq -f 'build step %g ok' 1 60000 | sed '\$a error: linker failed at step 60000' > $W/build.log"
run "agentlink offload --tool bash --call-id call_build_1 < $W/build.log"

say "Any tool reads it back: ls, wc, grep, sed -n, tail"
sleep 0.2
run ls -l "$M"
run wc -c "$M/call_build_1"
run grep -n "error" "$M/call_build_1"
run sed -n 3,5p "$M/call_build_1"
run tail -n 1 "$M/call_build_1"

say "Two more large results: the bound holds, the oldest is evicted"
run "head -c 1500000 /dev/zero | tr '\\\\0' 'x' | agentlink put page_1 --tool web_fetch"
run "head -c 1500000 /dev/zero | tr '\\\\0' 'y' | agentlink put page_2 --tool web_fetch"
sleep 0.3
run agentlink ls
run cat "$M/call_build_1"
run agentlink stat call_build_1
run agentlink stats

say "Unmount"
run fusermount3 -u "$M"
wait "$DAEMON"; echo "daemon exited $?"; DAEMON=
