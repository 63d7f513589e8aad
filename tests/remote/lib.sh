# tests/remote/lib.sh -- helpers for the shell tests of the remote tier,
# run against the real radosgw tests/run.sh starts (scripts/s3-server.sh).
# Source after tests/lib.sh. Not a test itself: tests/run.sh runs
# test_*.sh only.

# r_require_s3 : fails the test (t_done) unless an S3 server is there; then
# sets RGW to radosgw's pid and, at exit, lets a stopped radosgw go on.
r_require_s3() {
    if [ -z "${AWS_ENDPOINT_URL:-}" ] || [ -z "${OFFLOADFS_S3_BUCKET:-}" ] ||
        [ -z "${OFFLOADFS_S3_DIR:-}" ]; then
        t_not_ok "an S3 server (run through tests/run.sh, which starts scripts/s3-server.sh)"; t_done
    fi
    RGW=$(rgw_pid)
    t_on_exit 'kill -CONT $(rgw_pid) 2>/dev/null'
}

# rgw_pid : radosgw's pid now (it changes when radosgw is started again).
rgw_pid() { cat "$OFFLOADFS_S3_DIR/run/client.rgw.offloadfs.pid"; }

# rgw_stop PID : stops radosgw and waits until every thread of it is
# stopped ("T"): kill returns before a busy process has taken the stop.
# Returns 1 (and says so) when it did not stop within 2 s.
rgw_stop() {
    local pid=$1 t all
    kill -STOP "$pid"
    for _ in $(seq 100); do
        all=1
        for t in /proc/"$pid"/task/*/stat; do
            [ "$(sed 's/^.*) \(.\).*/\1/' "$t" 2>/dev/null)" = T ] || all=
        done
        [ -n "$all" ] && return 0
        sleep 0.02
    done
    echo "  radosgw $pid did not stop"; return 1
}
