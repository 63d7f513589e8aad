#!/bin/bash
# A real S3 server for tests and benchmarks: a one-node Ceph cluster
# (ceph-mon, one bluestore ceph-osd on a sparse file, radosgw) on 127.0.0.1,
# no systemd, no containers. Everything lives in one scratch directory.
#
#   scripts/s3-server.sh up   [DIR]   make the cluster (first time) or start
#                                     its stopped daemons (later), wait until
#                                     S3 answers, print the env lines
#   scripts/s3-server.sh env  [DIR]   print the env lines of a cluster
#   scripts/s3-server.sh down [DIR]   stop every daemon (DIR is kept)
#   scripts/s3-server.sh destroy [DIR] stop and remove DIR
#   scripts/s3-server.sh pid NAME [DIR] print a daemon's pid (rgw, osd, mon)
#   scripts/s3-server.sh bucket NAME [DIR] create a bucket (exists: ok)
#
# DIR defaults to $OFFLOADFS_S3_DIR. Ports: $OFFLOADFS_S3_PORT (radosgw),
# $OFFLOADFS_S3_MON_PORT and $OFFLOADFS_S3_MON_V1_PORT (ceph-mon, msgr v2
# and v1); unset, free ones are picked at the first `up` and kept in DIR
# for later starts. A busy port is refused with a message.
#
# The env lines (`export NAME=VALUE`, for eval) give the endpoint, the test
# user's fixed keys (a throw-away cluster on 127.0.0.1: not secrets), the
# region, the bucket made at the first `up` (offloadfs-test) and DIR.
#
# Settings that matter (../doc/remote.md, s3-notes): paxos propose interval
# 0.05 (radosgw's first start creates its pools one paxos round each:
# ~10 s at the default 1 s), tcp_nodelay=1 on the beast frontend (else
# 40 ms per small request on a kept-alive connection), bluestore so an OSD
# restart keeps the data, pid files polled (daemons return before writing
# them), zombies counted as dead (pid 1 may reap late here).
set -eu

ACCESS_KEY=offloadfs-test-access-key
SECRET_KEY=offloadfs-test-secret-key-not-a-secret
TEST_BUCKET=offloadfs-test
RGW_NAME=client.rgw.offloadfs

die() { echo "s3-server: $*" >&2; exit 1; }

