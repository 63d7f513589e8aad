#!/bin/bash
# Two stores on one remote are two hosts: A writes through the tier
# (build/tools/tierctl), B's daemon serves what the remote holds. Real
# radosgw (tests/run.sh starts it), real FUSE mounts.
#   write on A, read on B (bytes, size, xattrs); replace on A, read on B;
#   rm on A: ENODATA on B; never written: ENOENT; evicted on B: served
#   from the remote; radosgw stopped: EIO within the bound, local results
#   unaffected, a write pending (exit 5) then synced; back again: reads
#   work without a remount.
# run.sh: alone (stops the radosgw the other remote suites share)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../fs/mountlib.sh"
m_require_fuse
TIER=$T_BUILD/tools/tierctl
r_require_s3
URL=s3://$OFFLOADFS_S3_BUCKET/mount-$$-$(date +%s%N)

A=$(m_store a) && B=$(m_store b) || { t_not_ok "make two stores"; t_done; }
"$TIER" "$A" remote "$URL" && "$TIER" "$B" remote "$URL" || { t_not_ok "set the remote"; t_done; }
MB=$T_TMP/mnt-b
# one retry of a 1 s stall: a dead remote costs 2 x (1 s connect + 1 s) + 0.1 s
m_mount "$B" "$MB" -o remote_ttl=0,remote_stall=1,remote_retries=1,prefetch=0 ||
    { t_not_ok "mount B"; t_done; }

head -c 300001 /dev/urandom >"$T_TMP/one"
t_rc "put on A uploads (exit 0)" 0 "$TIER" "$A" put k1 default web_search <"$T_TMP/one"
t_check "B reads A's result, exact bytes" cmp -s "$MB/k1" "$T_TMP/one"
t_eq "B's st_size" "$(stat -c %s "$MB/k1")" 300001
t_eq "B's user.offload.tool" "$(getfattr --only-values -n user.offload.tool "$MB/k1" 2>/dev/null)" web_search
t_eq "B: a piece at an odd offset" "$(dd if="$MB/k1" bs=1 skip=123457 count=100 2>/dev/null | od -An -tx1)" \
    "$(dd if="$T_TMP/one" bs=1 skip=123457 count=100 2>/dev/null | od -An -tx1)"

# A large result read through the read-ahead windows (doubling to 8 MiB),
# sequentially and in parallel at odd offsets.
head -c $((20 * 1024 * 1024 + 4097)) /dev/urandom >"$T_TMP/big"
t_rc "put a 20 MiB result on A" 0 "$TIER" "$A" put big <"$T_TMP/big"
t_check "B reads it whole, exact bytes" cmp -s "$MB/big" "$T_TMP/big"
echo 3 >/proc/sys/vm/drop_caches
pids=()
for o in 1 7777777 15000001 20971000; do
    dd if="$MB/big" bs=4096 skip=$((o / 4096)) count=300 2>/dev/null | md5sum >"$T_TMP/par.$o" &
    pids+=($!)
done
wait "${pids[@]}" # not a bare wait: the daemon is a child too
bad=0
for o in 1 7777777 15000001 20971000; do
    [ "$(cat "$T_TMP/par.$o")" = "$(dd if="$T_TMP/big" bs=4096 skip=$((o / 4096)) count=300 2>/dev/null | md5sum)" ] || bad=1
done
t_eq "four parallel readers at odd offsets: exact bytes" "$bad" 0

printf 'second version\n' >"$T_TMP/two"
t_rc "replace on A" 0 "$TIER" "$A" put k1 <"$T_TMP/two"
t_check "B reads the new bytes (remote_ttl=0)" cmp -s "$MB/k1" "$T_TMP/two"

t_rc "rm on A" 0 "$TIER" "$A" rm k1
t_eq "B: a removed name is ENODATA" "$(m_errno open_r "$MB/k1")" ENODATA
t_eq "B: a never-written name is ENOENT" "$(m_errno open_r "$MB/never")" ENOENT

# ls lists local and remote names, once each, in byte order per tier.
printf 'x' | "$M_CTL" "$B" put b-local >/dev/null
for k in r-a r-b r-c; do printf '%s' "$k" | "$TIER" "$A" put "$k" || t_not_ok "put $k"; done
t_eq "ls on B: local names, then remote-only ones" "$(ls -f "$MB" | grep -v '^\.' | tr '\n' ' ')" \
    "b-local big r-a r-b r-c "
t_eq "ls -l on B: a remote name's size" "$(stat -c %s "$MB/r-b")" 3
"$M_CTL" "$B" rm b-local
# 120 remote names of 40 bytes fill several readdir replies: each resumes
# in the remote part where the last stopped.
for i in $(seq 100 219); do printf '%s' "$i" | "$TIER" "$A" put "many-$i-padding-padding-padding-pad"; done
want=$( (printf 'big\nr-a\nr-b\nr-c\n'; for i in $(seq 100 219); do echo "many-$i-padding-padding-padding-pad"; done) | LC_ALL=C sort)
t_eq "a long listing in several replies: every name once" "$(ls -f "$MB" | grep -v '^\.' | LC_ALL=C sort)" "$want"
t_eq "  and with attributes (ls -l)" "$(ls -l "$MB" | grep -c ' many-')" 120

