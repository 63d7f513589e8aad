#!/bin/bash
# check-symbols.sh -- fails when a static library of the build exports a
# name its module does not own, or when the files of remote/ call each
# other against its core + operations rule (doc/development.md, "Inside
# remote/ and store/").
#
#   scripts/check-symbols.sh [BUILD]   check the libraries in BUILD (default: build)
#
# Names: every global symbol a library defines (nm -g --defined-only) is
# static or starts with its module's prefix, so that no program linking
# the libraries side by side meets a clash (a bare db(), now_ns() or
# xml_take() would meet the program's own).
#
# remote/'s calls, read from the undefined and defined symbols of each
# member of libremote.a: an operation file (OPS below) calls no other
# operation file, and no two files call each other, directly or around a
# circle.
#
# Exit 0 and one summary line when clean; 1 and one line per problem
# otherwise; 2 when a library is missing (build first: make all).
set -u
build=${1:-build}

# library: the prefix every global name it defines must carry.
# libagentlink.a, the installed archive, bundles libal.a and the layers
# below it, so it is clean when they are.
declare -A PREFIX=(
    [libcommon.a]='^common_'
    [libstore.a]='^store_'
    [libremote.a]='^remote_'
    [libremote_mem.a]='^remote_'
    [libtier.a]='^tier_'
    [libal.a]='^al_'
    [libmcp.a]='^mcp_'
)

# The operation files of remote/: each uses only the core (request.c,
# config.c) and the leaves; upload.c, above them, chooses between put.o
# and multipart.o.
OPS="put.o multipart.o get.o head.o delete.o list.o"

bad=0
problem() { echo "check-symbols: $*"; bad=$((bad + 1)); }

nsyms=0
for lib in "${!PREFIX[@]}"; do
    [ -f "$build/$lib" ] || { echo "check-symbols: no '$build/$lib' (make all first)" >&2; exit 2; }
    # The check: member and name of every global definition without the
    # prefix. Names with two underscores are the toolchain's, never ours
    # (C reserves them): a sanitizer build adds __odr_asan.* beside each
    # global variable.
    out=$(nm -A -g --defined-only "$build/$lib" | awk -v ok="${PREFIX[$lib]}" \
        '$NF ~ /^__/ { next } { n++ } $NF !~ ok { sub(/:[0-9a-f]*$/, "", $1); print $1 ": " $NF }
         END { print "#" n + 0 }')
    nsyms=$((nsyms + ${out##*#}))
    while IFS= read -r l; do
        [ -n "$l" ] && problem "$l: a global name without the prefix ${PREFIX[$lib]#^} (make it static or prefix it)"
    done <<<"${out%#*}"
done

# ---- remote/: core + operations --------------------------------------------
# edges "A B SYMBOL": member A calls SYMBOL defined in member B.
edges=$(nm -A "$build/libremote.a" | awk '
    { split($1, p, ":"); o = p[2] }
    $(NF - 1) == "U" { und[o] = und[o] " " $NF; next }
    $(NF - 1) ~ /^[TDBRC]$/ { def[$NF] = o }
    END { for (o in und) { n = split(und[o], s, " ")
              for (i = 1; i <= n; i++) if ((s[i] in def) && def[s[i]] != o) print o, def[s[i]], s[i] } }' | sort -u)
nedges=0
while read -r a b sym; do
    [ -n "$a" ] || continue
    nedges=$((nedges + 1))
    case " $OPS " in *" $a "*) case " $OPS " in *" $b "*)
        problem "remote/${a%.o}.c calls $sym() of remote/${b%.o}.c: an operation uses only the core and the leaves" ;;
    esac ;; esac
done <<<"$edges"
# A circle: tsort reads the pairs and complains about a loop.
if loop=$(awk '{ print $1, $2 }' <<<"$edges" | tsort 2>&1 >/dev/null) && [ -z "$loop" ]; then :; else
    problem "the files of remote/ call each other in a circle: $(grep -o '[a-z_]*\.o' <<<"$loop" | sort -u | tr '\n' ' ')"
fi

if [ "$bad" -ne 0 ]; then exit 1; fi
echo "check-symbols: $nsyms global names in ${#PREFIX[@]} libraries, each with its module's prefix;" \
    "remote/: $nedges calls between files, one way, no operation calling another"
