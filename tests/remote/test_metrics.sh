#!/bin/bash
# The remote tier's metrics (doc/operating.md), against the real radosgw
# tests/run.sh started and checked with promtool: store A writes through its
# remote, B's daemon serves what only the remote holds and counts its
# fetches: one per ranged GET of a result's bytes, a read's (a window) or a
# lookup's (the first OFS_RWIN_FIRST = 128 KiB, kept as the inode's first
# window). Windows (fs.h): OFS_RWIN_COUNT = 4, the first read one
# OFS_RWIN_MIN = 256 KiB, doubling while reads go on where one ended, and
# a reader of a sequential window has the next one fetched ahead.
#   five first reads of small (<= 5000 B) remote-only results: 5 fetches
#   (each lookup's GET holds the whole result: the read is served from it);
#   r6 and r7 looked up: 2 more (7); a 1 MiB one read sequentially
#   (O_DIRECT, one request at a time): 2 more (9) -- its lookup's 128 KiB,
#   then the whole result in one GET (fs/fill.h); the windows freed (idle);
#   a version replaced on A: one fetch (10), ENODATA, not an error; radosgw
#   stopped (SIGSTOP): a read, EIO, one fetch error timed above 1 s (11, 1);
#   a lookup of a new name: a fetch error too (12, 2), no lookup error; a
#   listing: 1 lookup error; a write on B meanwhile: pending 1, in
#   the daemon's and agentlink stats --prometheus' output alike; after
#   agentlink sync: 0. The histogram's count is the fetches. A real
#   Prometheus scrapes the daemon meanwhile: its API gives the same counts,
#   and doc/operating.md's remote alert, evaluated as written, fires.
#   The mount's reads and evicted reads count remote reads too.
# Under make test-valgrind the daemon runs under memcheck.
# run.sh: alone (stops the radosgw the other remote suites share)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../metrics/prom.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../fs/mountlib.sh"
m_require_fuse
r_require_s3
for tool in promtool prometheus curl; do
    command -v $tool >/dev/null || { t_not_ok "$tool is installed (scripts/deps.sh)"; t_done; }
done
metrics_valgrind
URL=s3://$OFFLOADFS_S3_BUCKET/metrics-$$-$(date +%s%N)

# sample TEXT NAME : the value of sample NAME (exactly, labels included) in TEXT.
sample() { N=$2 awk '$1 == ENVIRON["N"] {print $2}' <<<"$1"; }
metrics_url() { sed -n 's|^offloadfs: metrics at \(http://.*\)$|\1|p' "$1.log"; }
has_url() { [ -n "$(metrics_url "$1")" ]; }
# scrape NAME : GET /metrics into $T_TMP/NAME and OUT; promtool must pass it.
scrape() {
    curl -sf --max-time 10 "$URL_M" >"$T_TMP/$1" || { t_not_ok "GET /metrics ($1)"; return 1; }
    OUT=$(cat "$T_TMP/$1")
    if promtool check metrics <"$T_TMP/$1" >"$T_TMP/promtool" 2>&1; then
        t_ok "promtool check metrics passes ($1)"
    else
        t_not_ok "promtool check metrics passes ($1)"; sed 's/^/  promtool: /' "$T_TMP/promtool"
    fi
}
NSL='{namespace="default"}'
fetches() { sample "$OUT" "offloadfs_remote_fetches_total$NSL"; }
errors() { sample "$OUT" "offloadfs_remote_fetch_errors_total$NSL"; }
lerrors() { sample "$OUT" "offloadfs_remote_lookup_errors_total$NSL"; }
hcount() { sample "$OUT" "offloadfs_remote_fetch_seconds_count$NSL"; }
bucket() { sample "$OUT" "offloadfs_remote_fetch_seconds_bucket{namespace=\"default\",le=\"$1\"}"; }

A=$T_TMP/a B=$T_TMP/b
t_rc "A: init --remote" 0 $AGENTLINK --store "$A" init --remote "$URL"
t_rc "B: init --remote (the same remote)" 0 $AGENTLINK --store "$B" init --remote "$URL"
BREAL=$(realpath "$B")
for i in 1 2 3 4 5 6 7; do
    head -c $((1000 * i)) /dev/urandom >"$T_TMP/r$i"
    $AGENTLINK --store "$A" put "r$i" <"$T_TMP/r$i" >/dev/null || t_not_ok "put r$i on A"
done
head -c $((1024 * 1024)) /dev/urandom >"$T_TMP/big"
$AGENTLINK --store "$A" put big <"$T_TMP/big" >/dev/null || t_not_ok "put big on A"

