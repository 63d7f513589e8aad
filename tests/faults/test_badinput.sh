#!/bin/bash
# test_badinput.sh -- doc/faults.md, case 8: bad keys, namespaces, tool names,
# configs, sizes and options. Each is refused with exit 2 and a message
# that names the rule (or the file, field and expectation), and nothing is
# written: a store that did not exist is not created, one that did keeps
# its generation. What tests/cli/test_commands.sh covers already is not
# repeated here.
. "$(dirname "$0")/../lib.sh"

# Under make test-valgrind (OFFLOADFS_WRAP set) one call in four runs under
# memcheck and the others run the plain binary: the refusals share their
# code paths, and memcheck of every one of them took two minutes alone.
n_al=0
al() {
    n_al=$((n_al + 1))
    if [ -n "${OFFLOADFS_WRAP:-}" ] && [ $((n_al % 4)) -ne 1 ]; then "$T_BUILD/agentlink" "$@"
    else $AGENTLINK "$@"; fi
}
unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG OFFLOADFS_STORE XDG_STATE_HOME
CTL=$T_BUILD/tools/storectl
S=$T_TMP/store           # an existing store
NEW=$T_TMP/never-made    # a store no refused call may create
al --store "$S" init >/dev/null || { t_not_ok "init"; t_done; }
printf 'keep\n' | al --store "$S" put keep >/dev/null
gen0=$("$CTL" "$S" gen)
printf 'a result\n' >"$T_TMP/in"
err1() { head -1 "$T_TMP/err"; }
untouched() { # untouched DESC : the existing store's generation did not move, NEW was not made
    local g; g=$("$CTL" "$S" gen)
    if [ "$g" = "$gen0" ] && [ ! -e "$NEW" ]; then t_ok "$1: nothing written"
    else t_not_ok "$1: nothing written (generation $gen0 -> $g, $NEW $( [ -e "$NEW" ] && echo exists))"; fi
}

# ---- keys -------------------------------------------------------------------------
k255=$(printf 'k%.0s' {1..255}); k256=${k255}k
k511=$(printf 'k%.0s' {1..511}); k512=${k511}k
e85=$(printf '\xe2\x82\xac%.0s' {1..85})   # 85 x U+20AC: 255 bytes
e86=${e85}$(printf '\xe2\x82\xac')           # 258 bytes
declare -A rule=(
    [empty]="is empty" [dot]="starts with '.'" [dotdot]="starts with '.'"
    [slash]="contains '/'" [abs]="contains '/'" [dotslash]="contains '/'"
    [soh]="contains a NUL or control character" [us]="contains a NUL or control character"
    [del]="contains a NUL or control character" [nl]="contains a NUL or control character"
    [esc]="contains a NUL or control character"
    [ff]="is not valid UTF-8" [trunc]="is not valid UTF-8" [overlong]="is not valid UTF-8"
    [surrogate]="is not valid UTF-8" [beyond]="is not valid UTF-8" [latin1]="is not valid UTF-8"
    [k256]="is longer than 255 bytes" [k511]="is longer than 255 bytes"
    [k512]="is longer than 255 bytes" [e86]="is longer than 255 bytes"
)
declare -A key=(
    [empty]="" [dot]="." [dotdot]=".." [slash]="/" [abs]="/etc" [dotslash]="./x"
    [soh]=$'a\x01b' [us]=$'a\x1fb' [del]=$'a\x7fb' [nl]=$'a\nb' [esc]=$'\e[31mred'
    [ff]=$'a\xffb' [trunc]=$'a\xe2\x82' [overlong]=$'\xc0\xaf' [surrogate]=$'\xed\xa0\x80'
    [beyond]=$'\xf4\x90\x80\x80' [latin1]=$'caf\xe9'
    [k256]=$k256 [k511]=$k511 [k512]=$k512 [e86]=$e86
)
for n in "${!key[@]}"; do
    k=${key[$n]}
    t_rc "put of a bad key ($n) exits 2" 2 al --store "$NEW" put "$k" <"$T_TMP/in"
    case $(err1) in
        "agentlink: key '"*"' ${rule[$n]}") t_ok "put ($n): message names the rule: ${rule[$n]}" ;;
        *) t_not_ok "put ($n): message names the rule"; echo "  got: $(err1)" ;;
    esac
    t_rc "put of a bad key ($n) into a store exits 2" 2 al --store "$S" put "$k" <"$T_TMP/in"
