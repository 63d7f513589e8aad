#!/bin/bash
# check-layers.sh -- fails when a C file includes against the module graph
# of doc/development.md ("The module graph"), or when files of one module
# call each other in a circle.
#
#   scripts/check-layers.sh [ROOT]     check the tree at ROOT (default: this one)
#   scripts/check-layers.sh --debts    print the known debts, one a line
#   scripts/check-layers.sh --circles  print the allowed call circles, one a line
#
# It reads every #include line of every .c and .h file of the modules (not
# tests/ or scripts/: a test may reach into any module it tests) and fails,
# naming the file and the include, when
#   - a module includes a module it may not (MAY_INCLUDE below);
#   - a module includes a header another module keeps private (PUBLIC);
#   - a module includes a system library's header that belongs to another
#     module (LIBS: only store/ sees LMDB, only remote/ sees libcurl, ...);
#   - a .c or .h file lies in a directory the table does not name (a new
#     module is added here and in doc/development.md first);
#   - headers include each other in a circle;
#   - MAY_INCLUDE itself has a circle (the graph must run one way);
#   - a known debt (KNOWN_DEBTS) is no longer in the tree: the list only
#     shrinks, so a debt paid is a line deleted here and in the doc;
#   - two files of one module call each other, directly or around a circle
#     (file A calls a function that file B defines: read with nm from the
#     built object files, $OFFLOADFS_BUILD/obj or ROOT/build/obj, of the
#     files the tree holds), unless the call is a listed allowance
#     (CALL_ALLOWANCES), which only shrinks too. Without object files (no
#     build yet) this check is skipped, and the summary says so.
# Exit 0 and one summary line when the tree is clean; 1 and one line per
# problem otherwise; 2 on bad usage.
set -u

# ---- the graph -------------------------------------------------------------
# module: the modules its files may include, besides its own. The graph runs
# one way, top to bottom: each layer uses only layers below it.
declare -A MAY_INCLUDE=(
    [common]=""                                  # a leaf: what every program shares (cJSON)
    [store]="common"                             # over LMDB and zstd, and the leaf
    [metrics]=""                                 # a leaf: the Prometheus text format
    [remote]="common"                            # the S3 client over libcurl; no store
    [tier]="store remote common"                 # the only port to the remote
    [fs]="store tier metrics common"             # the daemon
    [agentlink]="store tier common"              # the library
    [agentlink/mcp]="agentlink store common"     # the MCP proxy, linked into the command
    [agentlink/cli]="agentlink/mcp agentlink store tier metrics common"   # the command
)

# header: the modules outside its own that may include it ("*": any that
# MAY_INCLUDE allows). A header of a module not listed here is private to
# its module (store/store_int.h, remote/remote_int.h, tier/tier_int.h, ...).
declare -A PUBLIC=(
    [common/array.h]="*" [common/buf.h]="*" [common/clock.h]="*" [common/dir.h]="*"
    [common/env.h]="*" [common/error.h]="*" [common/file.h]="*" [common/policy.h]="*"
    [common/settings.h]="*" [common/utf8.h]="*"
    [store/store.h]="*"
    [store/wake.h]="fs"                          # the daemon's half of read-your-writes
    [remote/remote.h]="*"
    [tier/reader.h]="*"                          # the reader's port: no remote type
    [tier/tier.h]="agentlink agentlink/cli"      # the writer's: includes remote/remote.h
    [metrics/prom.h]="*"
    [agentlink/agentlink.h]="*"
    [agentlink/internal.h]="agentlink/mcp agentlink/cli"
    [agentlink/mcp/mcp.h]="*"
)

# <system header>: the modules that may include it (the library behind it is
# that module's business; everyone else goes through the module).
declare -A LIBS=(
    [lmdb.h]="store"
    [zstd.h]="store"
    [curl/curl.h]="remote"
    [fuse_lowlevel.h]="fs" [fuse.h]="fs" [fuse_common.h]="fs"
    [microhttpd.h]="fs"
    [cJSON.h]="common agentlink agentlink/cli agentlink/mcp"
    [cjson/cJSON.h]="common agentlink agentlink/cli agentlink/mcp"
)

# ---- known debts -------------------------------------------------------------
# Includes that go against the graph today, each to be removed by a refactor
# (doc/development.md, "Known debts"). "FILE -> INCLUDE", one a line. The
# check fails on any wrong include not listed here, and on any line here
# whose include is gone: delete the line when the debt is paid.
KNOWN_DEBTS="
"

# ---- allowed call circles ---------------------------------------------------
# Calls between files of one module that close a circle today, each to be
# removed by a refactor of that module: "FILE -> FILE" (the caller, then the
# file that defines what it calls), one a line. The check leaves these
# calls out of the graph; it fails on any other circle, and on a line here
# whose call is gone: delete the line when the circle is broken.
CALL_ALLOWANCES="
"
# Why each is allowed for now: none is left.

