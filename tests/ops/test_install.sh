#!/bin/bash
# test_install.sh -- make install / uninstall: the whole tree under DESTDIR,
# soname links, DESTDIR never written into an installed file, the mount-helper
# link for a PREFIX outside mount.fuse3's PATH, uninstall leaving nothing, and
# a C program built with pkg-config (shared and static) and the Python binding
# run against an install; the pc file and the binding relocatable (a DESTDIR
# tree and a moved tree work with only their own files, pkg-config
# --define-prefix follows the move). tests/ops/test_pip.sh has pip's install.
# run.sh: alone (make, an install or a machine-wide path)
. "$(dirname "$0")/../lib.sh"

# Always the plain build: an install is what make builds, whatever build
# directory the rest of the suite runs from.
mk() { make -s --no-print-directory -C "$T_TOP" "$@"; }
VERSION=$("$T_TOP/build/agentlink" --version 2>/dev/null | awk '{print $2}')
[ -n "$VERSION" ] || { mk all >/dev/null; VERSION=$("$T_TOP/build/agentlink" --version | awk '{print $2}'); }
SOVER=${VERSION%%.*}
# tree_links DIR : every file and symlink under DIR, symlinks with their target
tree_links() { (cd "$1" && find . \( -type f -printf '%p\n' \) -o \( -type l -printf '%p -> %l\n' \) | sed 's|^\./||' | sort); }

# ---- DESTDIR, default PREFIX -------------------------------------------------------
D=$T_TMP/stage-DESTDIR-MARK
t_rc "make install DESTDIR=... exits 0" 0 mk install DESTDIR="$D"
want="usr/local/bin/agentlink
usr/local/bin/offloadfs
usr/local/include/agentlink/agentlink.h
usr/local/lib/libagentlink.a
usr/local/lib/libagentlink.so -> libagentlink.so.$SOVER
usr/local/lib/libagentlink.so.$SOVER -> libagentlink.so.$VERSION
usr/local/lib/libagentlink.so.$VERSION
usr/local/lib/pkgconfig/agentlink.pc
usr/local/share/man/man1/agentlink.1
usr/local/share/man/man1/offloadfs.1
usr/local/share/man/man3/agentlink.3
usr/local/share/offloadfs/js/README.md
usr/local/share/offloadfs/js/index.d.ts
usr/local/share/offloadfs/js/index.js
usr/local/share/offloadfs/js/names.js
usr/local/share/offloadfs/js/package.json
usr/local/share/offloadfs/python/agentlink.py"
t_eq "the installed tree is exactly the expected one" "$(tree_links "$D")" "$want"
L=$D/usr/local/lib
t_eq "the shared library's soname" "$(readelf -d "$L/libagentlink.so.$VERSION" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')" \
    "libagentlink.so.$SOVER"
t_check "the static library defines the API" bash -c "nm -g --defined-only '$L/libagentlink.a' 2>/dev/null | grep -qw al_store_put"
t_check "the shared library exports the API" bash -c "nm -D --defined-only '$L/libagentlink.so.$VERSION' | grep -qw al_offload"
t_eq "and nothing else (agentlink/agentlink.map)" \
    "$(nm -D --defined-only "$L/libagentlink.so.$VERSION" | awk '$3 !~ /^al_/ {print $3}')" ""
# Exactly the functions agentlink.h declares: internal.h's al_ helpers are
# hidden, so no program can bind to what a later version may change.
api=$(grep -v '^[[:space:]]*/\{0,1\}\*' "$T_TOP/agentlink/agentlink.h" | grep -o '\bal_[a-z0-9_]*(' | tr -d '(' | sort -u)
t_eq "the shared library exports exactly the functions agentlink.h declares" \
    "$(nm -D --defined-only "$L/libagentlink.so.$VERSION" | awk '{print $3}' | sort)" "$api"
# The MCP relay (agentlink/mcp/, build/libmcp.a) is the command's, not the
# library's: none of what it calls is imported. (poll is: the store's wake of
# the daemon, store/wake.c, waits with one poll.)
t_eq "the shared library imports nothing of the MCP relay (fork, exec, regex, signals, pipes)" \
    "$(nm -D --undefined-only "$L/libagentlink.so.$VERSION" | awk '{sub(/@.*/, "", $2); print $2}' |
       grep -xE 'fork|vfork|execv|execvp|execve|posix_spawnp?|regcomp|regexec|regfree|pipe2?|waitpid|kill|killpg|setpgid|sigaction|prctl|getrandom')" ""