done
for cmd in get stat rm; do
    for n in empty dotdot slash nl ff k256; do
        t_rc "$cmd of a bad key ($n) exits 2" 2 al --store "$S" $cmd "${key[$n]}"
    done
done
t_check "messages escape control bytes and invalid UTF-8" bash -c \
    "'$T_BUILD/agentlink' --store '$S' get \$'a\\x1b[2Jb\\xff' 2>&1 | grep -qF \"key 'a\\\\x1b[2Jb\\\\xff'\""
untouched "bad keys"
# The edges that are fine.
t_rc "a 255-byte key is accepted" 0 al --store "$S" put "$k255" <"$T_TMP/in"
t_rc "a 255-byte UTF-8 key (85 x 3 bytes) is accepted" 0 al --store "$S" put "$e85" <"$T_TMP/in"
t_rc "it reads back" 0 al --store "$S" get "$e85"
t_eq "byte for byte" "$(cat "$T_TMP/out")" "a result"
t_rc "a key with a dot inside or at the end is accepted" 0 al --store "$S" put "a.b." <"$T_TMP/in"
t_rc "a key with spaces and a tilde is accepted" 0 al --store "$S" put "a b~c" <"$T_TMP/in"
gen0=$("$CTL" "$S" gen)

# ---- NUL inside a key, through the Python binding (argv cannot carry one) ---------
if [ -z "${OFFLOADFS_VALGRIND:-}" ]; then
    # An ASan build of the library needs its runtime preloaded into python.
    asan=$(ldd "$T_BUILD/libagentlink.so" 2>/dev/null | awk '/libasan/ {print $3}')
    py=$(AGENTLINK_LIB=$T_BUILD/libagentlink.so LD_PRELOAD=${asan:-} ASAN_OPTIONS=detect_leaks=0 \
         python3 - "$S" "$T_TOP/agentlink/python" <<'EOF' 2>&1
import sys
sys.path.insert(0, sys.argv[2])
import agentlink
s = agentlink.ToolResultStore(store=sys.argv[1])
out = []
# Other invalid keys ('.', 256 bytes, 'a/b') are mapped to derived keys: test_haystack.py.
for k in ["a\0b", b"a\0b", "\0", "keep\0tail", "", "/", "../x"]:
    try:
        s.write(key=k, content="x")
        out.append("written %r" % (k,))
    except ValueError as e:
        out.append(str(e))
for ref in ["keep\0", "/large_tool_results/keep\0x"]:
    try:
        s.read(ref)
        out.append("read %r" % (ref,))
    except ValueError as e:
        out.append(str(e))
try:
    agentlink.ToolResultStore(store=sys.argv[1], namespace="n\0s")
    out.append("opened")
except ValueError as e:
    out.append(str(e))
print("\n".join(out))
EOF
)
    t_eq "Python binding: NUL and other bad keys raise ValueError naming the rule" "$py" \
"key 'a\\x00b' contains a NUL or control character
key b'a\\x00b' contains a NUL or control character
key '\\x00' contains a NUL or control character
key 'keep\\x00tail' contains a NUL or control character
key '' is empty
key '/' would escape the store: absolute keys and '..' components are refused
key '../x' would escape the store: absolute keys and '..' components are refused
reference 'keep\\x00' contains a NUL or control character
reference '/large_tool_results/keep\\x00x' contains a NUL or control character
namespace 'n\\x00s' contains a NUL or control character"
    t_rc "the key cut at the NUL was not written" 3 al --store "$S" get a
    t_rc "'keep' kept its value" 0 al --store "$S" get keep
    t_eq "'keep' bytes" "$(cat "$T_TMP/out")" "keep"
    untouched "NUL keys through Python"
