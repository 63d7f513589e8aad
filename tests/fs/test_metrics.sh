#!/bin/bash
# offloadfs -o metrics=HOST:PORT with the real tools: the exposition passes
# promtool check metrics, and so does agentlink stats --prometheus, which is
# its store part byte for byte; a real Prometheus server started here scrapes the
# daemon every second and its HTTP API answers offloadfs_evicted_reads_total
# equal to the evicted reads this test made; the store's counters (puts,
# evictions) never go backwards across a daemon restart; a missing HOST, a
# HOST in another form than a.b.c.d, [IPv6] or localhost, or a taken port
# leaves nothing mounted; the log names the address bound, plainly.
# Under make test-valgrind (OFFLOADFS_VALGRIND) the daemon itself runs
# under memcheck, with generous deadlines.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../metrics/prom.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse
for tool in promtool prometheus curl; do
    command -v $tool >/dev/null || { t_not_ok "$tool is installed (scripts/deps.sh)"; t_done; }
done

metrics_valgrind
# scrape URL : the exposition on stdout; fails on any HTTP error.
scrape() { curl -sf --max-time 10 "$1"; }
# sample TEXT NAME : the value of the sample NAME (exactly, labels included,
# or any labels when NAME has none) in TEXT.
sample() { N=$2 awk '$1 == ENVIRON["N"] || index($1, ENVIRON["N"] "{") == 1 {print $2}' <<<"$1"; }

# Random bytes (compression leaves them as they are): three of 30,000 fit
# under the bound of 100,000.
S=$(m_store s 100000) || { t_not_ok "make a store"; t_done; }
M=$T_TMP/mnt
put() { head -c "${2:-30000}" /dev/urandom | m_put "$S" "$1"; }

# ---- refused before mounting ---------------------------------------------------------
mkdir -p "$M"
m_refused "-o metrics=PORT without HOST is refused (exit 2)" "$M" -o metrics=9464 "$S" "$M"
t_check "... saying to name the address" grep -q "name the address as HOST:PORT" "$T_TMP/err"
m_refused "-o metrics=:PORT is refused (exit 2)" "$M" -o metrics=:9464 "$S" "$M"
m_refused "-o metrics=HOST:99999 is refused (exit 2)" "$M" -o metrics=127.0.0.1:99999 "$S" "$M"
# HOST is a dotted quad, an IPv6 address in brackets, or localhost; the
# other forms inet_aton() and getaddrinfo() take (0 for every interface,
# 127.1, 2130706433, 0x7f000001, 0177.0.0.1 for 127.0.0.1) are refused.
for h in 0 127.1 2130706433 0x7f000001 0177.0.0.1 ::1 '[127.0.0.1]'; do
    m_refused "-o metrics=$h:9464 is refused (exit 2), nothing mounted" "$M" -o "metrics=$h:9464" "$S" "$M"
    t_check "... naming the option, its value and the forms taken" \
        grep -qF "offloadfs: metrics '$h:9464': HOST '" "$T_TMP/err"
    case $h in
    0) t_check "... saying 0.0.0.0:PORT is every interface" grep -q "0.0.0.0:PORT for every interface" "$T_TMP/err" ;;
    ::1) t_check "... saying an IPv6 address goes in brackets" grep -qF "[::1]:PORT" "$T_TMP/err" ;;
    esac
done
# The holder picks its port itself: a port free_port() names may still be
# in TIME_WAIT, which only the daemon's SO_REUSEADDR would take.
python3 -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(60)' \
    >"$T_TMP/busy" &
busy_pid=$!
t_on_exit "kill $busy_pid 2>/dev/null"
t_wait_until 10 grep -q . "$T_TMP/busy"
busy_port=$(cat "$T_TMP/busy")
t_rc "a taken port: exit 1" 1 timeout "$WAIT" "$M_FS" -f -o metrics=127.0.0.1:$busy_port "$S" "$M"
t_check "... saying why" grep -q "Address already in use; nothing was mounted" "$T_TMP/err"
t_eq "... and nothing mounted" "$(m_mounts_at "$M")" 0
kill $busy_pid 2>/dev/null

# ---- the exposition --------------------------------------------------------------------
for i in 1 2 3 4 5 6; do put "k$i"; done          # k1, k2, k3 evicted
m_mount "$S" "$M" "${OPTS[@]}" -o metrics=127.0.0.1:0 || { t_not_ok "mount"; t_done; }
t_wait_until "$WAIT" has_url "$M"
URL=$(metrics_url "$M")
if [ -n "${OFFLOADFS_VALGRIND:-}" ]; then
    case $(readlink "/proc/$(m_pid "$M")/exe") in *memcheck*) t_ok "the daemon runs under memcheck" ;;
    *) t_not_ok "the daemon runs under memcheck" ;; esac
