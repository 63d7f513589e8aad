#!/bin/bash
# Tombstones whose write failed are retried (doc/remote.md "Removal").
# Two stores on one remote are two hosts: A removes with the agentlink CLI
# while radosgw is stopped (exit 5: the removal is done here, its
# tombstone pending in the store); B's daemon still serves the object.
# Then radosgw runs again and `agentlink sync` (or A's next write) sends
# the tombstone and deletes the object, so B answers ENODATA. A name
# written again before the tombstone went out is live: its put drops the
# pending tombstone, and sync leaves the new object alone.
# run.sh: alone (stops the radosgw the other remote suites share)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fs/mountlib.sh"
. "$(dirname "$0")/lib.sh"
m_require_fuse
AL=$AGENTLINK # under OFFLOADFS_WRAP (valgrind) too
r_require_s3
URL=s3://$OFFLOADFS_S3_BUCKET/tombs-$$-$(date +%s%N)
# A stopped remote costs one 1 s stall per request here, not 3 x 2 s.
export OFFLOADFS_REMOTE_STALL_SECONDS=1 OFFLOADFS_REMOTE_RETRIES=0
A=$T_TMP/a B=$T_TMP/b MB=$T_TMP/mnt-b
pending() { $AL --store "$A" stats | sed -n 's/^pending: //p'; }

t_rc "A: init --remote" 0 $AL --store "$A" init --remote "$URL"
t_rc "B: init --remote (the same)" 0 $AL --store "$B" init --remote "$URL"
m_mount "$B" "$MB" -o remote_ttl=0,remote_stall=1,remote_retries=0,prefetch=0 || { t_not_ok "mount B"; t_done; }
for k in k1 k2 k3; do
    printf 'result %s\n' "$k" >"$T_TMP/$k"
    t_rc "A: put $k (uploaded)" 0 $AL --store "$A" put "$k" <"$T_TMP/$k"
    t_check "  B reads it" cmp -s "$MB/$k" "$T_TMP/$k"
done

rgw_stop "$RGW"
t_rc "radosgw stopped: A: rm k1 exits 5" 5 timeout 120 $AL --store "$A" rm k1
grep -q "'k1' is done here, not on the remote" "$T_TMP/err" && t_ok "  and says so" ||
    { t_not_ok "  and says so"; cat "$T_TMP/err"; }
t_rc "radosgw stopped: A: rm k2 exits 5" 5 timeout 120 $AL --store "$A" rm k2
t_rc "radosgw stopped: A: rm k3 exits 5" 5 timeout 120 $AL --store "$A" rm k3
t_eq "  stats: 3 pending (the tombstones)" "$(pending)" 3
kill -CONT "$RGW"
t_check "radosgw back: B still serves k1 (no tombstone yet)" cmp -s "$MB/k1" "$T_TMP/k1"
printf 'k3 again\n' >"$T_TMP/k3b"
t_rc "A: put k3 again before any sync (exit 0)" 0 $AL --store "$A" put k3 <"$T_TMP/k3b"
t_eq "  its pending tombstone went with the put, and the put sent k1's and k2's" "$(pending)" 0
t_eq "B: k1 is ENODATA" "$(m_errno open_r "$MB/k1")" ENODATA
t_eq "B: k2 is ENODATA" "$(m_errno open_r "$MB/k2")" ENODATA
t_check "B: k3 reads the new bytes" cmp -s "$MB/k3" "$T_TMP/k3b"

# sync alone sends pending tombstones (rm and drop-referenced).
for k in k4 k5; do
    printf 'result %s\n' "$k" >"$T_TMP/$k"
    t_rc "A: put $k (uploaded)" 0 $AL --store "$A" put "$k" <"$T_TMP/$k"
done
rgw_stop "$RGW"
t_rc "radosgw stopped: A: rm k4 exits 5" 5 timeout 120 $AL --store "$A" rm k4
echo "see /large_tool_results/k5 here" >"$T_TMP/ref"
t_rc "radosgw stopped: A: drop-referenced k5 exits 5" 5 timeout 120 $AL --store "$A" drop-referenced <"$T_TMP/ref"
t_rc "radosgw stopped: sync exits 5" 5 timeout 120 $AL --store "$A" sync
t_eq "  and says 2 pending" "$(cat "$T_TMP/out")" "0 uploaded, 2 pending"
kill -CONT "$RGW"
t_check "radosgw back: B still serves k4" cmp -s "$MB/k4" "$T_TMP/k4"
t_check "  and k5" cmp -s "$MB/k5" "$T_TMP/k5"
t_rc "A: sync exits 0" 0 timeout 120 $AL --store "$A" sync
t_eq "  sends both tombstones" "$(cat "$T_TMP/out")" "2 uploaded, 0 pending"
t_eq "  stats: 0 pending" "$(pending)" 0
t_eq "B: k4 is ENODATA" "$(m_errno open_r "$MB/k4")" ENODATA
t_eq "B: k5 is ENODATA" "$(m_errno open_r "$MB/k5")" ENODATA
t_check "B: k3 still reads the new bytes" cmp -s "$MB/k3" "$T_TMP/k3b"

m_umount "$MB"; t_eq "offloadfs on B exits 0 after unmount" "$?" 0
t_done