else
    t_skip "Python binding under valgrind: the library runs under memcheck through the CLI"
fi

# ---- namespaces -------------------------------------------------------------------
for n in empty dot slash soh ff k256; do
    t_rc "--namespace bad ($n) exits 2" 2 al --store "$NEW" --namespace "${key[$n]}" put k <"$T_TMP/in"
    case $(err1) in
        "agentlink: namespace '"*"' ${rule[$n]}") t_ok "--namespace ($n): message names the rule" ;;
        *) t_not_ok "--namespace ($n): message names the rule"; echo "  got: $(err1)" ;;
    esac
done
OFFLOADFS_NAMESPACE=a/b t_rc "OFFLOADFS_NAMESPACE bad exits 2" 2 al --store "$NEW" put k <"$T_TMP/in"
t_eq "it names the rule" "$(err1)" "agentlink: namespace 'a/b' contains '/'"
untouched "bad namespaces"

# ---- tool names ---------------------------------------------------------------------
for t in "" "$k256" $'a\tb' $'a\xffb'; do
    t_rc "put --tool $(printf %q "$t") exits 2" 2 al --store "$NEW" put k --tool "$t" <"$T_TMP/in"
    t_rc "offload --tool $(printf %q "$t") exits 2" 2 al --store "$NEW" offload --tool "$t" --call-id c <"$T_TMP/in"
done
t_eq "tool message" "$(err1)" "agentlink: tool 'a\\xffb': tool name must be 1 to 255 bytes of UTF-8 without control characters"
untouched "bad tool names"

# ---- sizes ----------------------------------------------------------------------------
for sz in 1KB 1T ' 1' '1 ' 0x10 +1 -0 1e3 0K 18446744073709551616 17179869184G 1.0 K; do
    t_rc "init --max-total-bytes '$sz' exits 2" 2 al --store "$NEW" init --max-total-bytes "$sz"
    t_rc "init --max-result-bytes '$sz' exits 2" 2 al --store "$S" init --max-result-bytes "$sz"
done
t_eq "size message" "$(err1)" "agentlink: --max-result-bytes 'K': expected a size: a whole number of bytes >= 1, optionally followed by K, M or G"
t_rc "a bound too large for any map exits 2" 2 al --store "$S" init --max-total-bytes 16777216G
t_rc "max-result above max-total on one line exits 2" 2 al --store "$NEW" init --max-total-bytes 1K --max-result-bytes 2K
untouched "bad sizes"
t_rc "lower-case suffixes are sizes too" 0 al --store "$T_TMP/lc" init --max-total-bytes 2g --max-result-bytes 1m
t_eq "2g and 1m" "$(cat "$T_TMP/out")" "store $T_TMP/lc: max_total_bytes 2147483648, max_result_bytes 1048576"

# ---- options ------------------------------------------------------------------------------
t_rc "--json=1 exits 2" 2 al --store "$S" ls --json=1
t_eq "it says the option takes no value" "$(err1)" "agentlink: option '--json=1' takes no value"
t_rc "--mount relative exits 2" 2 al --store "$NEW" put k --mount rel <"$T_TMP/in"
t_eq "relative mount message" "$(err1)" "agentlink: mount 'rel' is not an absolute path"
t_rc "--mount '' exits 2" 2 al --store "$NEW" put k --mount '' <"$T_TMP/in"
OFFLOADFS_MOUNT=rel t_rc "OFFLOADFS_MOUNT relative exits 2" 2 al --store "$NEW" put k <"$T_TMP/in"
t_rc "--store '' exits 2" 2 al --store '' put k <"$T_TMP/in"
t_rc "two keys to get exits 2" 2 al --store "$S" get a b
t_rc "put without a key exits 2" 2 al --store "$S" put <"$T_TMP/in"
t_rc "--file of a missing file exits 2" 2 al --store "$NEW" put k --file "$T_TMP/none"
t_rc "init with --tool exits 2" 2 al --store "$NEW" init --tool x
t_rc "a stray short option exits 2" 2 al --store "$NEW" -q put k <"$T_TMP/in"
untouched "bad options"

