#!/bin/bash
# The local store as a cache of the remote (doc/remote.md "The local store
# as a cache"), against the real radosgw tests/run.sh started: two stores
# on one bucket are two hosts. A writes; B's first get fetches the result
# (a miss) and keeps it as a cached copy of that version; B's second get is
# a hit (the copy, after one HEAD); with B's remote pointed at a closed
# port (radosgw is not stopped: other suites share it), B still serves it
# through get, stat and Python, and only what it never read is unknown
# (exit 6). A rewrite on A replaces B's copy; A's rm drops it (exit 4).
# B's mount answers as the remote does while B holds a copy (the new
# version, which drops the old copy, then ENODATA), and serves the copy
# with the remote down.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../fs/mountlib.sh"
m_require_fuse
AL=$AGENTLINK # under OFFLOADFS_WRAP (valgrind) too
r_require_s3
export OFFLOADFS_REMOTE_STALL_SECONDS=2 OFFLOADFS_REMOTE_RETRIES=1
unset OFFLOADFS_STORE OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG
URL=s3://$OFFLOADFS_S3_BUCKET/cache-$$-$(date +%s%N)
A=$T_TMP/a B=$T_TMP/b
has() { case $2 in *"$3"*) t_ok "$1" ;; *) t_not_ok "$1"; printf '  %q lacks %q\n' "${2:0:600}" "$3" ;; esac; }
# stat FIELD... of B's stats --json, space-separated
bstats() { $AL --store "$B" --json stats | python3 -c 'import json,sys; j=json.load(sys.stdin); print(" ".join(str(j.get(k)) for k in sys.argv[1:]))' "$@"; }
text() { head -c "$1" /dev/urandom | base64 -w 100 | head -c "$1"; } # text of N bytes
# A port nothing listens on: bound, then closed (connections are refused).
CLOSED=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
down() { AWS_ENDPOINT_URL_S3=http://127.0.0.1:$CLOSED "$@"; }

t_rc "A: init --remote" 0 $AL --store "$A" init --remote "$URL"
t_rc "B: init --remote (the same)" 0 $AL --store "$B" init --remote "$URL"
text $((600 * 1024)) >"$T_TMP/k"
text 5000 >"$T_TMP/other"
t_rc "A: put k (uploaded)" 0 $AL --store "$A" put k --tool bash --file "$T_TMP/k"
t_rc "A: put other (uploaded)" 0 $AL --store "$A" put other --file "$T_TMP/other"
t_eq "B holds nothing yet: entries cached_entries" "$(bstats entries cached_entries)" "0 0"

t_rc "B: get k (a miss: fetched from the remote)" 0 $AL --store "$B" get k
t_check "  the exact bytes" cmp -s "$T_TMP/out" "$T_TMP/k"
t_eq "  kept: entries cached_entries cached_bytes cache_misses cache_hits pending" \
    "$(bstats entries cached_entries cached_bytes cache_misses cache_hits pending)" "1 1 614400 1 0 0"
t_rc "B: get k again (a hit)" 0 $AL --store "$B" get k
t_check "  the exact bytes" cmp -s "$T_TMP/out" "$T_TMP/k"
t_eq "  a hit, no second fetch: cache_misses cache_hits" "$(bstats cache_misses cache_hits)" "1 1"
t_rc "B: stat k" 0 $AL --store "$B" stat k
has "  where: cached here" "$(cat "$T_TMP/out")" $'size: 614400\ntool: bash'
has "  ... where: cached here" "$(cat "$T_TMP/out")" "where: cached here"
t_rc "B: stat --json k" 0 $AL --store "$B" --json stat k
t_eq "  where here, cached true" \
    "$(python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["where"], j.get("cached"))' <"$T_TMP/out")" "here True"
t_rc "B: stats (text) names the cache apart" 0 $AL --store "$B" stats
has "  cached_entries: 1" "$(cat "$T_TMP/out")" $'cached_entries: 1\ncached_bytes: 614400\ncache_hits: 1\ncache_misses: 1'
t_rc "B: sync sends nothing (a copy is never pending)" 0 $AL --store "$B" sync

# ---- B's remote at a closed port ----------------------------------------
t0=$(date +%s%N)
t_rc "B, remote down: get k exits 0" 0 down $AL --store "$B" get k
echo "# (a figure, not a check: that get took $((($(date +%s%N) - t0) / 1000000)) ms, the HEAD's refused attempts included)"
t_check "  the exact bytes" cmp -s "$T_TMP/out" "$T_TMP/k"
t_rc "B, remote down: stat k exits 0" 0 down $AL --store "$B" stat k
has "  where: cached here" "$(cat "$T_TMP/out")" "where: cached here"
cat >"$T_TMP/read.py" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "agentlink", "python"))
import agentlink
s = agentlink.ToolResultStore(store=sys.argv[2])
try:
    data = s.read_bytes(sys.argv[3])
    print("bytes", len(data), data == open(sys.argv[4], "rb").read())