fi
t_check "the daemon logs where it serves metrics" [ -n "$URL" ]
case $URL in http://127.0.0.1:[0-9]*/metrics) t_ok "... on the loopback address named" ;;
*) t_not_ok "... on the loopback address named: '$URL'" ;; esac

# Evicted reads, each one lookup answered ENODATA: cat, stat, head, python open.
EVICTED=0
for op in "cat $M/k1" "stat $M/k2" "head -c1 $M/k1" "python3 -c open('$M/k2')"; do
    $op >/dev/null 2>"$T_TMP/err" && t_not_ok "$op fails"
    grep -q "No data available" "$T_TMP/err" && EVICTED=$((EVICTED + 1))
done
t_eq "four reads of evicted results failed with ENODATA" "$EVICTED" 4
cat "$M/never-written" 2>/dev/null
cat "$M/k5" "$M/k6" >/dev/null

scrape "$URL" >"$T_TMP/m1"; t_eq "GET /metrics answers" "$?" 0
OUT=$(cat "$T_TMP/m1")
t_check "promtool check metrics passes on the daemon's exposition" \
    bash -c "promtool check metrics <'$T_TMP/m1' >'$T_TMP/promtool' 2>&1"
sed 's/^/  promtool: /' "$T_TMP/promtool"
t_eq "offloadfs_evicted_reads_total" "$(sample "$OUT" 'offloadfs_evicted_reads_total{namespace="default"}')" 4
t_eq "offloadfs_missing_lookups_total" "$(sample "$OUT" 'offloadfs_missing_lookups_total{namespace="default"}')" 1
t_eq "offloadfs_reads_total: one read request per result read" \
    "$(sample "$OUT" 'offloadfs_reads_total{namespace="default"}')" 2
t_eq "offloadfs_read_bytes_total" "$(sample "$OUT" offloadfs_read_bytes_total)" 60000
t_eq "offloadfs_store_entries" "$(sample "$OUT" offloadfs_store_entries)" 3
t_eq "offloadfs_store_bytes" "$(sample "$OUT" offloadfs_store_bytes)" 90000
t_eq "offloadfs_store_stored_bytes (random bytes stay raw)" \
    "$(sample "$OUT" offloadfs_store_stored_bytes)" 90000
t_eq "offloadfs_store_max_total_bytes" "$(sample "$OUT" offloadfs_store_max_total_bytes)" 100000
t_eq "offloadfs_puts_total" "$(sample "$OUT" offloadfs_puts_total)" 6
t_eq "offloadfs_evictions_total" "$(sample "$OUT" offloadfs_evictions_total)" 3
t_check "offloadfs_build_info{version=...} 1" grep -qE '^offloadfs_build_info\{version="[0-9]+\.[0-9]+\.[0-9]+"\} 1$' "$T_TMP/m1"
t_check "the store's samples name the store" grep -q "^offloadfs_puts_total{store=\"$(realpath "$S")\"} 6$" "$T_TMP/m1"
t_eq "every family has HELP and TYPE" \
    "$(grep -c '^# HELP ' "$T_TMP/m1") $(grep -c '^# TYPE ' "$T_TMP/m1")" "12 12"
# agentlink stats --prometheus prints the same store part, byte for byte.
STORE_FAMILIES='offloadfs_(store_entries|store_bytes|store_stored_bytes|store_max_total_bytes|puts_total|evictions_total|removals_total)'
$AGENTLINK --store "$S" stats --prometheus >"$T_TMP/cli.prom"
t_eq "agentlink stats --prometheus: exit 0" "$?" 0
t_check "promtool check metrics passes on agentlink stats --prometheus" \
    bash -c "promtool check metrics <'$T_TMP/cli.prom' >/dev/null 2>&1"
t_eq "... and it is the daemon's store part exactly" \
    "$(grep -E "^(# (HELP|TYPE) )?$STORE_FAMILIES[ {]" "$T_TMP/m1")" "$(cat "$T_TMP/cli.prom")"
t_eq "Content-Type is the text format 0.0.4" \
    "$(curl -s -o /dev/null -w '%{content_type}' "$URL")" "text/plain; version=0.0.4; charset=utf-8"
t_eq "POST /metrics: 405" "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL")" 405
t_eq "GET /other: 404" "$(curl -s -o /dev/null -w '%{http_code}' "${URL%/metrics}/other")" 404

# ---- a real Prometheus scrapes it ------------------------------------------------------
prom_start "$URL"
# One more evicted read while Prometheus watches: it must see 5.
cat "$M/k1" 2>/dev/null
t_check "Prometheus' API answers offloadfs_evicted_reads_total = 5, the evicted reads made" \
    t_wait_until "$WAIT" query_is 'offloadfs_evicted_reads_total{job="offloadfs",namespace="default"}' 5
t_check "... and up = 1 for the target" query_is 'up{job="offloadfs"}' 1
t_eq "... and offloadfs_puts_total = 6" "$(query offloadfs_puts_total)" 6
kill $prom_pid; wait $prom_pid 2>/dev/null