M=$T_TMP/mnt
# remote_ttl=600: names looked up once stay known (the reads below then
# reach the remote only for bytes); one retry of a 2 s stall (1 s can be
# hit by a busy radosgw under valgrind).
m_mount "$B" "$M" "${OPTS[@]}" -o metrics=127.0.0.1:0,remote_ttl=600,remote_stall=2,remote_retries=1 ||
    { t_not_ok "mount B"; t_done; }
t_wait_until "$WAIT" has_url "$M"
URL_M=$(metrics_url "$M")
if [ -n "${OFFLOADFS_VALGRIND:-}" ]; then
    case $(readlink "/proc/$(m_pid "$M")/exe") in *memcheck*) t_ok "the daemon runs under memcheck" ;;
    *) t_not_ok "the daemon runs under memcheck" ;; esac
fi

# A real Prometheus scrapes B's daemon every second from here on.
prom_start "$URL_M"
query_any() { [ -n "$(query "$1")" ]; }

scrape m0
t_eq "fresh daemon: offloadfs_remote_fetches_total 0" "$(fetches)" 0
t_eq "  offloadfs_remote_fetch_errors_total 0" "$(errors)" 0
t_eq "  offloadfs_remote_lookup_errors_total 0" "$(lerrors)" 0
t_eq "  offloadfs_remote_pending_uploads 0, labelled with the store" \
    "$(sample "$OUT" "offloadfs_remote_pending_uploads{store=\"$BREAL\"}")" 0