# ---- configs: refused with the file, the field, what was expected; nothing written ------
cfg() { printf '%s' "$2" >"$T_TMP/$1.json"; }
declare -A want=(
    [mount_num]="field 'mount': expected an absolute path"
    [mount_rel]="field 'mount': expected an absolute path"
    [ns_num]="field 'namespace': expected a namespace name"
    [ns_empty]="field 'namespace': expected a valid namespace, but it is empty"
    [ns_slash]="field 'namespace': expected a valid namespace, but it contains '/'"
    [ns_nul]="expected no NUL character"
    [raw_nul]="expected no NUL character"
    [pv_array]="field 'preview': expected an object"
    [pv_neg]="field 'preview.head_lines': expected an integer from 0 to 1000"
    [pv_frac]="field 'preview.tail_lines': expected an integer from 0 to 1000"
    [pv_big]="field 'preview.head_lines': expected an integer from 0 to 1000"
    [pv_zero]="field 'preview.max_line_chars': expected an integer from 1 to 100000"
    [pv_unknown]="field 'preview.colour': expected one of"
    [rules_obj]="field 'rules': expected an array of rules"
    [rule_num]="field 'rules[0]': expected an object"
    [tools_empty]="field 'rules[0].tools': expected a non-empty array"
    [tools_missing]="field 'rules[0].tools': expected a list of tool names"
    [tool_empty]="field 'rules[0].tools[0]': expected a tool name"
    [tool_ctrl]="field 'rules[0].tools[0]': expected a tool name"
    [tool_dup]="field 'rules[1].tools[0]': expected each tool name in one rule only"
    [off_missing]="field 'rules[0].offload': expected \"always\", \"never\""
    [off_word]="field 'rules[0].offload': expected \"always\", \"never\""
    [off_two]="field 'rules[0].offload': expected \"always\", \"never\""
    [off_neg]="field 'rules[0].offload.over_bytes': expected a non-negative integer"
    [off_huge]="field 'rules[0].offload.over_chars': expected a non-negative integer"
    [off_unknown]="field 'rules[0].offload.over_lines': expected one of"
    [top_array]="expected a JSON object at the top, got an array"
    [top_dup]="field 'mount': expected each field once"
    [trailing]="not valid JSON (text after the top-level object)"
    [empty]="expected a JSON object, got an empty file"
    [spaces]="not valid JSON"
)
cfg mount_num '{"mount": 1}'
cfg mount_rel '{"mount": "large_tool_results"}'
cfg ns_num '{"namespace": 7}'
cfg ns_empty '{"namespace": ""}'
cfg ns_slash '{"namespace": "a/b"}'
cfg ns_nul '{"namespace": "a\u0000b"}'
printf '{"namespace": "a\0b"}' >"$T_TMP/raw_nul.json"
cfg pv_array '{"preview": []}'
cfg pv_neg '{"preview": {"head_lines": -1}}'
cfg pv_frac '{"preview": {"tail_lines": 1.5}}'
cfg pv_big '{"preview": {"head_lines": 1001}}'
cfg pv_zero '{"preview": {"max_line_chars": 0}}'
cfg pv_unknown '{"preview": {"colour": 1}}'
cfg rules_obj '{"rules": {}}'
cfg rule_num '{"rules": [1]}'
cfg tools_empty '{"rules": [{"tools": [], "offload": "always"}]}'
cfg tools_missing '{"rules": [{"offload": "always"}]}'
cfg tool_empty '{"rules": [{"tools": [""], "offload": "always"}]}'
cfg tool_ctrl '{"rules": [{"tools": ["a\u0001"], "offload": "always"}]}'
cfg tool_dup '{"rules": [{"tools": ["a"], "offload": "always"}, {"tools": ["a"], "offload": "never"}]}'
cfg off_missing '{"rules": [{"tools": ["a"]}]}'
cfg off_word '{"rules": [{"tools": ["a"], "offload": "sometimes"}]}'
cfg off_two '{"rules": [{"tools": ["a"], "offload": {"over_bytes": 1, "over_chars": 2}}]}'
cfg off_neg '{"rules": [{"tools": ["a"], "offload": {"over_bytes": -1}}]}'
cfg off_huge '{"rules": [{"tools": ["a"], "offload": {"over_chars": 1e300}}]}'
cfg off_unknown '{"rules": [{"tools": ["a"], "offload": {"over_lines": 3}}]}'
cfg top_array '[]'
cfg top_dup '{"mount": "/a", "mount": "/b"}'
cfg trailing '{} {}'
cfg empty ''
cfg spaces '   '
for c in "${!want[@]}"; do
    t_rc "config $c: offload exits 2" 2 al --store "$NEW" offload --tool a --call-id x --config "$T_TMP/$c.json" <"$T_TMP/in"
    case $(err1) in
        "agentlink: config '$T_TMP/$c.json'"*"${want[$c]}"*"; nothing was written") t_ok "config $c: names the file and ${want[$c]}" ;;
        *) t_not_ok "config $c: names the file and ${want[$c]}"; echo "  got: $(err1)" ;;
    esac
