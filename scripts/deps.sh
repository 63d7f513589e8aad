#!/bin/sh
# Installs the Debian packages offloadfs needs to build and test, when they
# are missing. As root it runs apt-get; otherwise it says what to install.
set -eu
# Build: the first line (libzstd-dev: compressed results; libmicrohttpd-dev:
# the daemon's -o metrics). Tests: prometheus (promtool, and a real server
# scraping the daemon: tests/fs/test_metrics.sh), curl, python3, lmdb-utils (foreign and old-format
# stores), valgrind (make test-valgrind), clang and its sanitizer and
# libFuzzer runtimes (make fuzz), strace (a race widened, tests/fs/test_wake_owner.sh),
# passwd (useradd: a second user races the daemon, tests/fs/test_wake_race.sh),
# attr (getfattr: tests/fs/test_root_xattr.sh);
# python3-venv, -pip, -setuptools and -wheel
# for the binding's offline pip install into a venv (tests/ops/test_pip.sh);
# libcurl4-openssl-dev: the S3 remote tier (remote/): its headers to build, and
# libcurl4, which remote/curl_load.c dlopen()s when a store's remote is used.
PKGS="build-essential libfuse3-dev liblmdb-dev libcjson-dev libcmocka-dev libzstd-dev libmicrohttpd-dev fuse3 pkg-config
      python3 lmdb-utils valgrind clang libclang-rt-14-dev strace passwd attr
      python3-venv python3-pip python3-setuptools python3-wheel prometheus curl libcurl4-openssl-dev"
# The one-node Ceph cluster whose radosgw is the S3 server of the remote
# tests (scripts/s3-server.sh), without recommends: 66 packages, ~67 MB.
PKGS_NOREC="ceph-mon ceph-osd ceph-common radosgw"
missing="" missing_norec=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
for p in $PKGS_NOREC; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing_norec="$missing_norec $p"
done
[ -z "$missing$missing_norec" ] && exit 0
missing_all="$missing$missing_norec"
if [ "$(id -u)" -ne 0 ]; then
    echo "offloadfs: missing packages:$missing_all" >&2
    [ -z "$missing" ] || echo "offloadfs: install them with: sudo apt-get install$missing" >&2
    [ -z "$missing_norec" ] ||
        echo "offloadfs: and: sudo apt-get install --no-install-recommends$missing_norec" >&2
    exit 1
fi
echo "offloadfs: installing$missing_all" >&2
export DEBIAN_FRONTEND=noninteractive
apt_install() { # apt_install [--no-install-recommends] PACKAGES...
    apt-get install -y -q "$@" >/dev/null 2>&1 || {
        apt-get update -q >/dev/null && apt-get install -y -q "$@" >/dev/null
    }
}
[ -z "$missing" ] || apt_install $missing
[ -z "$missing_norec" ] || apt_install --no-install-recommends $missing_norec
