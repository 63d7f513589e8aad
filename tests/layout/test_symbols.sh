#!/bin/bash
# The names the static libraries export and the calls between remote/'s
# files (doc/development.md): scripts/check-symbols.sh passes on this
# build, and fails, naming the library, the member and the name, on copies
# of the libraries with a wrong member planted in them: a global name
# without its module's prefix, an operation of remote/ calling another, a
# circle of calls.
# run.sh: static
. "$(dirname "$0")/../lib.sh"
CHECK=$T_TOP/scripts/check-symbols.sh
CC=${CC:-cc}

t_rc "the check passes on this build" 0 "$CHECK" "$T_BUILD"
[ -s "$T_TMP/out" ] && cat "$T_TMP/out"
grep -q '^check-symbols: .* each with its module.s prefix; remote/: .* no operation calling another$' "$T_TMP/out" &&
    t_ok "  and says so in one line" || t_not_ok "  and says so in one line"

# plant LIB MEMBER.o 'C SOURCE' : a copy of the build's static libraries
# in $T_TMP/b, with MEMBER.o (compiled from the source)
# added to LIB or put in place of the member of that name.
plant() {
    local lib=$1 member=$2 src=$3
    rm -rf "$T_TMP/b"; mkdir -p "$T_TMP/b"
    cp "$T_BUILD"/lib*.a "$T_TMP/b/" &&
        printf '%s\n' "$src" >"$T_TMP/b/${member%.o}.c" &&
        "$CC" -c -o "$T_TMP/b/$member" "$T_TMP/b/${member%.o}.c" &&
        (cd "$T_TMP/b" && ar r "$lib" "$member" 2>/dev/null) || t_not_ok "planting $member in a copy of $lib"
}

# planted DESC WANT... : the check on the copy exits 1 and its output holds
# every WANT (fixed strings).
planted() {
    local d=$1 w miss=; shift
    "$CHECK" "$T_TMP/b" >"$T_TMP/out" 2>&1; local rc=$?
    for w in "$@"; do grep -qF -- "$w" "$T_TMP/out" || miss="$miss '$w'"; done
    if [ "$rc" -eq 1 ] && [ -z "$miss" ]; then t_ok "$d"
    else t_not_ok "$d"; echo "  exit $rc (want 1), missing:${miss:- nothing}"; sed 's/^/  | /' "$T_TMP/out"; fi
}

plant libstore.a probe.o 'int db_get(void); int db_get(void) { return 0; }'
planted "a bare name in libstore.a fails, naming it" \
    'libstore.a:probe.o: db_get: a global name without the prefix store_'

plant libremote.a probe.o 'char *xml_take(void); char *xml_take(void) { return 0; }
static int keep(void) { return 1; }
int remote_probe(void); int remote_probe(void) { return keep(); }'
planted "a bare name in libremote.a fails; a static one and a prefixed one do not" \
    'libremote.a:probe.o: xml_take: a global name without the prefix remote_'
grep -qE 'keep|remote_probe' "$T_TMP/out" && t_not_ok "  and names only the bare one" ||
    t_ok "  and names only the bare one"

plant libremote.a delete.o 'struct remote_conn; struct remote_info;
int remote_head(struct remote_conn *c, const char *name, struct remote_info *out);
int remote_delete(struct remote_conn *c, const char *name);
int remote_delete(struct remote_conn *c, const char *name) { return remote_head(c, name, 0); }'
planted "an operation of remote/ calling another fails, naming both" \
    'remote/delete.c calls remote_head() of remote/head.c: an operation uses only the core'

plant libremote.a request.o "$(cat <<'EOF'
#include <stdint.h>
struct remote_conn; struct rq;
int remote_put(struct remote_conn *c, const char *name, uint64_t size, void *src, void *arg, const void *meta);
int remote_rq_run(struct remote_conn *c, struct rq *q);
int remote_rq_run(struct remote_conn *c, struct rq *q) { return remote_put(c, "x", 0, 0, q, 0); }
EOF
)"
planted "the core calling up into an operation fails as a circle" \
    'the files of remote/ call each other in a circle' request.o upload.o

rm -f "$T_TMP/b/libstore.a"
"$CHECK" "$T_TMP/b" >"$T_TMP/out" 2>&1
t_eq "a missing library is a usage error (exit 2), not a pass" "$?" 2

t_done
