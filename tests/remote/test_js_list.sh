#!/bin/bash
# agentlink/js (OffloadBackend) listings on a store with a remote tier,
# against the real radosgw tests/run.sh started: 2,000 results, most held
# only on the remote (written by another store on the same bucket), through
# the backend's ls, glob and grep and through deepagents' own tools: every
# name listed, a marker found in a result held only on the remote; then,
# with the remote unreachable, the answers say they are incomplete where the
# model sees them. Host B's store is mounted (reads through the mount), and
# read without a mount (through the CLI). The remote is made unreachable for
# B (its daemon and the backend's CLI) by pointing them at a closed local
# port (the store keeps the URL, the endpoint comes from the environment), so
# radosgw is not stopped.
# run.sh: npm clients
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
. "$T_TOP/tests/fs/mountlib.sh"
m_require_fuse
r_require_s3
AL=$T_BUILD/agentlink
if ! command -v node >/dev/null; then t_not_ok "node is installed (Node 20)"; t_done; fi
if "$T_TOP/scripts/npm-deps.sh" "$T_TOP/tests/js" >"$T_TMP/npm.log" 2>&1; then
    t_ok "scripts/npm-deps.sh installs tests/js's pinned packages (deepagents)"
else
    t_not_ok "scripts/npm-deps.sh installs tests/js's pinned packages"; sed 's/^/  /' "$T_TMP/npm.log"; t_done
fi
unset OFFLOADFS_STORE OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG
URL=s3://$OFFLOADFS_S3_BUCKET/jsls-$$-$(date +%s%N)
N_REMOTE=1995 N_HERE=5

# Host A writes 1,995 results from 16 threads of one Python process (its
# store in memory: no fsync to wait for, only the uploads).
SHM=$(mktemp -d /dev/shm/offloadfs-jsls.XXXXXX) && t_on_exit "rm -rf '$SHM'"
A=$SHM/a B=$(m_store b) || { t_not_ok "make two stores"; t_done; }
t_rc "A: init --remote" 0 "$AL" --store "$A" init --remote "$URL"
t_rc "B: init --remote, the same bucket and prefix" 0 "$AL" --store "$B" init --remote "$URL"
t_rc "A writes $N_REMOTE results, every one uploaded" 0 python3 - "$T_TOP" "$A" "$N_REMOTE" <<'PY'
import sys, threading
sys.path.insert(0, sys.argv[1] + "/agentlink/python")
import agentlink
store, n = sys.argv[2], int(sys.argv[3])
h = agentlink.ToolResultStore(store=store)
def body(i):
    if i == 1234:
        return "line one\nMARKER-remote-only end\nline three\n"
    return f"result {i:04d}\n"
def writer(t):
    for i in range(t, n, 16):
        h.write(key=f"call_r_{i:04d}.txt", content=body(i))
ts = [threading.Thread(target=writer, args=(t,)) for t in range(16)]
for t in ts: t.start()
for t in ts: t.join()
PY
t_eq "  A has no upload pending" "$("$AL" --store "$A" --json stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["pending"])')" 0
for i in $(seq 0 $((N_HERE - 1))); do
    echo "result here $i" | "$AL" --store "$B" put "call_b_$i.txt" >/dev/null || t_not_ok "B: put call_b_$i.txt"
done
t_eq "B's ls lists all 2000 names (the CLI merges the remote's)" "$("$AL" --store "$B" ls | wc -l)" 2000
t_eq "  of which 5 are held on B" "$("$AL" --store "$B" --json ls | grep -o '"where":"here"' | wc -l)" "$N_HERE"

MB=$T_TMP/mnt-b
t_check "mount B" m_mount "$B" "$MB"
run_node() { # run_node MODE MOUNT [VAR=VALUE...]: js_list.mjs in MODE (up, down)
    local mode=$1 mnt=$2; shift 2
    echo "# node --test js_list.mjs ($mode, mount $mnt)"
    if ! (cd "$T_TOP/tests/remote" && env OFL_AGENTLINK="$AL" OFL_STORE="$B" OFL_MOUNT="$mnt" \
        OFL_MODE="$mode" OFL_N_REMOTE="$N_REMOTE" OFL_N_HERE="$N_HERE" "$@" \
        node --test --test-reporter=tap js_list.mjs); then
        T_FAILS=$((T_FAILS + 1))
    fi
}
mkdir -p "$T_TMP/nomount"
# Through the mount grep searches all 2,000 in the last run (each result
# held only on the remote is a fetch by the daemon); without one, each read is a process
# (agentlink get), which keeps what it fetches as a cached copy (held
# here): that run is host C's, a third store on the bucket, so that B holds
# its 5 results only when its remote goes down below.
C=$(m_store c) && "$AL" --store "$C" init --remote "$URL" >/dev/null || t_not_ok "C: init --remote"
run_node up "$MB"
run_node up "$T_TMP/nomount" OFL_STORE="$C"

# The remote unreachable for B: a port nothing listens on (bound, then
# closed), for B's daemon (mounted again) and for the backend's CLI runs.
CLOSED=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
m_umount "$MB"; rc=$?
t_eq "offloadfs on B exits 0 after unmount" "$rc" 0
export OFFLOADFS_REMOTE_STALL_SECONDS=1 OFFLOADFS_REMOTE_RETRIES=0
AWS_ENDPOINT_URL_S3=http://127.0.0.1:$CLOSED \
    t_check "mount B, its remote at a closed port $CLOSED" m_mount "$B" "$MB" -o remote_stall=1,remote_retries=0
# What B holds here now: its own 5 and any cached copy a read through the
# CLI kept (the backend falls back to agentlink get when a mount read is
# slow: on a loaded machine some are).
held() { "$AL" --store "$B" --json ls | python3 -c 'import json, sys
print(",".join(r["key"] for r in json.load(sys.stdin) if r["where"] == "here"))'; }
HELD=$(held)
t_check "  B holds its own 5 results" bash -c "[ \$(tr , '\n' <<<'$HELD' | grep -c '^call_b_') -eq $N_HERE ]"
# The listing reaches the remote, the daemon's reads do not.
run_node mixed "$MB" OFL_HELD="$HELD"
HELD=$(held)
run_node down "$MB" AWS_ENDPOINT_URL_S3=http://127.0.0.1:$CLOSED OFL_HELD="$HELD"
run_node down "$T_TMP/nomount" AWS_ENDPOINT_URL_S3=http://127.0.0.1:$CLOSED OFL_HELD="$HELD"
m_umount "$MB"; rc=$?
t_eq "offloadfs on B exits 0 after unmount" "$rc" 0

# Last, with the remote back: grep through B's mount reads all 2,000. The
# daemon keeps each result it reads as a cached copy (fs/keep.h), so after
# this B holds them all; the runs above needed B holding few.
t_check "mount B, its remote reachable again" m_mount "$B" "$MB"
run_node up "$MB" OFL_GREP_ALL=1
m_umount "$MB"; rc=$?
t_eq "offloadfs on B exits 0 after unmount" "$rc" 0
t_done
