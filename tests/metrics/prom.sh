# tests/metrics/prom.sh -- a real Prometheus, and the daemon's metrics
# URL, for the shell tests of the metrics (tests/fs/test_metrics*.sh,
# tests/remote/test_metrics.sh). Source after tests/lib.sh. Not a test
# itself: tests/run.sh runs test_*.sh only.

# metrics_valgrind : under make test-valgrind (OFFLOADFS_VALGRIND) the
# daemon itself runs under memcheck (M_FS: source after fs/mountlib.sh),
# with no prefetch (fs.h: its stat through the mount can starve) and
# generous deadlines. Sets WAIT (seconds, for any wait on the daemon) and
# OPTS (offloadfs options to add).
metrics_valgrind() {
    WAIT=20 OPTS=()
    [ -n "${OFFLOADFS_VALGRIND:-}" ] || return 0
    WAIT=120 OPTS=(-o prefetch=0)
    printf '#!/bin/sh\nexec %s %s "$@"\n' "$OFFLOADFS_WRAP" "$T_BUILD/offloadfs" >"$T_TMP/vg-offloadfs"
    chmod +x "$T_TMP/vg-offloadfs"
    M_FS=$T_TMP/vg-offloadfs
    M_MOUNT_WAIT=$WAIT
}

# metrics_url MNT : the URL the daemon mounted on MNT (m_mount) logged.
metrics_url() { sed -n 's|^offloadfs: metrics at \(http://.*\)$|\1|p' "$1.log"; }
has_url() { [ -n "$(metrics_url "$1")" ]; }

# free_port : a TCP port on 127.0.0.1 that nothing listens on now.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# prom_start URL : starts Prometheus on a free port (PROM_PORT), scraping
# URL (http://HOST:PORT/metrics) every second, stopped at exit.
prom_start() {
    PROM_PORT=$(free_port)
    cat >"$T_TMP/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: offloadfs
    static_configs:
      - targets: ['$(sed 's|^http://\(.*\)/metrics$|\1|' <<<"$1")']
EOC
    prometheus --config.file="$T_TMP/prometheus.yml" --storage.tsdb.path="$T_TMP/tsdb" \
        --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$T_TMP/prometheus.log" 2>&1 &
    prom_pid=$!
    t_on_exit "kill $prom_pid 2>/dev/null; wait $prom_pid 2>/dev/null"
}

# query EXPR : the values of the series EXPR gives, one a line.
query() {
    curl -sf --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
        python3 -c 'import json, sys
for r in json.load(sys.stdin)["data"]["result"]: print(r["value"][1])' 2>/dev/null
}
query_is() { [ "$(query "$1")" = "$2" ]; }
