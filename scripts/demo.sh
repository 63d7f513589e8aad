#!/bin/bash
# scripts/demo.sh -- make demo: a round trip a newcomer can watch. Offload a
# large tool result, read it back with ls, wc, grep, sed and tail, evict it by
# writing more than the bound, see "No data available", unmount.
# Uses a scratch store and mountpoint under /tmp and leaves nothing behind.
# Exits 0 when every step did what it shows, 1 otherwise.
set -u
cd "$(dirname "$0")/.."
B=${OFFLOADFS_BUILD:-$PWD/build}
case $B in /*) ;; *) B=$PWD/$B ;; esac
for p in offloadfs agentlink; do
    [ -x "$B/$p" ] || { echo "demo: $B/$p is not built: run make demo (it builds first)" >&2; exit 1; }
done
W=$(mktemp -d /tmp/offloadfs-demo.XXXXXX)
S=$W/store M=$W/mnt
PATH=$B:$PATH
unset OFFLOADFS_CONFIG OFFLOADFS_NAMESPACE
export OFFLOADFS_STORE=$S OFFLOADFS_MOUNT=$M
DAEMON= FAILED=0
cleanup() {
    if mountpoint -q "$M" 2>/dev/null; then fusermount3 -u "$M" || fusermount3 -uz "$M"; fi
    [ -n "$DAEMON" ] && wait "$DAEMON"
    rm -rf "$W"
}
trap cleanup EXIT

if [ -t 1 ]; then BOLD=$'\033[1m' RED=$'\033[31m' OFF=$'\033[0m'; else BOLD= RED= OFF=; fi
say() { printf '\n%s# %s%s\n' "$BOLD" "$*" "$OFF"; }
fail() { printf '%sdemo: %s%s\n' "$RED" "$*" "$OFF"; FAILED=1; }
# run CMD: shows and runs a shell command line that must succeed.
run() { printf '$ %s\n' "$1"; eval "$1" || fail "that command failed (exit $?)"; }
# run_fails CMD: shows and runs one that is expected to fail.
run_fails() { printf '$ %s\n' "$1"; if eval "$1"; then fail "that command should have failed"; fi; }
# until_ok SECONDS CMD: polls CMD every 20 ms (a write shows in the mount
# within one second).
until_ok() {
    local i n=$(($1 * 50)); shift
    for ((i = 0; i < n; i++)); do "$@" 2>/dev/null && return 0; sleep 0.02; done
    return 1
}
enodata() { ! cat "$1" >/dev/null 2>"$W/err" && grep -q "No data available" "$W/err"; }

say "A store bounded at 3 MiB, mounted read-only at $M"
run "agentlink init --max-total-bytes 3M --max-result-bytes 2M"
mkdir -p "$M"
offloadfs -f "$S" "$M" 2>"$W/daemon.log" &
DAEMON=$!
until_ok 10 mountpoint -q "$M" || { fail "the mount did not come up; daemon log:"; cat "$W/daemon.log"; exit 1; }

say "A tool returns 1.2 MB of build log; the agent offloads it and gets a pointer back"
run "{ seq -f 'build step %g ok' 1 60000; echo 'error: linker failed at step 60000'; } > $W/build.log"
run "agentlink offload --tool bash --call-id call_build_1 < $W/build.log"

say "Any program reads it back as a plain file: ls, wc, grep, sed -n, tail"
until_ok 2 test -e "$M/call_build_1" || fail "call_build_1 did not show in the mount"
run "ls -l $M"
run "wc -c $M/call_build_1"
run "grep -n error $M/call_build_1"
run "sed -n 3,5p $M/call_build_1"
run "tail -n 1 $M/call_build_1"
run "cmp $W/build.log $M/call_build_1 && echo 'identical to what the tool returned'"

say "Stored compressed: the bound counts stored_bytes, the sizes stay the originals"
run "agentlink stats"

say "Two large downloads that do not compress: the store keeps its 3 MiB bound by evicting the oldest"
run "head -c 1600000 /dev/urandom | agentlink put page_1 --tool web_fetch"
run "head -c 1600000 /dev/urandom | agentlink put page_2 --tool web_fetch"
run "agentlink ls"
until_ok 2 enodata "$M/call_build_1" || fail "call_build_1 was not evicted"
run_fails "cat $M/call_build_1"
printf '%s\n' "The agent sees \"No data available\" and knows to run the tool again."
run_fails "agentlink stat call_build_1"
run "agentlink stats"

say "Unmount"
run "fusermount3 -u $M"
wait "$DAEMON"; rc=$?; DAEMON=
echo "daemon exited $rc"
[ "$rc" -eq 0 ] || fail "the daemon exited $rc"

if [ "$FAILED" -ne 0 ]; then echo; fail "the demo did not go as shown"; exit 1; fi
printf '\n%sDone.%s Scratch files in %s are removed. Next: make run (README).\n' "$BOLD" "$OFF" "$W"
