#!/bin/bash
# The module graph (doc/development.md): scripts/check-layers.sh passes on
# this tree, and fails, naming the file and the include, on a copy of the
# tree with a wrong include planted in it: a module reaching up or sideways,
# a private header, a library another module owns, an unknown directory, a
# circle of headers, a known debt paid but still listed; and, from object
# files, on two files of a module that call each other, directly or around
# a circle, and on an allowed call circle that is gone but still listed.
# run.sh: static
. "$(dirname "$0")/../lib.sh"
CHECK=$T_TOP/scripts/check-layers.sh

t_rc "the check passes on this tree" 0 "$CHECK" "$T_TOP"
[ -s "$T_TMP/out" ] && cat "$T_TMP/out"
grep -q '^check-layers: .* the graph runs one way$' "$T_TMP/out" &&
    t_ok "  and says so in one line" || t_not_ok "  and says so in one line"

# copy : a fresh copy of the tree's .c and .h files (no build output) in
# $T_TMP/tree.
copy() {
    rm -rf "$T_TMP/tree"; mkdir -p "$T_TMP/tree"
    (cd "$T_TOP" && find . \( -path ./.git -o -path './build*' -o -name node_modules \) -prune -o \
        -type f \( -name '*.c' -o -name '*.h' \) -print | tar -cf - -T -) | tar -xf - -C "$T_TMP/tree" &&
        [ -f "$T_TMP/tree/store/store.h" ] || { t_not_ok "a copy of the tree's sources"; t_done; }
}

# planted DESC WANT... : the check on the copy exits 1 and its output holds
# every WANT (fixed strings).
planted() {
    local d=$1 w miss=; shift
    "$CHECK" "$T_TMP/tree" >"$T_TMP/out" 2>&1; local rc=$?
    for w in "$@"; do grep -qF -- "$w" "$T_TMP/out" || miss="$miss '$w'"; done
    if [ "$rc" -eq 1 ] && [ -z "$miss" ]; then t_ok "$d"
    else t_not_ok "$d"; echo "  exit $rc (want 1), missing:${miss:- nothing}"; sed 's/^/  | /' "$T_TMP/out"; fi
}

copy
t_rc "the copy of the tree passes as the tree does" 0 "$CHECK" "$T_TMP/tree"

echo '#include "remote/remote.h"' >>"$T_TMP/tree/store/open.c"
planted "store/ including remote/ fails, naming both" 'store/open.c includes "remote/remote.h"' 'never remote'

copy
echo '#include "fs/fs.h"' >>"$T_TMP/tree/tier/tier.c"
planted "tier/ including the daemon's header fails" 'tier/tier.c includes "fs/fs.h"' 'never fs'

copy
echo '#include "agentlink/internal.h"' >>"$T_TMP/tree/fs/ops.c"
planted "the daemon including the library's header (a new file of a known debt) fails" \
    'fs/ops.c includes "agentlink/internal.h"'

copy
echo '#include "remote/remote.h"' >>"$T_TMP/tree/fs/window.c"
planted "the daemon including the remote's header fails: it reaches the remote through tier/ only" \
    'fs/window.c includes "remote/remote.h"' 'never remote'

copy
echo '#include "tier/tier.h"' >>"$T_TMP/tree/fs/lookup.c"
planted "the daemon including the tier's writer header (which brings remote.h) fails" \
    'fs/lookup.c includes "tier/tier.h": that header is for agentlink, agentlink/cli only'

copy
echo '#include "remote/remote_int.h"' >>"$T_TMP/tree/tier/upload.c"
planted "tier/ including remote/'s private header fails" \
    'tier/upload.c includes "remote/remote_int.h": that header is private to remote'

copy
echo '#include "store/wake.h"' >>"$T_TMP/tree/agentlink/handle.c"
planted "a header meant for one module only fails elsewhere" \
    'agentlink/handle.c includes "store/wake.h": that header is for fs only'

copy
echo '#include <lmdb.h>' >>"$T_TMP/tree/metrics/prom.c"
planted "metrics/ including LMDB's header fails" 'metrics/prom.c includes <lmdb.h>'

