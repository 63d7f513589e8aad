#!/bin/bash
# test_pip.sh -- the Python binding as a pip package: pip install
# --no-build-isolation of agentlink/python into a fresh virtual environment,
# offline, then the installed module finding libagentlink after make install
# without $AGENTLINK_LIB (through the agentlink program on the PATH, or the
# soname through the dynamic loader).
#
# The venv is made by Debian's python3 (the one python3-venv, python3-pip,
# python3-setuptools and python3-wheel from scripts/deps.sh serve) with
# --system-site-packages, so that setuptools and wheel are there to build with.
# run.sh: alone (make, an install or a machine-wide path)
. "$(dirname "$0")/../lib.sh"

PY=${OFFLOADFS_VENV_PYTHON:-/usr/bin/python3}
mk() { make -s --no-print-directory -C "$T_TOP" "$@"; }
VERSION=$("$T_TOP/build/agentlink" --version 2>/dev/null | awk '{print $2}')
[ -n "$VERSION" ] || { mk all >/dev/null; VERSION=$("$T_TOP/build/agentlink" --version | awk '{print $2}'); }

# pip builds in the source directory (build/, *.egg-info): build a copy of the
# package, so that test runs neither dirty the tree nor race each other.
SRC=$T_TMP/src
cp -r "$T_TOP/agentlink/python" "$SRC" && rm -rf "$SRC/build" "$SRC"/*.egg-info "$SRC/__pycache__"
V=$T_TMP/venv
t_rc "a fresh venv" 0 "$PY" -m venv --system-site-packages "$V"
t_rc "pip install --no-build-isolation --no-index exits 0" 0 \
    env PIP_NO_INDEX=1 PIP_FIND_LINKS= "$V/bin/python" -m pip install --no-build-isolation --no-index "$SRC"
t_eq "pip knows the package and its version" "$("$V/bin/python" -m pip show agentlink 2>/dev/null | sed -n 's/^Version: //p')" \
    "$VERSION"
SITE=$("$V/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
t_check "the module is in the venv's site-packages" cmp -s "$SITE/agentlink.py" "$T_TOP/agentlink/python/agentlink.py"

# vpy [VAR=VALUE...] : runs a round trip with the venv's python, away from the
# tree and with only the variables given; prints the module and the library.
vpy() {
    (cd / && env -i HOME="$T_TMP" OFFLOADFS_STORE="$T_TMP/store" "$@" "$V/bin/python" -c '
import agentlink
s = agentlink.ToolResultStore()
ref = s.write(key="run_1/search_1.txt", content="pip ✓")
assert s.read(ref) == "pip ✓", ref
assert agentlink.ToolResultStore.from_dict(s.to_dict()).read("run_1/search_1.txt") == "pip ✓"
assert agentlink.PolicyFile().should_offload("bash", "x" * 32769, None)
print(agentlink.__file__)
print(*[l.split()[-1] for l in open("/proc/self/maps") if "libagentlink" in l][:1])')
}
# Always the plain build, as in test_install.sh: a sanitized library needs its runtime preloaded.
t_rc "with AGENTLINK_LIB it works" 0 vpy AGENTLINK_LIB="$T_TOP/build/libagentlink.so"
t_eq "from site-packages, with that library" "$(cat "$T_TMP/out")" "$SITE/agentlink.py
$(readlink -f "$T_TOP/build/libagentlink.so")"

P=$T_TMP/prefix
t_rc "make install PREFIX=$P exits 0" 0 mk install PREFIX="$P" MOUNT_LINK_DIR= LDCONFIG=true
t_rc "with the installed agentlink on the PATH, no AGENTLINK_LIB, it works" 0 vpy PATH="$P/bin:/usr/bin:/bin"
t_eq "it loads the library next to that program" "$(sed -n 2p "$T_TMP/out")" "$P/lib/libagentlink.so.$VERSION"
t_rc "with LD_LIBRARY_PATH, it works by the soname" 0 vpy PATH=/usr/bin:/bin LD_LIBRARY_PATH="$P/lib"
t_eq "it loads that library" "$(sed -n 2p "$T_TMP/out")" "$P/lib/libagentlink.so.$VERSION"
system=$(ldconfig -p 2>/dev/null | awk '$1 == "libagentlink.so.'"${VERSION%%.*}"'" {print $NF; exit}')
if [ -z "$system" ]; then
    t_rc "with none of these, the import fails" 1 vpy PATH=/usr/bin:/bin
    t_check "saying what it tried" grep -q "libagentlink.so not found: .* tried .*libagentlink.so.0" "$T_TMP/err"
else
    t_rc "with none of these, the system's library is used" 0 vpy PATH=/usr/bin:/bin
    t_eq "through the soname" "$(sed -n 2p "$T_TMP/out")" "$(readlink -f "$system")"
fi
t_rc "make uninstall exits 0" 0 mk uninstall PREFIX="$P" MOUNT_LINK_DIR= LDCONFIG=true
t_rc "pip uninstall exits 0" 0 "$V/bin/python" -m pip uninstall -y agentlink
t_check "and the module is gone" test ! -e "$SITE/agentlink.py"

t_done