# B's own result, uploaded, then evicted here: served from the remote.
head -c 50000 /dev/urandom >"$T_TMP/own"
t_rc "put on B uploads" 0 "$TIER" "$B" put mine <"$T_TMP/own"
"$M_CTL" "$B" init 4096 >/dev/null || t_not_ok "lower B's bound"
t_eq "B's own result was evicted locally" "$("$M_CTL" "$B" get mine >/dev/null 2>&1; echo $?)" 1
t_check "B reads its evicted result from the remote" cmp -s "$MB/mine" "$T_TMP/own"
"$M_CTL" "$B" init 1073741824 >/dev/null

# A local result of B, and a remote-only one, before the remote stops.
printf 'local on B\n' | "$M_CTL" "$B" put localkey >/dev/null
printf 'remote only\n' >"$T_TMP/r2"
t_rc "put r2 on A" 0 "$TIER" "$A" put r2 <"$T_TMP/r2"

rgw_stop "$RGW"
start=$(date +%s%N)
err=$(m_errno open_r "$MB/r2")
ms=$(( ($(date +%s%N) - start) / 1000000 ))
t_eq "remote stopped: a remote-only result is EIO" "$err" EIO
t_check "  bounded, not hung (took ${ms} ms; bound 4.1 s, checked < 41 s)" test "$ms" -lt 41000
grep -q "remote lookup of 'r2'" "$MB.log" && t_ok "  and a log line names it" ||
    { t_not_ok "  and a log line names it"; tail -3 "$MB.log"; }
start=$(date +%s%N)
t_eq "remote stopped: a local result reads" "$(cat "$MB/localkey")" "local on B"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
t_check "  without waiting for the remote (${ms} ms; < its 4.1 s bound)" test "$ms" -lt 4000
printf 'written while down\n' >"$T_TMP/down"
t_rc "remote stopped: a put is pending (exit 5)" 5 timeout 120 "$TIER" "$A" put down <"$T_TMP/down"
grep -q 'pending' "$T_TMP/err" && t_ok "  and says so" || t_not_ok "  and says so"
kill -CONT "$RGW"

ok=
for _ in 1 2 3 4 5; do cmp -s "$MB/r2" "$T_TMP/r2" && { ok=1; break; }; sleep 0.5; done
t_check "remote back: B reads again without a remount" test -n "$ok"
t_rc "sync uploads the pending result" 0 "$TIER" "$A" sync
t_check "B reads the synced result" cmp -s "$MB/down" "$T_TMP/down"

rc=0; m_umount "$MB" || rc=$?
t_eq "B's daemon exits 0 after unmount" "$rc" 0

# Mount-time messages: no credentials at all refuses the mount; refused
# credentials and a missing bucket warn and mount (local results served).
MC=$T_TMP/mnt-c; mkdir -p "$MC"
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY HOME="$T_TMP" AWS_CONFIG_FILE=/nonexistent \
    AWS_SHARED_CREDENTIALS_FILE=/nonexistent timeout 120 "$M_FS" -f "$B" "$MC" >"$T_TMP/out" 2>"$T_TMP/err"
rc=$?
t_eq "no credentials: the mount is refused (exit 1)" "$rc" 1
grep -q "its remote: no S3 credentials" "$T_TMP/err" && t_ok "  saying what is missing" ||
    { t_not_ok "  saying what is missing"; cat "$T_TMP/err"; }
t_eq "  and nothing is mounted" "$(m_mounts_at "$MC")" 0
AWS_SECRET_ACCESS_KEY=wrong-secret m_mount "$B" "$MC" || t_not_ok "wrong secret: still mounts"
grep -q "warning: remote CHECK s3://.*HTTP 403 SignatureDoesNotMatch" "$MC.log" &&
    t_ok "wrong secret: the mount warns, naming the refusal" ||
    { t_not_ok "wrong secret: the mount warns, naming the refusal"; cat "$MC.log"; }
t_eq "  and serves local results" "$(cat "$MC/localkey")" "local on B"
grep -q wrong-secret "$MC.log" && t_not_ok "  never printing the secret" || t_ok "  never printing the secret"
m_umount "$MC" >/dev/null
"$TIER" "$B" remote "s3://offloadfs-nosuch-$$/p"
m_mount "$B" "$MC" || t_not_ok "missing bucket: still mounts"
grep -q "HTTP 404 NoSuchBucket.*create the bucket" "$MC.log" && t_ok "missing bucket: the mount says so" ||
    { t_not_ok "missing bucket: the mount says so"; cat "$MC.log"; }
m_umount "$MC" >/dev/null
t_done