t_eq "  the histogram's 13 buckets, 1 ms to 10 s, and +Inf" \
    "$(grep -o 'le="[^"]*"' "$T_TMP/m0" | tr '\n' ' ')" \
    'le="0.001" le="0.0025" le="0.005" le="0.01" le="0.025" le="0.05" le="0.1" le="0.25" le="0.5" le="1" le="2.5" le="5" le="10" le="+Inf" '
t_eq "  every family has HELP and TYPE (12 + 11 remote)" \
    "$(grep -c '^# HELP ' "$T_TMP/m0") $(grep -c '^# TYPE ' "$T_TMP/m0")" "23 23"
t_eq "  offloadfs_remote_window_bytes 0 (no read yet)" \
    "$(sample "$OUT" "offloadfs_remote_window_bytes$NSL")" 0
t_eq "  types: a gauge, four counters, a gauge, a histogram" \
    "$(grep '^# TYPE offloadfs_remote' "$T_TMP/m0" | cut -d' ' -f3,4 | tr '\n' ' ')" \
    "offloadfs_remote_pending_uploads gauge offloadfs_remote_fetches_total counter offloadfs_remote_fetch_errors_total counter offloadfs_remote_lookup_errors_total counter offloadfs_remote_fetch_bytes_total counter offloadfs_remote_window_bytes gauge offloadfs_remote_fetch_seconds histogram "
t_eq "  the cache's: two gauges of the store, two counters of the mount" \
    "$(grep -E '^# TYPE offloadfs_(store_cached|cache)' "$T_TMP/m0" | cut -d' ' -f3,4 | tr '\n' ' ')" \
    "offloadfs_store_cached_entries gauge offloadfs_store_cached_bytes gauge offloadfs_cache_hits_total counter offloadfs_cache_misses_total counter "

bad=0
for i in 1 2 3 4 5; do cmp -s "$M/r$i" "$T_TMP/r$i" || bad=1; done
t_eq "five remote-only results read, exact bytes" "$bad" 0
scrape m1
t_eq "five first reads: 5 fetches" "$(fetches)" 5
t_eq "  no errors" "$(errors)" 0
t_eq "  the histogram counts them (count, +Inf bucket)" "$(hcount) $(bucket +Inf)" "5 5"
t_check "  and their time (_sum > 0)" awk -v s="$(sample "$OUT" "offloadfs_remote_fetch_seconds_sum$NSL")" \
    'BEGIN { exit !(s > 0) }'
for i in 1 2 3 4 5; do cat "$M/r$i" >/dev/null; done
scrape m2
t_eq "read again (page cache): still 5 fetches" "$(fetches)" 5

# r6 and r7 looked up on B (r7 to be replaced on A below: B's inode is then
# the old version): each lookup is one GET of the whole (<= 128 KiB) result.
stat "$M/r6" "$M/r7" >/dev/null || t_not_ok "stat r6 r7 on B"
scrape m2b
t_eq "two lookups: 2 fetches more (7)" "$(fetches)" 7

# big, 1 MiB, read in 8 requests of 128 KiB: its lookup's GET brings
# [0, 128K) (fetch 8); the first read fetches the whole result, one 2 MiB
# chunk's GET (fetch 9: fs/fill.h), which answers every read of it.
t_eq "a 1 MiB result read sequentially, one request at a time: exact bytes" \
    "$(dd if="$M/big" bs=131072 iflag=direct 2>/dev/null | md5sum)" "$(md5sum <"$T_TMP/big")"
scrape m3
t_eq "  two fetches (9): the lookup's 128 KiB, then the whole result" "$(fetches)" 9
t_eq "  1 MiB and 128 KiB fetched for it (offloadfs_remote_fetch_bytes_total)" \
    "$(sample "$OUT" "offloadfs_remote_fetch_bytes_total$NSL")" \
    $((1000 + 2000 + 3000 + 4000 + 5000 + 6000 + 7000 + 131072 + 1048576))
# big's copy is kept once its last chunk came, after that read's answer.
kept6() { curl -sf --max-time 10 "$URL_M" | grep -qxF "offloadfs_store_cached_entries{store=\"$BREAL\"} 6"; }
t_check "  kept: 5 small copies and big (offloadfs_store_cached_entries)" t_wait_until 60 kept6
scrape m3b
t_eq "  one miss each (offloadfs_cache_misses_total)" "$(sample "$OUT" "offloadfs_cache_misses_total$NSL")" 6
# The lookup windows of r6 and r7 are freed once idle (window.h): the reads
# of r6 and r7 below then each GET.
windows_freed() { curl -sf --max-time 10 "$URL_M" | grep -qxF "offloadfs_remote_window_bytes$NSL 0"; }
t_check "the windows freed once idle" t_wait_until 60 windows_freed

printf 'r7 again\n' | $AGENTLINK --store "$A" put r7 >/dev/null || t_not_ok "replace r7 on A"
dd if="$M/r7" bs=4096 count=1 iflag=direct of=/dev/null 2>"$T_TMP/err"
t_check "the old version of r7, gone from the remote: ENODATA" grep -q "No data available" "$T_TMP/err"
scrape m4
t_eq "  one fetch more (10), not an error" "$(fetches) $(errors)" "10 0"

rgw_stop "$RGW" || t_not_ok "radosgw stopped"
dd if="$M/r6" bs=4096 count=1 iflag=direct of=/dev/null 2>"$T_TMP/err"
t_check "radosgw stopped: a read of r6 (one request) fails with EIO" grep -q "Input/output error" "$T_TMP/err"
scrape m5
t_eq "  11 fetches, 1 error" "$(fetches) $(errors)" "11 1"
t_eq "  the histogram counts it" "$(hcount)" 11
t_eq "  above 1 s (two 2 s stalls): the le=\"1\" bucket holds the 10 others" "$(bucket 1)" 10
t_eq "  no lookup error (r6 was looked up before)" "$(lerrors)" 0
t_eq "radosgw stopped: a name not looked up before is EIO" "$(m_errno stat "$M/unknown")" EIO
ls -f "$M" >/dev/null
# The listing runs on the daemon's own thread and ls waits for it at most
# 2 s: its error is counted when the listing gives up, maybe after ls.
listing_failed() {
    curl -sf --max-time 10 "$URL_M" | grep -qxF "offloadfs_remote_lookup_errors_total$NSL 1"
}
t_wait_until 60 listing_failed
scrape m5b
# The lookup's GET failed: a fetch and a fetch error (timed above 1 s too),
# not a lookup error; the listing sends no GET: a lookup error.
t_eq "  the lookup: a fetch error (12 fetches, 2 errors); the listing (ls): 1 lookup error" \
    "$(lerrors) $(fetches) $(errors)" "1 12 2"
t_eq "  the le=\"1\" bucket still holds 10" "$(bucket 1)" 10
t_rc "radosgw stopped: a put on B is pending (exit 5)" 5 timeout 60 \
    env OFFLOADFS_REMOTE_STALL_SECONDS=2 OFFLOADFS_REMOTE_RETRIES=0 $AGENTLINK --store "$B" put p1 <"$T_TMP/r1"
scrape m6
t_eq "  offloadfs_remote_pending_uploads 1" \
    "$(sample "$OUT" "offloadfs_remote_pending_uploads{store=\"$BREAL\"}")" 1
t_rc "agentlink stats --prometheus: exit 0" 0 $AGENTLINK --store "$B" stats --prometheus
cp "$T_TMP/out" "$T_TMP/cli.prom"
t_check "  promtool check metrics passes on it" bash -c "promtool check metrics <'$T_TMP/cli.prom' >/dev/null 2>&1"
t_eq "  it says pending 1 too" "$(sample "$(cat "$T_TMP/cli.prom")" "offloadfs_remote_pending_uploads{store=\"$BREAL\"}")" 1
FAMILIES='offloadfs_(store_entries|store_bytes|store_stored_bytes|store_max_total_bytes|puts_total|evictions_total|removals_total|remote_pending_uploads|store_cached_entries|store_cached_bytes)'
t_eq "  and is the daemon's store part with the pending and cached gauges, exactly" \
    "$(grep -E "^(# (HELP|TYPE) )?$FAMILIES[ {]" "$T_TMP/m6")" "$(cat "$T_TMP/cli.prom")"
t_check "  (no fetch families: those are the daemon's)" bash -c "! grep -q fetch '$T_TMP/cli.prom'"
# doc/operating.md's third alert, as written, evaluated by Prometheus.
ALERT=$(python3 - "$T_TOP/doc/operating.md" <<'PY2'
import re, sys
print(re.findall(r"```promql\n(.*?)```", open(sys.argv[1]).read(), re.S)[2].strip())
PY2
)
t_check "Prometheus' API: offloadfs_remote_pending_uploads = 1" \
    t_wait_until "$WAIT" query_is offloadfs_remote_pending_uploads 1
t_eq "  offloadfs_remote_fetches_total = 12, fetch errors = 2, lookup errors = 1" \
    "$(query offloadfs_remote_fetches_total) $(query offloadfs_remote_fetch_errors_total) $(query offloadfs_remote_lookup_errors_total)" \
    "12 2 1"
t_eq "  offloadfs_remote_fetch_seconds_count = 12" "$(query offloadfs_remote_fetch_seconds_count)" 12
t_check "Prometheus: doc/operating.md's remote alert fires" t_wait_until "$WAIT" query_any "$ALERT"
kill -CONT "$RGW"

t_rc "radosgw back: agentlink sync uploads it (exit 0)" 0 timeout 60 $AGENTLINK --store "$B" sync
scrape m7
t_eq "  offloadfs_remote_pending_uploads 0" \
    "$(sample "$OUT" "offloadfs_remote_pending_uploads{store=\"$BREAL\"}")" 0
t_eq "  and in stats --prometheus" \
    "$($AGENTLINK --store "$B" stats --prometheus | sample "$(cat)" "offloadfs_remote_pending_uploads{store=\"$BREAL\"}")" 0
t_check "radosgw back: r6 reads" cmp -s "$M/r6" "$T_TMP/r6"
scrape m8
t_eq "  a window for it: 13 fetches, still 2 errors" "$(fetches) $(errors)" "13 2"
# The mount's own counters count remote reads as local ones: 5 small
# results, 8 O_DIRECT pieces of 128 KiB, r6; r7's ENODATA an evicted read.
# The small results' copies, kept after their first reads, invalidated
# their names: the kernel may then drop their inodes and pages, and their
# second reads (above) reach the daemon (served by the copies) instead of
# the page cache: up to 5 reads more, of up to 15,000 bytes.
READS=$(sample "$OUT" "offloadfs_reads_total$NSL") BYTES=$(sample "$OUT" "offloadfs_read_bytes_total$NSL")
BASE=$((1000 + 2000 + 3000 + 4000 + 5000 + 1048576 + 6000))
t_check "offloadfs_reads_total counts the remote reads answered with data (14 to 19: $READS)" \
    test "${READS:-0}" -ge 14 -a "${READS:-0}" -le 19
t_check "  offloadfs_read_bytes_total their bytes ($BASE, up to 15,000 more: $BYTES)" \
    test "${BYTES:-0}" -ge $BASE -a "${BYTES:-0}" -le $((BASE + 15000)) -a \( "${READS:-0}" -gt 14 -o "${BYTES:-0}" -eq $BASE \)
t_eq "  offloadfs_evicted_reads_total the version gone" \
    "$(sample "$OUT" "offloadfs_evicted_reads_total$NSL")" 1

# Every metric name doc/operating.md's alerts and queries use is served.
names=$(grep -oE 'offloadfs_[a-z_]+' "$T_TOP/doc/operating.md" | sort -u)
missing=
for n in $names; do grep -qE "^($n[ {]|# TYPE $n )" "$T_TMP/m8" || missing+="$n "; done
t_eq "every offloadfs_* name in doc/operating.md is served" "$missing" ""
t_check "  (the remote alert's among them)" \
    bash -c "grep -q offloadfs_remote_pending_uploads <<<'$names' && grep -q offloadfs_remote_fetch_errors_total <<<'$names'"

rc=0; m_umount "$M" || rc=$?
t_eq "B's daemon exits 0 after unmount" "$rc" 0
t_done