# ---- the store's counters across a restart ----------------------------------------------
m_umount "$M"; t_eq "daemon exits 0 after unmount" "$?" 0
put k7; put k8; put k9                              # three puts, three evictions, daemon down
m_mount "$S" "$M" "${OPTS[@]}" -o metrics=127.0.0.1:0 || { t_not_ok "remount"; t_done; }
t_wait_until "$WAIT" has_url "$M"
scrape "$(metrics_url "$M")" >"$T_TMP/m2"; t_eq "GET /metrics answers after a restart" "$?" 0
OUT2=$(cat "$T_TMP/m2")
t_eq "offloadfs_puts_total went on from 6: puts made while no daemon ran count" \
    "$(sample "$OUT2" offloadfs_puts_total)" 9
t_eq "offloadfs_evictions_total went on from 3" "$(sample "$OUT2" offloadfs_evictions_total)" 6
t_eq "the daemon's own counters start again at 0" \
    "$(sample "$OUT2" offloadfs_evicted_reads_total)" 0
t_check "promtool check metrics passes after the restart" \
    bash -c "promtool check metrics <'$T_TMP/m2' >/dev/null 2>&1"
m_umount "$M"; t_eq "daemon exits 0 after unmount" "$?" 0

# ---- the address bound, as logged -------------------------------------------------------
# listeners PID : the local addresses of the TCP sockets PID listens on (ss).
listeners() { ss -Hltnp | awk -v p="pid=$1," 'index($0, p) {print $4}'; }
for want in localhost=127.0.0.1 '[::1]=[::1]' 0.0.0.0=0.0.0.0; do
    host=${want%%=*} addr=${want#*=}
    m_mount "$S" "$M" "${OPTS[@]}" -o "metrics=$host:0" || { t_not_ok "mount with metrics=$host:0"; continue; }
    t_wait_until "$WAIT" has_url "$M"
    URL=$(metrics_url "$M") port=${URL##*:} port=${port%/metrics}
    t_eq "metrics=$host:0: the log names the address bound, plainly" "$URL" "http://$addr:$port/metrics"
    t_eq "... and the daemon listens there only" "$(listeners "$(m_pid "$M")")" "$addr:$port"
    scrape "http://${addr/0.0.0.0/127.0.0.1}:$port/metrics" >/dev/null
    t_eq "... and answers there" "$?" 0
    if [ "$addr" = 0.0.0.0 ]; then
        t_check "... and warns that every network reaching the host reads the store's path" \
            grep -q "^offloadfs: warning: metrics at http://0.0.0.0:$port/metrics, not a loopback address: .*store's path" "$M.log"
    else
        t_check "... with no warning (a loopback address)" bash -c "! grep -q 'warning: metrics' '$M.log'"
    fi
    m_umount "$M"; t_eq "daemon exits 0 after unmount" "$?" 0
done

# ---- the alerts doc/operating.md gives are valid PromQL ---------------------------------
python3 - "$T_TOP/doc/operating.md" >"$T_TMP/rules.yml" <<'PY'
import re, sys
exprs = re.findall(r"```promql\n(.*?)```", open(sys.argv[1]).read(), re.S)
print("groups:\n  - name: offloadfs\n    rules:")
for i, e in enumerate(exprs):
    print(f"      - alert: OffloadfsDoc{i}\n        expr: |")
    print("".join("          " + l + "\n" for l in e.strip().split("\n")))
PY
t_eq "doc/operating.md has the three alerts" "$(grep -c 'alert: ' "$T_TMP/rules.yml")" 3
t_check "promtool check rules passes on them" bash -c "promtool check rules '$T_TMP/rules.yml' >/dev/null"

# ---- off by default ----------------------------------------------------------------------
m_mount "$S" "$M" "${OPTS[@]}" || { t_not_ok "mount without metrics"; t_done; }
t_check "without -o metrics nothing listens" bash -c "! grep -q 'metrics at' '$M.log'"
# listening PID : how many TCP sockets PID holds in LISTEN state.
listening() {
    python3 - "$1" <<'PY'
import os, sys
pid = sys.argv[1]
inodes = set()
for fd in os.listdir(f"/proc/{pid}/fd"):
    try:
        t = os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        continue
    if t.startswith("socket:["):
        inodes.add(t[8:-1])
n = 0
for tab in ("tcp", "tcp6"):
    for line in open(f"/proc/{pid}/net/{tab}").readlines()[1:]:
        f = line.split()
        n += f[3] == "0A" and f[9] in inodes
print(n)
PY
}
t_eq "... and the daemon holds no listening TCP socket" "$(listening "$(m_pid "$M")")" 0
m_umount "$M"; t_eq "daemon exits 0 after unmount" "$?" 0
t_done