done
OFFLOADFS_CONFIG=$T_TMP/mount_num.json t_rc "a bad config through OFFLOADFS_CONFIG exits 2" 2 \
    al --store "$NEW" put k <"$T_TMP/in"
t_rc "a directory as config exits 2" 2 al --store "$NEW" offload --tool a --call-id x --config "$T_TMP" <"$T_TMP/in"
head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' ' ' >"$T_TMP/huge.json"
t_rc "a config over 1 MiB exits 2" 2 al --store "$NEW" offload --tool a --call-id x --config "$T_TMP/huge.json" <"$T_TMP/in"
t_eq "it says so" "$(err1)" "agentlink: config '$T_TMP/huge.json': expected a policy file of at most 1 MiB; nothing was written"
untouched "bad configs"

# ---- offloadfs: bad options and names at start, no mount left ---------------------------------
if [ "$(id -u)" -eq 0 ] && [ -c /dev/fuse ]; then
    M=$T_TMP/mnt; mkdir -p "$M"
    fsbad() { # fsbad DESC GREP ARGS...
        local d=$1 pat=$2 rc; shift 2
        timeout -k 1 10 $OFFLOADFS -f "$@" "$S" "$M" >"$T_TMP/out" 2>"$T_TMP/err"; rc=$?
        if [ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] && grep -qF -- "$pat" "$T_TMP/err" && ! mountpoint -q "$M"; then
            t_ok "offloadfs $d: exit $rc, says '$pat', no mount"
        else
            t_not_ok "offloadfs $d"; echo "  exit $rc: $(head -c 300 "$T_TMP/err")"
            mountpoint -q "$M" && fusermount3 -u "$M"
        fi
    }
    fsbad "-o namespace= (empty)" "namespace '': is empty" -o namespace=
    fsbad "-o namespace without a value" "namespace" -o namespace
    fsbad "-o namespace=.x" "namespace '.x'" -o namespace=.x
    fsbad "-o namespace of 256 bytes" "is longer than 255 bytes" -o "namespace=$k256"
    fsbad "-o namespace with invalid UTF-8" "is not valid UTF-8" -o $'namespace=a\xffb'
    fsbad "-o namespace with a control byte" "NUL or control character" -o $'namespace=a\x01b'
    fsbad "-o max_threads=abc" "max_threads=abc" -o max_threads=abc
    fsbad "-o ro=1" "ro=1" -o ro=1
    fsbad "-x" "-x" -x
    untouched "offloadfs bad options"
else
    t_skip "offloadfs option checks need root and /dev/fuse"
fi
t_done