copy
mkdir -p "$T_TMP/tree/shared"
echo 'int x;' >"$T_TMP/tree/shared/x.c"
planted "a directory the graph does not name fails" 'shared/x.c: not in a module the graph names'

copy
printf '#include "store/loop_b.h"\n' >"$T_TMP/tree/store/loop_a.h"
printf '#include "store/loop_a.h"\n' >"$T_TMP/tree/store/loop_b.h"
planted "two headers including each other fail" 'headers include each other in a circle' \
    store/loop_a.h store/loop_b.h

copy
printf '#include "fs/fs.h"\n#include "remote/remote_int.h"\n#include <lmdb.h>\n' >"$T_TMP/tree/tests/store/probe.c"
t_rc "tests/ may include any module's headers" 0 "$CHECK" "$T_TMP/tree"

# Call circles, read from object files: OFFLOADFS_BUILD points the check at
# a directory of objects compiled here from planted files (cc -c), beside
# the copy of the tree that holds their sources.
objs=$T_TMP/objs
# plant_calls NAME CALLS... : writes fs/NAME.c into the copy, defining
# NAME() that calls each of CALLS, and compiles it into $objs/obj/fs/.
plant_calls() {
    local n=$1 c body=""; shift
    for c in "$@"; do body+="$c(); "; done
    { for c in "$@"; do echo "void $c(void);"; done
      echo "void $n(void); void $n(void) { $body}"; } >"$T_TMP/tree/fs/$n.c"
    mkdir -p "$objs/obj/fs"
    cc -c -o "$objs/obj/fs/$n.o" "$T_TMP/tree/fs/$n.c" || t_not_ok "compiling the planted fs/$n.c"
}
copy; rm -rf "$objs"
plant_calls calls_a calls_b
plant_calls calls_b
OFFLOADFS_BUILD=$objs t_rc "a call one way between two files passes" 0 "$CHECK" "$T_TMP/tree"

copy; rm -rf "$objs"
plant_calls calls_a calls_b
plant_calls calls_b calls_a
OFFLOADFS_BUILD=$objs planted "two files calling each other fail, naming both" \
    'fs/: files call each other in a circle' fs/calls_a.c fs/calls_b.c

copy; rm -rf "$objs"
plant_calls calls_a calls_b
plant_calls calls_b calls_c
plant_calls calls_c calls_a
OFFLOADFS_BUILD=$objs planted "three files calling around a circle fail, naming them" \
    'fs/: files call each other in a circle' fs/calls_a.c fs/calls_b.c fs/calls_c.c

# An allowed circle that is gone (the module's objects no longer make the
# call) but still listed fails, so that list only shrinks too.
allowed=$("$CHECK" --circles | head -1)
if [ -z "$allowed" ]; then
    t_ok "no allowed call circle is left to check"
else
    copy; rm -rf "$objs"
    from=${allowed%% -> *} to=${allowed#* -> }
    mod=${from%/*}
    mkdir -p "$objs/obj/$mod"
    for f in "$from" "$to"; do
        echo "int ${f//[\/.]/_}_alone;" >"$T_TMP/plain.c"
        cc -c -o "$objs/obj/$mod/$(basename "$f" .c).o" "$T_TMP/plain.c"
    done
    OFFLOADFS_BUILD=$objs planted "an allowed call circle no longer made but still listed fails, naming it" \
        "allowed call '$allowed' is no longer made"
fi

# A known debt paid (its include removed) but still listed fails, so the
# list only shrinks.
copy
debt=$("$CHECK" --debts | head -1)
if [ -z "$debt" ]; then
    t_ok "no known debt is left to check"
else
    file=${debt%% -> *} inc=${debt#* -> }
    sed -i "\\|#include \"$inc\"|d" "$T_TMP/tree/$file" && ! grep -qF "\"$inc\"" "$T_TMP/tree/$file" ||
        t_not_ok "the debt's include removed from the copy of $file"
    planted "a paid debt still listed fails, naming it" "known debt '$debt' is no longer in the tree"
fi

t_done