# ---------------------------------------------------------------------------
if [ "${1:-}" = --debts ]; then
    sed '/^$/d' <<<"$KNOWN_DEBTS"; exit 0
fi
if [ "${1:-}" = --circles ]; then
    sed '/^$/d' <<<"$CALL_ALLOWANCES"; exit 0
fi
case ${1:-} in -*) echo "usage: $0 [ROOT] | --debts | --circles" >&2; exit 2 ;; esac
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
[ -d "$root" ] || { echo "check-layers: no directory '$root'" >&2; exit 2; }
cd "$root" || exit 2

problems=0
say() { echo "check-layers: $*"; problems=$((problems + 1)); }

# module_of PATH : sets MOD to the module a file or header belongs to, or "".
module_of() {
    case $1 in
    agentlink/cli/*) MOD=agentlink/cli ;;
    agentlink/mcp/*) MOD=agentlink/mcp ;;
    agentlink/*/*) MOD= ;;
    agentlink/*) MOD=agentlink ;;
    */*) MOD=${1%%/*}; [ -n "${MAY_INCLUDE[$MOD]+x}" ] || MOD= ;;
    *) MOD= ;;
    esac
}

# normal PATH : sets NORM to PATH without "." and ".." parts.
normal() {
    local IFS=/ part out=()
    for part in $1; do
        case $part in
        ''|.) ;;
        ..) [ ${#out[@]} -gt 0 ] && unset 'out[${#out[@]}-1]' ;;
        *) out+=("$part") ;;
        esac
    done
    NORM="${out[*]}"
}

# in_list WORD LIST : WORD is one of the words of LIST.
in_list() { local w; for w in $2; do [ "$w" = "$1" ] && return 0; done; return 1; }

declare -A debt_seen=()
declare -A debt=()
while IFS= read -r d; do [ -z "$d" ] || debt[$d]=1; done <<<"$KNOWN_DEBTS"
is_debt() { # is_debt FILE INCLUDE
    [ -n "${debt["$1 -> $2"]+x}" ] || return 1
    debt_seen["$1 -> $2"]=1
}

# The files: every .c and .h except tests/, scripts/, build output, git's
# and npm's directories.
mapfile -t files < <(find . \( -path ./.git -o -path './build*' -o -path ./tests -o -path ./scripts \
    -o -name node_modules \) -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print |
    sed 's|^\./||' | LC_ALL=C sort)

nincl=0
edges=""        # header -> header, for the circle check
declare -A bad_file=()
for f in "${files[@]}"; do
    module_of "$f"
    [ -n "$MOD" ] && continue
    bad_file[$f]=1
    say "$f: not in a module the graph names (add its directory to MAY_INCLUDE in scripts/check-layers.sh and to doc/development.md)"
done
re='^([^:]*):[[:space:]]*#[[:space:]]*include[[:space:]]*(["<])([^">]*)[">]'
# One grep for every "#include" line: quoted (ours) and angled (libraries).
while IFS= read -r line; do
    [[ $line =~ $re ]] || continue
    f=${BASH_REMATCH[1]} kind=${BASH_REMATCH[2]} inc=${BASH_REMATCH[3]}
    [ -z "${bad_file[$f]+x}" ] || continue
    module_of "$f"; src=$MOD
    if [ "$kind" = "<" ]; then
        [ -n "${LIBS[$inc]+x}" ] || continue
        nincl=$((nincl + 1))
        in_list "$src" "${LIBS[$inc]}" && continue
        is_debt "$f" "<$inc>" && continue
        say "$f includes <$inc>: only ${LIBS[$inc]// /, } may use that library; $src must go through them"
        continue
    fi
    nincl=$((nincl + 1))
    # The preprocessor looks next to the including file first, then in -I.
    # (the top of the tree).
    dir=${f%/*}
    if [ -e "$dir/$inc" ]; then normal "$dir/$inc"; else normal "$inc"; fi
    tgt=$NORM
    case $f in *.h) case $tgt in *.h) edges+="$f $tgt"$'\n' ;; esac ;; esac
    module_of "$tgt"; dst=$MOD
    [ "$dst" = "$src" ] && continue
    if [ -z "$dst" ]; then
        is_debt "$f" "$inc" && continue
        say "$f includes \"$inc\": not a header of any module the graph names"
        continue
    fi
    if ! in_list "$dst" "${MAY_INCLUDE[$src]}"; then
        is_debt "$f" "$inc" && continue
        say "$f includes \"$inc\": $src may include only ${MAY_INCLUDE[$src]:-its own headers}${MAY_INCLUDE[$src]:+ (and its own headers)}, never $dst"
        continue
    fi
    if [ -z "${PUBLIC[$tgt]+x}" ]; then
        is_debt "$f" "$inc" && continue
        pub=""
        for h in "${!PUBLIC[@]}"; do module_of "$h"; [ "$MOD" = "$dst" ] && pub+=" $h"; done
        say "$f includes \"$inc\": that header is private to $dst (its public headers:${pub:- none})"
        continue
    fi
    if [ "${PUBLIC[$tgt]}" != "*" ] && ! in_list "$src" "${PUBLIC[$tgt]}"; then
        is_debt "$f" "$inc" && continue
        say "$f includes \"$inc\": that header is for ${PUBLIC[$tgt]// /, } only, not $src"
    fi
done < <([ ${#files[@]} -eq 0 ] || grep -HE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' "${files[@]}")

# Headers in a circle (tsort names the loop on stderr).
if [ -n "$edges" ]; then
    loop=$(tsort <<<"$edges" 2>&1 >/dev/null | grep -v 'input contains a loop' | sed 's/^tsort: //')
    [ -z "$loop" ] || say "headers include each other in a circle: $(echo $loop)"
fi
# The table itself must run one way.
tedges=""
for m in "${!MAY_INCLUDE[@]}"; do
    for d in ${MAY_INCLUDE[$m]}; do tedges+="$m $d"$'\n'; done
done
loop=$(tsort <<<"$tedges" 2>&1 >/dev/null | grep -v 'input contains a loop' | sed 's/^tsort: //')
[ -z "$loop" ] || say "MAY_INCLUDE has a circle: $(echo $loop)"

# Debts paid: their lines must go.
ndebts=0
while IFS= read -r d; do
    [ -n "$d" ] || continue
    ndebts=$((ndebts + 1))
    [ -n "${debt_seen[$d]+x}" ] ||
        say "known debt '$d' is no longer in the tree: delete its line from KNOWN_DEBTS in scripts/check-layers.sh and from doc/development.md"
done <<<"$KNOWN_DEBTS"

# ---- call circles, from the object files ----------------------------------
objdir=${OFFLOADFS_BUILD:-build}/obj
declare -A allow=() allow_seen=() checked=()
while IFS= read -r a; do [ -z "$a" ] || allow[$a]=1; done <<<"$CALL_ALLOWANCES"
nobj=0 ncalls=0
for m in $(printf '%s\n' "${!MAY_INCLUDE[@]}" | LC_ALL=C sort); do
    objs=()
    for o in "$objdir/$m"/*.o; do
        # Only objects of files the tree holds: a renamed file's old object
        # may still lie in the build directory.
        [ -f "$o" ] && [ -f "$m/$(basename "$o" .o).c" ] && objs+=("$o")
    done
    [ ${#objs[@]} -gt 0 ] || continue
    nobj=$((nobj + ${#objs[@]}))
    checked[$m]=1
    # One nm over the module: "FILE.o: SYMBOL TYPE ..." (-A -P); a symbol
    # defined in one file and undefined in another is a call (or a use of
    # its data) from the second to the first.
    kept=""
    while read -r a b; do
        ncalls=$((ncalls + 1))
        if [ -n "${allow["$a -> $b"]+x}" ]; then allow_seen["$a -> $b"]=1; continue; fi
        kept+="$a $b"$'\n'
    done < <(nm -A -P -g "${objs[@]}" 2>/dev/null | awk -v m="$m" '
        { f = $1; sub(/:$/, "", f); n = split(f, p, "/"); src = m "/" p[n]; sub(/\.o$/, ".c", src)
          if ($3 == "U") u[++k] = src " " $2; else if ($3 != "w" && $3 != "v") def[$2] = src }
        END { for (i = 1; i <= k; i++) { split(u[i], x, " "); d = def[x[2]]
                                         if (d != "" && d != x[1]) print x[1], d } }' | LC_ALL=C sort -u)
    [ -n "$kept" ] || continue
    loop=$(tsort <<<"$kept" 2>&1 >/dev/null | grep -v 'input contains a loop' | sed 's/^tsort: //')
    [ -z "$loop" ] || say "$m/: files call each other in a circle: $(echo $loop) (from the object files in $objdir/$m; a file may call only files that do not call it back, directly or around)"
done
nallow=0
while IFS= read -r a; do
    [ -n "$a" ] || continue
    nallow=$((nallow + 1))
    module_of "${a%% -> *}"
    [ -z "${checked[$MOD]+x}" ] || [ -n "${allow_seen[$a]+x}" ] ||
        say "allowed call '$a' is no longer made: delete its line from CALL_ALLOWANCES in scripts/check-layers.sh and from doc/development.md"
done <<<"$CALL_ALLOWANCES"
if [ "$nobj" -eq 0 ]; then
    calls="no object files in $objdir (build first): call circles not checked"
else
    calls="$nobj object files, $ncalls calls between files checked, $nallow allowed"
fi

if [ "$problems" -gt 0 ]; then
    echo "check-layers: $problems problem(s); the allowed directions are in doc/development.md"
    exit 1
fi
echo "check-layers: ${#files[@]} files, $nincl includes checked, $ndebts known debts; $calls: the graph runs one way"