except Exception as e:
    print(type(e).__name__)
PY
# An ASan build of the library needs its runtime preloaded into python.
asan=$(ldd "$T_BUILD/libagentlink.so" 2>/dev/null | awk '/libasan/ {print $3}')
py() { AGENTLINK_LIB=$T_BUILD/libagentlink.so LD_PRELOAD=${asan:-} ASAN_OPTIONS=detect_leaks=0 timeout 120 python3 "$@"; }
t_eq "B, remote down: Python read_bytes(k), the exact bytes" \
    "$(down py "$T_TMP/read.py" "$T_TOP" "$B" k "$T_TMP/k")" "bytes 614400 True"
t_rc "B, remote down: get of what B never read exits 6 (unknown)" 6 down $AL --store "$B" get other
t_eq "  hits counted: cache_hits" "$(bstats cache_hits)" "3"
down m_mount "$B" "$T_TMP/mdown" || t_not_ok "mount B with its remote down"
t_wait_until 60 mountpoint -q "$T_TMP/mdown"
t_check "B's mount, remote down: k is the copy's bytes" cmp -s "$T_TMP/mdown/k" "$T_TMP/k"
m_umount "$T_TMP/mdown"; t_eq "  the daemon exits 0" "$?" 0

MB=$T_TMP/mnt-b
m_mount "$B" "$MB" -o remote_ttl=1 || t_not_ok "mount B"
t_wait_until 60 mountpoint -q "$MB"
t_check "B's mount: k, the copy's version" cmp -s "$MB/k" "$T_TMP/k"

# ---- the remote's newer version and its tombstone -----------------------
text 7000 >"$T_TMP/k2"
t_rc "A: put k again (a rerun, new bytes)" 0 $AL --store "$A" put k --file "$T_TMP/k2"
# B's mount sees the new version at its next lookup (remote_ttl=1) and
# drops the old copy then, before reading anything.
dropped() { stat "$MB/k" >/dev/null 2>&1; [ "$(bstats cached_entries)" = 0 ]; }
t_check "B's mount: a lookup that finds another version drops the old copy" t_wait_until 30 dropped
t_check "B's mount: k is the new version" t_wait_until 30 cmp -s "$MB/k" "$T_TMP/k2"
t_eq "  the mount kept the new version, replacing the old copy: cached_entries cached_bytes" \
    "$(bstats cached_entries cached_bytes)" "1 7000"
t_rc "B: get k: the new version" 0 $AL --store "$B" get k
t_check "  the new bytes, not the old copy's" cmp -s "$T_TMP/out" "$T_TMP/k2"
t_eq "  served by the mount's copy (no fetch): cache_misses" "$(bstats cache_misses)" "1"
t_rc "A: rm k" 0 $AL --store "$A" rm k
t_eq "B still holds its copy of the new version: cached_entries" "$(bstats cached_entries)" "1"
enodata() { [ "$(m_errno open_r "$MB/k")" = ENODATA ]; }
t_check "B's mount: k is ENODATA, not the copy" t_wait_until 30 enodata
t_rc "B: get k exits 4 (removed)" 4 $AL --store "$B" get k
t_eq "  the copy dropped: entries cached_entries" "$(bstats entries cached_entries)" "0 0"
m_umount "$MB"; t_eq "B's daemon exits 0" "$?" 0
t_done