cmd=${1:-}
[ -n "$cmd" ] || die "usage: s3-server.sh up|env|down|destroy|pid NAME|bucket NAME [DIR]"
shift
arg=
case $cmd in pid|bucket) arg=${1:-}; [ -n "$arg" ] || die "$cmd: a name is needed"; shift ;; esac
DIR=${1:-${OFFLOADFS_S3_DIR:-}}
[ -n "$DIR" ] || die "no directory: give DIR or set OFFLOADFS_S3_DIR"
case $DIR in /*) ;; *) DIR=$PWD/$DIR ;; esac
CONF=$DIR/ceph.conf

# --- processes ----------------------------------------------------------
alive() { # alive PID: running and not a zombie
    local st
    [ -n "$1" ] && [ -r "/proc/$1/stat" ] || return 1
    st=$(sed 's/^.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
    [ "$st" != Z ]
}
pidfile() { # pidfile mon|osd|rgw
    case $1 in
    mon) echo "$DIR/run/mon.a.pid" ;;
    osd) echo "$DIR/run/osd.0.pid" ;;
    rgw) echo "$DIR/run/$RGW_NAME.pid" ;;
    *) die "no daemon '$1' (mon, osd, rgw)" ;;
    esac
}
daemon_pid() { local f; f=$(pidfile "$1"); [ -s "$f" ] && cat "$f"; return 0; }
running() { alive "$(daemon_pid "$1")"; }
wait_pidfile() { # wait_pidfile NAME SECONDS: daemons fork before writing it
    local i n=$(($2 * 20))
    for ((i = 0; i < n; i++)); do
        running "$1" && return 0
        sleep 0.05
    done
    die "$1 did not start within $2 s (log: $DIR/log)"
}
stop_one() { # SIGTERM, then SIGKILL after 10 s
    local pid i
    pid=$(daemon_pid "$1")
    alive "$pid" || { rm -f "$(pidfile "$1")"; return 0; }
    kill -CONT "$pid" 2>/dev/null || true # a test may have stopped it
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 200; i++)); do
        alive "$pid" || break
        sleep 0.05
    done
    if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; sleep 0.1; fi
    rm -f "$(pidfile "$1")"
}

# --- ports --------------------------------------------------------------
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port_busy() {
    python3 - "$1" <<'EOF'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(0)
sys.exit(1)
EOF
}
load_ports() { # sets RGW_PORT MON_PORT MON_V1_PORT
    if [ -f "$DIR/ports" ]; then
        . "$DIR/ports"
        return 0
    fi
    RGW_PORT=${OFFLOADFS_S3_PORT:-$(free_port)}
    MON_PORT=${OFFLOADFS_S3_MON_PORT:-$(free_port)}
    MON_V1_PORT=${OFFLOADFS_S3_MON_V1_PORT:-$(free_port)}
    # Three binds to port 0 can hand out one port twice only if it was freed
    # between them; ask again in that case.
    while [ "$MON_PORT" = "$RGW_PORT" ]; do MON_PORT=$(free_port); done
    while [ "$MON_V1_PORT" = "$RGW_PORT" ] || [ "$MON_V1_PORT" = "$MON_PORT" ]; do
        MON_V1_PORT=$(free_port)
    done
}
check_port() { # check_port WHAT PORT
    if port_busy "$2"; then die "port $2 ($1) is in use: pick another with OFFLOADFS_S3_${3}"; fi
}

# --- the cluster --------------------------------------------------------
write_conf() {
    local fsid
    fsid=$(cat /proc/sys/kernel/random/uuid)
    cat >"$CONF" <<EOF
# Written by scripts/s3-server.sh: a one-node test cluster on 127.0.0.1.
[global]
fsid = $fsid
mon host = [v2:127.0.0.1:$MON_PORT,v1:127.0.0.1:$MON_V1_PORT]
mon initial members = a
public addr = 127.0.0.1
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = $DIR/keyring
run dir = $DIR/run
pid file = $DIR/run/\$name.pid
admin socket = $DIR/run/\$name.asok
log file = $DIR/log/\$name.log
crash dir = $DIR/crash
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon data avail warn = 2
mon data avail crit = 1
osd crush chooseleaf type = 0
ms bind ipv6 = false
[mon]
mon data = $DIR/mon.\$id
paxos propose interval = 0.05
[osd]
osd data = $DIR/osd.\$id
osd objectstore = bluestore
bluestore block create = true
bluestore block size = 10737418240
bluestore block db create = false
bluestore block wal create = false
bluestore fsck on mount = false
osd memory target = 536870912
osd crush update on start = true
[$RGW_NAME]
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT tcp_nodelay=1
rgw data = $DIR/rgw
rgw enable usage log = false
rgw thread pool size = 64
EOF
}

make_cluster() {
    mkdir -p "$DIR/run" "$DIR/log" "$DIR/crash" "$DIR/mon.a" "$DIR/osd.0" "$DIR/rgw"
    write_conf
    local kr=$DIR/keyring
    ceph-authtool --create-keyring "$kr" --gen-key -n mon. --cap mon 'allow *' >/dev/null
    ceph-authtool "$kr" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' \
        --cap mds 'allow *' --cap mgr 'allow *' >/dev/null
    ceph-authtool "$kr" --gen-key -n osd.0 --cap mon 'allow profile osd' \
        --cap mgr 'allow profile osd' --cap osd 'allow *' >/dev/null
    ceph-authtool "$kr" --gen-key -n "$RGW_NAME" --cap mon 'allow rw' --cap osd 'allow rwx' \
        --cap mgr 'allow rw' >/dev/null
    chmod 600 "$kr"
    monmaptool --create --clobber --fsid "$(sed -n 's/^fsid = //p' "$CONF")" \
        --addv a "[v2:127.0.0.1:$MON_PORT,v1:127.0.0.1:$MON_V1_PORT]" \
        "$DIR/monmap" >/dev/null
    ceph-mon -c "$CONF" --mkfs -i a --monmap "$DIR/monmap" --keyring "$kr" \
        >"$DIR/log/mkfs-mon.out" 2>&1 || die "ceph-mon --mkfs failed: $DIR/log/mkfs-mon.out"
    start_mon
    local uuid
    uuid=$(cat /proc/sys/kernel/random/uuid)
    ceph -c "$CONF" osd new "$uuid" 0 >/dev/null 2>"$DIR/log/osd-new.out" ||
        die "ceph osd new failed: $DIR/log/osd-new.out"
    ceph-osd -c "$CONF" -i 0 --mkfs --osd-uuid "$uuid" \
        >"$DIR/log/mkfs-osd.out" 2>&1 || die "ceph-osd --mkfs failed: $DIR/log/mkfs-osd.out"
    echo "$uuid" >"$DIR/osd.0/offloadfs-uuid"
    start_osd
    start_rgw
    radosgw-admin -c "$CONF" -n client.admin user create --uid=offloadfs-test \
        --display-name="offloadfs tests" --access-key="$ACCESS_KEY" \
        --secret-key="$SECRET_KEY" >"$DIR/log/user.out" 2>&1 ||
        die "radosgw-admin user create failed: $DIR/log/user.out"
    make_bucket "$TEST_BUCKET"
    touch "$DIR/made"
}

start_mon() {
    running mon && return 0
    ceph-mon -c "$CONF" -i a >>"$DIR/log/start.out" 2>&1 || die "ceph-mon did not start: $DIR/log"
    wait_pidfile mon 20
}
start_osd() {
    running osd && return 0
    ceph-osd -c "$CONF" -i 0 >>"$DIR/log/start.out" 2>&1 || die "ceph-osd did not start: $DIR/log"
    wait_pidfile osd 30
}
start_rgw() {
    running rgw && { wait_s3 60; return 0; }
    radosgw -c "$CONF" -n "$RGW_NAME" >>"$DIR/log/start.out" 2>&1 ||
        die "radosgw did not start: $DIR/log"
    wait_pidfile rgw 30
    wait_s3 60
}
wait_s3() { # an anonymous GET / answers 200 once radosgw serves S3
    local i n=$(($1 * 20)) code
    for ((i = 0; i < n; i++)); do
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$RGW_PORT/" || true)
        [ "$code" = 200 ] && return 0
        running rgw || die "radosgw exited (log: $DIR/log/$RGW_NAME.log)"
        sleep 0.05
    done
    die "radosgw did not answer within $1 s (log: $DIR/log/$RGW_NAME.log)"
}
make_bucket() { # PUT /NAME signed as the test user; 409 (exists, ours) is fine
    local code
    code=$(curl -s -o "$DIR/log/bucket.out" -w '%{http_code}' --max-time 10 -X PUT \
        --aws-sigv4 "aws:amz:us-east-1:s3" --user "$ACCESS_KEY:$SECRET_KEY" \
        -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "http://127.0.0.1:$RGW_PORT/$1")
    case $code in 200|409) ;; *) die "bucket '$1': HTTP $code ($(cat "$DIR/log/bucket.out"))" ;; esac
}

print_env() {
    cat <<EOF
export AWS_ENDPOINT_URL=http://127.0.0.1:$RGW_PORT
export AWS_ACCESS_KEY_ID=$ACCESS_KEY
export AWS_SECRET_ACCESS_KEY=$SECRET_KEY
export AWS_REGION=us-east-1
export OFFLOADFS_S3_BUCKET=$TEST_BUCKET
export OFFLOADFS_S3_DIR=$DIR
EOF
}

case $cmd in
up)
    for p in ceph-mon ceph-osd radosgw radosgw-admin ceph-authtool monmaptool curl python3; do
        command -v "$p" >/dev/null || die "'$p' not found: run scripts/deps.sh (as root)"
    done
    mkdir -p "$DIR"
    load_ports
    if [ ! -f "$DIR/made" ]; then
        [ -z "$(ls -A "$DIR" 2>/dev/null)" ] || die "'$DIR' is not empty and holds no cluster"
        check_port radosgw "$RGW_PORT" PORT
        check_port ceph-mon "$MON_PORT" MON_PORT
        check_port "ceph-mon v1" "$MON_V1_PORT" MON_V1_PORT
        printf 'RGW_PORT=%s\nMON_PORT=%s\nMON_V1_PORT=%s\n' "$RGW_PORT" "$MON_PORT" "$MON_V1_PORT" >"$DIR/ports"
        make_cluster
    else
        running mon || check_port ceph-mon "$MON_PORT" MON_PORT
        running rgw || check_port radosgw "$RGW_PORT" PORT
        start_mon
        start_osd
        start_rgw
    fi
    print_env
    ;;
env)
    [ -f "$DIR/made" ] || die "no cluster in '$DIR' (run: s3-server.sh up)"
    load_ports
    print_env
    ;;
down)
    [ -d "$DIR" ] || exit 0
    stop_one rgw
    stop_one osd
    stop_one mon
    ;;
destroy)
    [ -d "$DIR" ] || exit 0
    stop_one rgw
    stop_one osd
    stop_one mon
    rm -rf "$DIR"
    ;;
pid)
    daemon_pid "$arg"
    ;;
bucket)
    [ -f "$DIR/made" ] || die "no cluster in '$DIR'"
    load_ports
    make_bucket "$arg"
    ;;
*)
    die "unknown command '$cmd' (up, env, down, destroy, pid, bucket)"
    ;;
esac
