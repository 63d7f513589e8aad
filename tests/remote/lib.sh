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

# ---- a misbehaving S3 server (tests/remote/hostile_s3.py) --------------
# The server's buckets are its modes ("repeat", "fresh-300", ...: see its
# header); one server serves them all, files in $HS: bucket B's objects
# under $HS/B/obj/, its requests logged in $HS/B/requests.
#
# hs_start : starts hostile_s3.py on loopback, waits for its port (10 s)
# and points the AWS variables the tier reads at it (fake credentials: it
# checks no signature). It is killed at exit; HS_PID is its pid.
hs_start() {
    HS=$T_TMP/hs
    mkdir -p "$HS"
    python3 "$T_TOP/tests/remote/hostile_s3.py" "$HS" 2>"$T_TMP/hs.stderr" &
    HS_PID=$!
    t_on_exit "kill $HS_PID 2>/dev/null"
    t_wait_until 10 test -s "$HS/port" || { t_not_ok "hostile_s3.py starts"; cat "$T_TMP/hs.stderr"; t_done; }
    unset AWS_PROFILE AWS_DEFAULT_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL_S3 AWS_CONFIG_FILE \
        AWS_SHARED_CREDENTIALS_FILE
    export AWS_ENDPOINT_URL=http://127.0.0.1:$(cat "$HS/port") AWS_ACCESS_KEY_ID=hostile \
        AWS_SECRET_ACCESS_KEY=hostile AWS_REGION=us-east-1
}

# hs_store NAME BUCKET : a fresh store $T_TMP/NAME whose remote is
# s3://BUCKET/pfx on the hostile server; prints its path.
hs_store() {
    local s=$T_TMP/$1
    mkdir -p "$HS/$2/obj" "$HS/$2/obj2"
    : >>"$HS/$2/requests"
    "$T_BUILD/tools/tierctl" "$s" remote "s3://$2/pfx" || return 1
    echo "$s"
}

# hs_object BUCKET KEY [FILE] : the object pfx/default/KEY of BUCKET holds
# stdin (or FILE).
hs_object() {
    mkdir -p "$HS/$1/obj/pfx/default"
    cat ${3:+"$3"} >"$HS/$1/obj/pfx/default/$2"
}

# hs_lists BUCKET : how many listings (of more than one key) BUCKET got.
hs_lists() { awk '/^GET \/[^?]*\?.*max-keys=1000/ {n++} END {print n + 0}' "$HS/$1/requests"; }

# hs_daemon : under OFFLOADFS_VALGRIND, mounts (m_mount) run the daemon
# under valgrind too, with a longer mount deadline.
hs_daemon() {
    [ -n "${OFFLOADFS_VALGRIND:-}" ] || return 0
    printf '#!/bin/sh\nexec %s %s "$@"\n' "$OFFLOADFS_WRAP" "$T_BUILD/offloadfs" >"$T_TMP/vg-offloadfs"
    chmod +x "$T_TMP/vg-offloadfs"
    M_FS=$T_TMP/vg-offloadfs
    M_MOUNT_WAIT=120
}