t_check "the header is the tree's" cmp -s "$D/usr/local/include/agentlink/agentlink.h" "$T_TOP/agentlink/agentlink.h"
PYI=$D/usr/local/share/offloadfs/python/agentlink.py
t_eq "the binding is the tree's, but for the LIBDIR it records" \
    "$(diff "$T_TOP/agentlink/python/agentlink.py" "$PYI" | grep '^[<>]')" \
    '< _LIBDIR_REL = None
< _LIBDIR = None
> _LIBDIR_REL = "../../../lib"
> _LIBDIR = "/usr/local/lib"'
# pyimport [VAR=VALUE...] DIR: imports the binding from DIR, away from the tree,
# without $AGENTLINK_LIB or $LD_LIBRARY_PATH; prints the library it mapped.
pyimport() {
    local envs=(); while [ "${1#*=}" != "$1" ]; do envs+=("$1"); shift; done
    (cd / && env -u AGENTLINK_LIB -u LD_LIBRARY_PATH -u PYTHONPATH "${envs[@]}" python3 -c '
import sys; sys.path.insert(0, sys.argv[1])
import agentlink
assert agentlink.derive_key("a/b") == "a_b~c14cddc033f64b9d"
print(agentlink.__file__)
print(*[l.split()[-1] for l in open("/proc/self/maps") if "libagentlink" in l][:1])' "$1")
}
t_rc "the staged binding imports with only the staged files" 0 pyimport "$D/usr/local/share/offloadfs/python"
t_eq "it loads the staged library, found from its own directory" "$(cat "$T_TMP/out")" \
    "$PYI
$L/libagentlink.so.$VERSION"
for f in package.json index.js names.js index.d.ts README.md; do
    t_check "the deepagents backend's $f is the tree's, mode 644" \
        bash -c "cmp -s '$D/usr/local/share/offloadfs/js/$f' '$T_TOP/agentlink/js/$f' && [ \$(stat -c %a '$D/usr/local/share/offloadfs/js/$f') = 644 ]"
done
t_eq "installed programs run" "$("$D/usr/local/bin/agentlink" --version) $("$D/usr/local/bin/offloadfs" --version 2>&1 | head -1 | grep -o "$VERSION")" \
    "agentlink $VERSION $VERSION"
t_eq "modes: programs 755, library 755, the rest 644" \
    "$(cd "$D/usr/local" && stat -c '%a %n' bin/* lib/libagentlink.a lib/libagentlink.so.$VERSION lib/pkgconfig/agentlink.pc include/agentlink/agentlink.h share/man/man*/* share/offloadfs/python/agentlink.py | awk '{print $1}' | tr '\n' ' ')" \
    "755 755 644 755 644 644 644 644 644 644 "
t_eq "DESTDIR is written into no installed file" "$(grep -rlaF "DESTDIR-MARK" "$D")" ""
t_eq "the pc file names the PREFIX, and the rest relative to it" \
    "$(grep -E '^(prefix|libdir|includedir)=' "$L/pkgconfig/agentlink.pc" | tr '\n' ' ')" \
    'prefix=/usr/local libdir=${prefix}/lib includedir=${prefix}/include '
t_check "no mount-helper link for PREFIX=/usr/local (it is on mount.fuse3's PATH)" test ! -e "$D/usr/local/sbin/offloadfs"
for page in 1/offloadfs 1/agentlink 3/agentlink; do
    s=${page%/*} n=${page#*/}
    t_eq "man -M finds $n($s)" "$(man -M "$D/usr/local/share/man" -w "$s" "$n" 2>&1)" "$D/usr/local/share/man/man$s/$n.$s"
    t_eq "$n($s) renders without a groff warning" "$(groff -man -Tutf8 -ww -z "$D/usr/local/share/man/man$s/$n.$s" 2>&1)" ""
done
has_line() { grep -qF -- "$2" "$1"; }
t_check "agentlink(1) documents import" has_line "$D/usr/local/share/man/man1/agentlink.1" "import \\fIDIR\\fR"
t_check "offloadfs(1) documents the fstab line" has_line "$D/usr/local/share/man/man1/offloadfs.1" "fuse.offloadfs  ro,namespace=default"
PKG_CONFIG_PATH=$L/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D t_rc "pkg-config reads the staged pc file" 0 \
    pkg-config --cflags --libs agentlink
t_eq "with PKG_CONFIG_SYSROOT_DIR it points into the staged tree" "$(sed 's/ *$//' "$T_TMP/out")" "-I$D/usr/local/include -L$L -lagentlink"

t_rc "make uninstall DESTDIR=... exits 0" 0 mk uninstall DESTDIR="$D"
t_eq "uninstall removes every file and link" "$(tree_links "$D")" ""
t_check "and the directories it made for itself" test ! -e "$D/usr/local/include/agentlink" -a ! -e "$D/usr/local/share/offloadfs"

# ---- a PREFIX outside mount.fuse3's PATH gets a link ------------------------------------
O=$T_TMP/stage-opt
t_rc "make install PREFIX=/opt/offloadfs exits 0" 0 mk install DESTDIR="$O" PREFIX=/opt/offloadfs
t_eq "it links offloadfs where mount.fuse3 finds it" "$(readlink "$O/usr/local/sbin/offloadfs")" "/opt/offloadfs/bin/offloadfs"
t_eq "the pc file names that PREFIX" "$(sed -n 's/^prefix=//p' "$O/opt/offloadfs/lib/pkgconfig/agentlink.pc")" "/opt/offloadfs"
t_eq "its libdir is that PREFIX's lib" "$(PKG_CONFIG_PATH=$O/opt/offloadfs/lib/pkgconfig pkg-config --variable=libdir agentlink)" \
    "/opt/offloadfs/lib"
t_rc "make uninstall PREFIX=/opt/offloadfs exits 0" 0 mk uninstall DESTDIR="$O" PREFIX=/opt/offloadfs
t_eq "uninstall removes the link too" "$(tree_links "$O")" ""
t_rc "MOUNT_LINK_DIR= skips the link" 0 mk install DESTDIR="$O" PREFIX=/opt/offloadfs MOUNT_LINK_DIR=
t_check "no link" test ! -e "$O/usr/local/sbin/offloadfs"
t_rc "PREFIX=/usr installs" 0 mk install DESTDIR="$T_TMP/stage-usr" PREFIX=/usr
t_check "PREFIX=/usr needs no link either" test -x "$T_TMP/stage-usr/usr/bin/offloadfs" -a ! -e "$T_TMP/stage-usr/usr/local"
t_rc "LIBDIR is honoured" 0 mk install DESTDIR="$T_TMP/stage-lib64" PREFIX=/usr LIBDIR=/usr/lib/x86_64-linux-gnu
t_eq "library and pc file go to LIBDIR" "$(cd "$T_TMP/stage-lib64" && ls usr/lib/x86_64-linux-gnu/libagentlink.so.$VERSION && sed -n 's/^libdir=//p' usr/lib/x86_64-linux-gnu/pkgconfig/agentlink.pc)" \
    "usr/lib/x86_64-linux-gnu/libagentlink.so.$VERSION
\${prefix}/lib/x86_64-linux-gnu"
t_eq "the binding records that LIBDIR" "$(grep '^_LIBDIR' "$T_TMP/stage-lib64/usr/share/offloadfs/python/agentlink.py")" \
    '_LIBDIR_REL = "../../../lib/x86_64-linux-gnu"
_LIBDIR = "/usr/lib/x86_64-linux-gnu"'
t_rc "a LIBDIR outside PREFIX installs" 0 mk install DESTDIR="$T_TMP/stage-out" PREFIX=/opt/al LIBDIR=/usr/lib64 MOUNT_LINK_DIR=
t_eq "its pc file names it whole" "$(sed -n 's/^libdir=//p' "$T_TMP/stage-out/usr/lib64/pkgconfig/agentlink.pc")" "/usr/lib64"
t_rc "the binding staged there finds the library too" 0 pyimport "$T_TMP/stage-out/opt/al/share/offloadfs/python"
t_eq "from its own directory" "$(sed -n 2p "$T_TMP/out")" "$T_TMP/stage-out/usr/lib64/libagentlink.so.$VERSION"

# ---- a real PREFIX: a C program through pkg-config, the Python binding ---------------------
P=$T_TMP/prefix
# LDCONFIG=true: an install test leaves /etc/ld.so.cache alone.
t_rc "make install PREFIX=$P exits 0" 0 mk install PREFIX="$P" MOUNT_LINK_DIR= LDCONFIG=true
export PKG_CONFIG_PATH=$P/lib/pkgconfig
t_eq "pkg-config --modversion" "$(pkg-config --modversion agentlink)" "$VERSION"
t_eq "pkg-config --cflags --libs" "$(pkg-config --cflags --libs agentlink | sed 's/ *$//')" "-I$P/include -L$P/lib -lagentlink"
t_eq "pkg-config --static adds what libagentlink.a needs" "$(pkg-config --static --libs agentlink | sed 's/ *$//')" \
    "-L$P/lib -lagentlink -lcjson -ldl -llmdb -lzstd -lpthread"
# The program is agentlink(3)'s EXAMPLE, so the man page's example is known to build.
sed -n '/^\.SH EXAMPLE/,/^\.fi/p' "$T_TOP/doc/agentlink.3" | sed '1,2d;$d' | sed 's/\\e/\\/g' >"$T_TMP/example.c"
t_check "agentlink(3) has an example" grep -q al_offload "$T_TMP/example.c"
# shellcheck disable=SC2046
t_rc "the example builds with pkg-config --cflags --libs, warning-free" 0 \
    cc -std=c11 -Wall -Wextra -Werror -o "$T_TMP/example" "$T_TMP/example.c" $(pkg-config --cflags --libs agentlink)
t_eq "it loads the installed library through its soname" \
    "$(LD_LIBRARY_PATH=$P/lib ldd "$T_TMP/example" | awk '$1 ~ /agentlink/ {print $1, $3}')" \
    "libagentlink.so.$SOVER $P/lib/libagentlink.so.$SOVER"
printf '{"rules": [{"tools": ["*"], "offload": "always"}]}\n' >"$T_TMP/always.json"
( export LD_LIBRARY_PATH=$P/lib OFFLOADFS_STORE=$T_TMP/cstore OFFLOADFS_CONFIG=$T_TMP/always.json
  unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT
  t_rc "the example runs" 0 "$T_TMP/example"
  t_eq "it prints the pointer text" "$(sed -n 2p "$T_TMP/out")" "  /large_tool_results/call_1"
  t_rc "the installed agentlink reads what it stored" 0 "$P/bin/agentlink" get call_1
  t_eq "byte for byte" "$(cat "$T_TMP/out")" "...a large tool result..."
  exit "$T_FAILS" ) || T_FAILS=$((T_FAILS + $?))
# shellcheck disable=SC2046
t_rc "a static link against libagentlink.a builds" 0 \
    cc -std=c11 -o "$T_TMP/example-static" "$T_TMP/example.c" $(pkg-config --cflags agentlink) \
    "$(pkg-config --variable=libdir agentlink)/libagentlink.a" \
    $(pkg-config --static --libs-only-l agentlink | sed 's/-lagentlink//')
t_eq "it needs no libagentlink.so" "$(ldd "$T_TMP/example-static" | grep -c agentlink)" 0
t_rc "and runs" 0 env OFFLOADFS_STORE="$T_TMP/cstore2" "$T_TMP/example-static"
t_eq "it prints the result (below the default threshold)" "$(cat "$T_TMP/out")" "...a large tool result..."
( unset AGENTLINK_LIB LD_LIBRARY_PATH
  export PYTHONPATH=$P/share/offloadfs/python OFFLOADFS_STORE=$T_TMP/pystore
  cd /
  t_rc "the installed binding finds the installed library, without AGENTLINK_LIB or LD_LIBRARY_PATH" 0 python3 -c '
import agentlink, sys
s = agentlink.ToolResultStore()
print(s.write(key="py_1", content="from python"))
print(s.read("py_1"))
print(agentlink.__file__)
print(*[l.split()[-1] for l in open("/proc/self/maps") if "libagentlink" in l][:1])'
  t_eq "and works" "$(cat "$T_TMP/out")" "/large_tool_results/py_1
from python
$P/share/offloadfs/python/agentlink.py
$P/lib/libagentlink.so.$VERSION"
  exit "$T_FAILS" ) || T_FAILS=$((T_FAILS + $?))
# A program with a function named like one of the library's internals
# (store_open): the library must keep calling its own.
cat >"$T_TMP/own.c" <<'EOF'
#include <agentlink/agentlink.h>
#include <stdio.h>
int store_open(void **out, const char *dir, unsigned flags);
int store_open(void **out, const char *dir, unsigned flags)
{
    (void)out, (void)dir, (void)flags;
    puts("the program's store_open");
    return 5;
}
int main(void)
{
    al_store *h = NULL;
    char *path = NULL;
    int rc = al_store_open(&h, NULL, NULL, NULL, NULL);
    if (!rc)
        rc = al_store_put(h, "own_1", "mine", 4, NULL, NULL, &path);
    printf("%d %s\n", rc, path ? path : al_strerror(rc));
    al_free(path);
    al_store_close(h);
    return rc != 0;
}
EOF
# shellcheck disable=SC2046
t_rc "a program defining its own store_open builds against the library" 0 \
    cc -std=c11 -Wall -Wextra -Werror -o "$T_TMP/own" "$T_TMP/own.c" $(pkg-config --cflags --libs agentlink)
t_rc "and al_store_put still stores (the library calls its own store_open)" 0 \
    env LD_LIBRARY_PATH="$P/lib" OFFLOADFS_STORE="$T_TMP/ownstore" "$T_TMP/own"
t_eq "it prints the path, not the program's function" "$(cat "$T_TMP/out")" "0 /large_tool_results/own_1"
t_eq "the installed agentlink reads it" "$(OFFLOADFS_STORE=$T_TMP/ownstore "$P/bin/agentlink" get own_1)" "mine"
mkdir -p "$T_TMP/elsewhere" && cp "$P/share/offloadfs/python/agentlink.py" "$T_TMP/elsewhere/"
t_rc "a copy of the installed binding elsewhere imports" 0 pyimport "$T_TMP/elsewhere"
t_eq "it loads the library from the LIBDIR recorded at install" "$(sed -n 2p "$T_TMP/out")" "$P/lib/libagentlink.so.$VERSION"

# ---- the same tree, moved ---------------------------------------------------------
M=$T_TMP/moved
mv "$P" "$M"
( export PKG_CONFIG_PATH=$M/lib/pkgconfig
  t_eq "pkg-config --define-prefix follows the moved tree" \
      "$(pkg-config --define-prefix --cflags --libs agentlink | sed 's/ *$//')" "-I$M/include -L$M/lib -lagentlink"
  t_eq "--variable=libdir too" "$(pkg-config --define-prefix --variable=libdir agentlink)" "$M/lib"
  # shellcheck disable=SC2046
  t_rc "the example builds against the moved tree" 0 \
      cc -std=c11 -Wall -Wextra -Werror -o "$T_TMP/example-moved" "$T_TMP/example.c" \
      $(pkg-config --define-prefix --cflags --libs agentlink)
  t_rc "and runs with its library" 0 env LD_LIBRARY_PATH="$M/lib" OFFLOADFS_STORE="$T_TMP/mstore" "$T_TMP/example-moved"
  t_eq "it prints the result" "$(cat "$T_TMP/out")" "...a large tool result..."
  exit "$T_FAILS" ) || T_FAILS=$((T_FAILS + $?))
t_rc "the moved binding imports" 0 pyimport "$M/share/offloadfs/python"
t_eq "it loads the moved library" "$(sed -n 2p "$T_TMP/out")" "$M/lib/libagentlink.so.$VERSION"
mv "$M" "$P"
# The deepagents backend: npm installs it from the installed folder (no
# registry: --offline, the deepagents peer left out), and it stores and
# reads through the installed CLI (no mount: the CLI fallback).
mkdir -p "$T_TMP/jsproj"
echo '{"name": "jsproj", "private": true, "type": "module"}' >"$T_TMP/jsproj/package.json"
t_rc "npm install $P/share/offloadfs/js" 0 \
    bash -c "cd '$T_TMP/jsproj' && npm install --offline --omit=peer --no-audit --no-fund '$P/share/offloadfs/js'"
cat >"$T_TMP/jsproj/run.mjs" <<'EOF'
import { OffloadBackend } from "agentlink";
const b = new OffloadBackend({ mount: process.argv[2], agentlink: process.argv[3] });
console.log(JSON.stringify(await b.write("/call_js.txt", "from node\n")));
console.log(JSON.stringify(await b.read("/call_js.txt")));
EOF
( export OFFLOADFS_STORE=$T_TMP/jsstore; unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT
  t_rc "the installed package imports as \"agentlink\" and runs the installed CLI" 0 \
      bash -c "cd '$T_TMP/jsproj' && node run.mjs '$T_TMP/nomount' '$P/bin/agentlink'"
  t_eq "it wrote and read back through the store" "$(cat "$T_TMP/out")" \
      '{"path":"/call_js.txt","filesUpdate":null,"metadata":{"offloadfs":"'"$T_TMP"'/nomount/call_js.txt"}}
{"content":"from node\n","mimeType":"text/plain","totalLines":1,"startLine":1,"endLine":1}'
  t_eq "agentlink get has the bytes" "$("$P/bin/agentlink" get call_js.txt)" "from node"
  exit "$T_FAILS" ) || T_FAILS=$((T_FAILS + $?))
t_rc "make uninstall PREFIX=$P exits 0" 0 mk uninstall PREFIX="$P" MOUNT_LINK_DIR= LDCONFIG=true
t_eq "nothing is left under PREFIX" "$(tree_links "$P")" ""

t_done
