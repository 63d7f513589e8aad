#!/bin/bash
# test_cli.sh -- build/agentlink: every command, its output bytes, its
# messages and its exit codes (0 ok, 1 failure, 2 usage, 3 no key, 4 evicted).
. "$(dirname "$0")/../lib.sh"

# The CLI under test, through OFFLOADFS_WRAP (valgrind) when set by run.sh.
al() { $AGENTLINK "$@"; }
unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG XDG_STATE_HOME
export OFFLOADFS_STORE=$T_TMP/store
OUT=$T_TMP/out ERR=$T_TMP/err

out() { cat "$OUT"; }
err() { cat "$ERR"; }
# same DESC FILE1 FILE2 : ok when the two files hold the same bytes
same() { if cmp -s "$2" "$3"; then t_ok "$1"; else t_not_ok "$1"; cmp "$2" "$3" | head -2; fi; }
# has DESC HAYSTACK NEEDLE
has() { case $2 in *"$3"*) t_ok "$1" ;; *) t_not_ok "$1"; printf '  %q lacks %q\n' "$2" "$3" ;; esac; }
# json_get FILE EXPR : evaluates EXPR on the JSON in FILE (as j) with python
json_get() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(($2))" "$1"; }

# ---- global -------------------------------------------------------------
t_rc "--version exits 0" 0 al --version
t_eq "--version prints the version" "$(out)" "agentlink 0.1.0"
t_rc "--help exits 0" 0 al --help
has "--help names every command" "$(out)" "drop-referenced"
t_rc "no command exits 2" 2 al
t_eq "no command says so" "$(head -1 "$ERR")" "agentlink: no command given"
t_rc "unknown command exits 2" 2 al frobnicate
t_eq "unknown command is quoted" "$(head -1 "$ERR")" "agentlink: unknown command 'frobnicate'"
t_rc "unknown option exits 2" 2 al ls --frob
t_eq "unknown option is quoted" "$(head -1 "$ERR")" "agentlink: unknown option '--frob'"
t_rc "an option of another command exits 2" 2 al get k --call-id x
t_eq "it says which" "$(head -1 "$ERR")" "agentlink: get does not take --call-id"
t_rc "missing argument exits 2" 2 al get
t_eq "missing argument shows usage" "$(head -1 "$ERR")" "agentlink: usage: agentlink get KEY"
t_rc "option without value exits 2" 2 al put k --tool
t_eq "option without value is named" "$(head -1 "$ERR")" "agentlink: option '--tool' needs a value"

# ---- reads before any store exists ---------------------------------------
t_rc "get without a store exits 1" 1 al get k
t_eq "get without a store says so" "$(err)" "agentlink: no store at '$T_TMP/store' yet: 'agentlink init' or a first write (put, offload, import) creates it"
t_rc "ls without a store exits 1" 1 al ls
t_eq "ls without a store prints nothing" "$(out)" ""
t_rc "stats without a store exits 1" 1 al stats
t_check "reads created no store" test ! -e "$T_TMP/store"

# ---- init -----------------------------------------------------------------
t_rc "init exits 0" 0 al init
t_eq "init reports the limits" "$(out)" "store $T_TMP/store: max_total_bytes 1073741824, max_result_bytes 67108864"
t_eq "store directory is 0700" "$(stat -c %a "$T_TMP/store")" "700"
t_eq "store files are 0600" "$(stat -c %a "$T_TMP/store"/*.mdb | sort -u)" "600"
for bad in 12Q -5 0 1.5M 99999999999999999999G ''; do
    t_rc "init --max-total-bytes '$bad' exits 2" 2 al init --max-total-bytes "$bad"
done
t_eq "bad size message" "$(err)" "agentlink: --max-total-bytes '': expected a size: a whole number of bytes >= 1, optionally followed by K, M or G"
t_rc "max-result above max-total exits 2" 2 al init --max-total-bytes 1M --max-result-bytes 2M
t_eq "it says why" "$(err)" "agentlink: --max-result-bytes 2097152 is above --max-total-bytes 1048576: a result must fit in the store"
t_rc "max-result above the store's total exits 2" 2 al init --max-result-bytes 2G
t_rc "init --json exits 0" 0 al init --json
t_eq "refused limits changed nothing" "$(json_get "$OUT" 'j["max_total_bytes"], j["max_result_bytes"]')" "(1073741824, 67108864)"
t_rc "init with K and M exits 0" 0 al init --max-total-bytes 1M --max-result-bytes 64K
t_eq "init set both limits" "$(out)" "store $T_TMP/store: max_total_bytes 1048576, max_result_bytes 65536"

# ---- put / get -----------------------------------------------------------
printf 'hello\n' >"$T_TMP/hello"
t_rc "put exits 0" 0 al put call_1 --tool bash <"$T_TMP/hello"
t_eq "put prints the path under the mount" "$(out)" "/large_tool_results/call_1"
t_rc "get exits 0" 0 al get call_1
same "get returns the bytes" "$OUT" "$T_TMP/hello"
head -c 3000 /dev/urandom >"$T_TMP/bin"
printf '\0tail' >>"$T_TMP/bin"
t_rc "put --file exits 0" 0 al put bin --file "$T_TMP/bin"
t_rc "get of binary exits 0" 0 al get bin
same "binary bytes come back exactly" "$OUT" "$T_TMP/bin"
printf 'v2' | al put call_1 >/dev/null
t_rc "get after replace exits 0" 0 al get call_1
t_eq "a rewrite replaces the value" "$(out)" "v2"
t_rc "put --mount exits 0" 0 al put m1 --mount /mnt/r/ <"$T_TMP/hello"
t_eq "put --mount prints under it" "$(out)" "/mnt/r/m1"
OFFLOADFS_MOUNT=/env/mnt t_rc "put with OFFLOADFS_MOUNT exits 0" 0 al put m1 <"$T_TMP/hello"
t_eq "OFFLOADFS_MOUNT is used" "$(out)" "/env/mnt/m1"
OFFLOADFS_MOUNT=/env/mnt t_rc "--mount beats the environment" 0 al put m1 --mount /flag <"$T_TMP/hello"
t_eq "flag path" "$(out)" "/flag/m1"
t_rc "put --json exits 0" 0 al put j1 --tool grep --json <"$T_TMP/hello"
t_eq "put --json shape" "$(json_get "$OUT" 'j["key"], j["size"], j["tool"], j["truncated"], j["original_size"], j["path"]')" \
    "('j1', 6, 'grep', False, 6, '/large_tool_results/j1')"

t_rc "put of an invalid key exits 2" 2 al put a/b <"$T_TMP/hello"
t_eq "invalid key message names the rule" "$(err)" "agentlink: key 'a/b' contains '/'"
t_rc "put of a dot key exits 2" 2 al put .hidden <"$T_TMP/hello"
t_eq "dot key message" "$(err)" "agentlink: key '.hidden' starts with '.'"
t_rc "put of a control-char key exits 2" 2 al put "$(printf 'a\tb')" <"$T_TMP/hello"
t_eq "control chars are escaped in messages" "$(err)" "agentlink: key 'a\\x09b' contains a NUL or control character"
t_rc "put of a 256-byte key exits 2" 2 al put "$(printf 'k%.0s' $(seq 256))" <"$T_TMP/hello"
# Empty input stores a 0-byte entry, as the library and the binding do.
t_rc "put of empty stdin exits 0" 0 al put empty </dev/null
t_eq "and prints the path" "$(cat "$OUT")" "/large_tool_results/empty"
t_rc "get of the empty entry exits 0" 0 al get empty
t_eq "it is 0 bytes" "$(stat -c %s "$OUT")" "0"
t_rc "stat --json of the empty entry" 0 al --json stat empty
t_eq "size 0, not truncated" "$(json_get "$OUT" 'j["size"], j["original_size"], j["truncated"]')" "(0, 0, False)"
: >"$T_TMP/empty-file"
t_rc "put --file of an empty file exits 0" 0 al put empty2 --file "$T_TMP/empty-file"
t_rc "get of it exits 0" 0 al get empty2
t_eq "it is 0 bytes too" "$(stat -c %s "$OUT")" "0"
t_rc "rm of the empty entries exits 0" 0 al rm empty empty2
t_rc "put of a missing file exits 2" 2 al put f --file "$T_TMP/nope"
t_eq "missing file message" "$(err)" "agentlink: cannot read file '$T_TMP/nope': No such file or directory"
t_rc "put of a directory exits 2" 2 al put f --file "$T_TMP"
t_eq "directory message" "$(err)" "agentlink: file '$T_TMP' is a directory, expected a file to store"
t_rc "put of a bad tool name exits 2" 2 al put f --tool "$(printf 'x\ny')" <"$T_TMP/hello"
t_rc "get of a refused key exits 3" 3 al get f
t_eq "never-written message" "$(err)" "agentlink: no such key 'f' in namespace 'default'"
t_rc "get of an invalid key exits 2" 2 al get a/b

# ---- namespaces ---------------------------------------------------------
t_rc "put in another namespace exits 0" 0 al --namespace run2 put call_1 <"$T_TMP/bin"
t_rc "get in that namespace exits 0" 0 al get call_1 --namespace run2
same "namespaces hold their own value" "$OUT" "$T_TMP/bin"
OFFLOADFS_NAMESPACE=run2 t_rc "OFFLOADFS_NAMESPACE is used" 0 al get call_1
same "same value through the environment" "$OUT" "$T_TMP/bin"
t_rc "default namespace is untouched" 0 al get call_1
t_eq "default value" "$(out)" "v2"
t_rc "an invalid namespace exits 2" 2 al ls --namespace a/b
t_eq "invalid namespace message" "$(err)" "agentlink: namespace 'a/b' contains '/'"

# ---- cut over max_result_bytes (64K set above) -----------------------------
python3 -c "
import sys
for i in range(1, 5001): sys.stdout.write('build step %05d ok\n' % i)
sys.stdout.write('error: the real failure is here\n')" >"$T_TMP/log"
t_rc "put over max_result_bytes exits 0" 0 al put log --tool make --file "$T_TMP/log"
has "put says it was cut" "$(err)" "over max_result_bytes: kept its head and tail"
al get log >"$T_TMP/got"
t_check "stored value fits max_result_bytes" test "$(stat -c %s "$T_TMP/got")" -le 65536
t_eq "the tail is kept" "$(tail -1 "$T_TMP/got")" "error: the real failure is here"
t_eq "the head is kept" "$(head -1 "$T_TMP/got")" "build step 00001 ok"
t_eq "one gap marker" "$(grep -c '^\[\.\.\. offloadfs: [0-9]* bytes cut here \.\.\.\]$' "$T_TMP/got")" "1"
t_rc "stat --json of a cut entry exits 0" 0 al stat log --json
t_eq "stat records truncated and original size" \
    "$(json_get "$OUT" 'j["truncated"], j["original_size"], j["size"] <= 65536, j["tool"]')" \
    "(True, $(stat -c %s "$T_TMP/log"), True, 'make')"

# ---- ls / stat ------------------------------------------------------------
al init --max-total-bytes 1G --max-result-bytes 64M >/dev/null
t_rc "ls exits 0" 0 al ls
t_eq "ls lines: key, size, tool" "$(out)" "$(printf 'bin\t3005\t\ncall_1\t2\t\nj1\t6\tgrep\nlog\t%s\tmake\nm1\t6\t' "$(stat -c %s "$T_TMP/got")")"
t_rc "ls --json exits 0" 0 al ls --json
t_eq "ls --json is an array of entries" \
    "$(json_get "$OUT" '[(e["key"], e["size"], e["tool"]) for e in j][:3], sorted(j[0])')" \
    "([('bin', 3005, None), ('call_1', 2, None), ('j1', 6, 'grep')], ['created', 'key', 'original_size', 'size', 'tool', 'truncated', 'where'])"
t_check "created is RFC 3339 UTC" python3 -c 'import json,re,sys; j=json.load(open(sys.argv[1])); sys.exit(not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", j[0]["created"]))' "$OUT"
t_rc "stat exits 0" 0 al stat j1
t_eq "stat lines" "$(grep -v '^created' "$OUT")" "$(printf 'key: j1\nstate: live\nsize: 6\ntool: grep\noriginal_size: 6\ntruncated: 0\nwhere: here')"
t_rc "stat of a never-written key exits 3" 3 al stat nope
t_eq "stat never-written message" "$(err)" "agentlink: no such key 'nope' in namespace 'default'"

# ---- rm / evicted ---------------------------------------------------------
t_rc "rm exits 0" 0 al rm j1 m1
t_eq "rm prints nothing" "$(out)" ""
t_rc "get of a removed key exits 4" 4 al get j1
has "removed message says so" "$(err)" "agentlink: key 'j1' was removed at "
has "removed message says what to do" "$(err)" "run the tool again"
t_rc "stat --json of a removed key exits 4" 4 al stat j1 --json
t_eq "evicted stat shape" "$(json_get "$OUT" 'sorted(j), j["state"], j["reason"], j["key"]')" \
    "(['evicted_at', 'key', 'reason', 'state'], 'evicted', 'removed', 'j1')"
t_rc "rm of a removed key exits 4" 4 al rm j1
t_rc "rm of a never-written key exits 3" 3 al rm call_1 nope
t_rc "rm went on past the missing key" 4 al get call_1
t_rc "rm with an invalid key exits 2" 2 al rm bin a/b
t_rc "and removes nothing" 0 al get bin

# eviction to keep the bound: lowering it evicts at once (random bytes, which
# compression keeps raw, so that each occupies its 300,000 bytes)
head -c 300000 /dev/urandom >"$T_TMP/300k"
for k in e1 e2 e3; do al put $k --file "$T_TMP/300k" >/dev/null; done
t_rc "lowering the bound exits 0" 0 al init --max-total-bytes 700K
has "init says how many it evicted" "$(out)" "evicted "
t_rc "the oldest is evicted: exit 4" 4 al stat e1
t_eq "evicted stat lines" "$(sed -n '2p;4p' "$OUT")" "$(printf 'state: evicted\nreason: evicted')"
has "evicted message says when and why" "$(err)" "agentlink: key 'e1' was evicted at "
has "evicted message names the bound" "$(err)" "to keep the store under max_total_bytes"
t_rc "the newest is kept" 0 al stat e3
t_rc "stats --json exits 0" 0 al stats --json
t_eq "stats --json fields" \
    "$(json_get "$OUT" 'j["max_total_bytes"], j["max_result_bytes"], j["evictions"] >= 1, j["bytes"] <= 716800, j["entries"] >= 1')" \
    "(716800, 716800, True, True, True)"
t_rc "stats exits 0" 0 al stats
has "stats lines" "$(out)" "max_total_bytes: 716800"
al init --max-total-bytes 1G --max-result-bytes 64M >/dev/null

# ---- key -------------------------------------------------------------------
t_rc "key exits 0" 0 al key call_abc
t_eq "a valid id is its own key" "$(out)" "call_abc"
t_rc "key of a hostile id exits 0" 0 al key '../../etc/passwd'
t_eq "hostile id gets a prefix and a hash" "$(out)" "_.._etc_passwd~$(printf %s '../../etc/passwd' | sha256sum | cut -c1-16)"
long=$(printf 'x%.0s' $(seq 1500))
t_rc "key of a 1.5 KB id exits 0" 0 al key "$long"
t_eq "long id is clipped and hashed" "$(out)" "$(printf 'x%.0s' $(seq 100))~$(printf %s "$long" | sha256sum | cut -c1-16)"
t_rc "key without an id exits 2" 2 al key

# ---- offload -----------------------------------------------------------------
printf 'small result, no newline \xff' >"$T_TMP/small"
t_rc "offload of a small result exits 0" 0 al offload --tool bash --call-id c1 <"$T_TMP/small"
same "a kept result is printed unchanged" "$OUT" "$T_TMP/small"
t_rc "it was not stored" 3 al get c1
t_rc "offload of an empty result exits 0" 0 al offload --tool bash --call-id c0 </dev/null
t_eq "an empty result stays empty" "$(stat -c %s "$OUT")" "0"
t_rc "offload of a 100 KB log exits 0" 0 al offload --tool bash --call-id 'toolu/01 x' <"$T_TMP/log"
key=$(al key 'toolu/01 x')
has "pointer names the path" "$(out)" "/large_tool_results/$key"
has "pointer names the size" "$(out)" "Size: $(stat -c %s "$T_TMP/log") bytes"
has "pointer previews the last line" "$(out)" "error: the real failure is here"
has "pointer tells how to grep" "$(out)" "grep -n 'PATTERN' /large_tool_results/$key"
has "pointer explains eviction" "$(out)" '"No data available"'
t_check "pointer is a few KB" test "$(stat -c %s "$OUT")" -lt 4096
t_rc "offloaded result is stored" 0 al get "$key"
same "stored bytes equal the input" "$OUT" "$T_TMP/log"
t_rc "offload without --tool exits 2" 2 al offload --call-id x <"$T_TMP/small"
t_eq "missing --tool message" "$(head -1 "$ERR")" "agentlink: offload needs --tool NAME"
t_rc "offload without --call-id exits 2" 2 al offload --tool t <"$T_TMP/small"

cat >"$T_TMP/policy.json" <<'EOF'
{
  "mount": "/cfg/mnt",
  "namespace": "cfgns",
  "preview": {"head_lines": 1, "tail_lines": 1, "max_line_chars": 10},
  "rules": [
    {"tools": ["*"], "offload": {"over_bytes": 100000000}},
    {"tools": ["web_search"], "offload": "always"},
    {"tools": ["get_time"], "offload": "never"}
  ]
}
EOF
t_rc "offload with --config exits 0" 0 al offload --tool web_search --call-id w1 --config "$T_TMP/policy.json" <"$T_TMP/small"
has "config mount is used" "$(out)" "/cfg/mnt/w1"
has "config preview is used" "$(out)" "1  small resu [..."
t_rc "config namespace is used" 0 al get w1 --namespace cfgns
same "stored in the config namespace" "$OUT" "$T_TMP/small"
OFFLOADFS_CONFIG=$T_TMP/policy.json t_rc "OFFLOADFS_CONFIG is used" 0 al offload --tool get_time --call-id g1 <"$T_TMP/log"
same "never keeps even a 100 KB log" "$OUT" "$T_TMP/log"
OFFLOADFS_NAMESPACE=envns t_rc "env beats config" 0 al offload --tool web_search --call-id w2 --config "$T_TMP/policy.json" <"$T_TMP/small"
t_rc "stored in the env namespace" 0 al get w2 --namespace envns
t_rc "offload --json exits 0" 0 al offload --json --tool web_search --call-id w3 --mount /m --config "$T_TMP/policy.json" <"$T_TMP/small"
t_eq "offload --json shape" "$(json_get "$OUT" 'j["offloaded"], j["key"], j["path"], j["text"].startswith("[offloadfs]")')" \
    "(True, 'w3', '/m/w3', True)"

echo '{"rules": [{"tools": ["a"], "offload": {"over_chars": "4000"}}]}' >"$T_TMP/bad.json"
rm -rf "$T_TMP/fresh"
t_rc "a wrong type in the config exits 2" 2 al --store "$T_TMP/fresh" offload --tool a --call-id x --config "$T_TMP/bad.json" <"$T_TMP/log"
t_eq "config message names file, field, expectation" "$(err)" \
    "agentlink: config '$T_TMP/bad.json': field 'rules[0].offload.over_chars': expected a non-negative integer, got '4000'; nothing was written"
t_check "nothing was written" test ! -e "$T_TMP/fresh"
echo '{"rules": [' >"$T_TMP/broken.json"
t_rc "a malformed config exits 2" 2 al offload --tool a --call-id x --config "$T_TMP/broken.json" <"$T_TMP/small"
has "malformed message" "$(err)" "config '$T_TMP/broken.json': not valid JSON"
t_rc "a missing config exits 2" 2 al offload --tool a --call-id x --config "$T_TMP/none.json" <"$T_TMP/small"
has "missing config message" "$(err)" "No such file or directory"
echo '{"mount": "/x", "colour": 1}' >"$T_TMP/unknown.json"
t_rc "an unknown field exits 2" 2 al offload --tool a --call-id x --config "$T_TMP/unknown.json" <"$T_TMP/small"
has "unknown field message" "$(err)" "field 'colour': expected one of \"mount\", \"namespace\", \"preview\", \"rules\", got an unknown field"

# ---- drop-referenced ----------------------------------------------------------
printf 'x' | al put d1 >/dev/null
printf 'x' | al put d10 >/dev/null
printf 'x' | al put d2 >/dev/null
t_rc "drop-referenced exits 0" 0 al drop-referenced <<<"Summary: read /large_tool_results/d10 and /large_tool_results/d2, and /elsewhere/d1."
t_eq "it prints the paths it dropped" "$(out)" "$(printf '/large_tool_results/d10\n/large_tool_results/d2')"
t_rc "a dropped key reads as removed" 4 al get d10
t_rc "an unmentioned key stays" 0 al get d1
t_rc "drop-referenced --json exits 0" 0 al drop-referenced --json <<<"nothing here"
t_eq "drop-referenced --json lists keys" "$(out)" "[]"

# ---- unusable stores ------------------------------------------------------------
t_rc "a file as store exits 1" 1 al --store "$T_TMP/hello" ls
t_eq "file-as-store message" "$(err)" "agentlink: cannot open store '$T_TMP/hello': Not a directory"
mkdir -p "$T_TMP/junk" && head -c 8192 /dev/urandom >"$T_TMP/junk/data.mdb"
t_rc "a damaged store exits 1" 1 al --store "$T_TMP/junk" ls
has "damaged store message" "$(err)" "agentlink: cannot open store '$T_TMP/junk': "
t_rc "--store '' exits 2" 2 al --store '' ls
if command -v mdb_dump >/dev/null && command -v mdb_load >/dev/null; then
    al --store "$T_TMP/old" init >/dev/null
    # The state record: magic (8 bytes) then the format, little-endian.
    mdb_dump -s meta "$T_TMP/old" >"$T_TMP/meta.dump"
    python3 - "$T_TMP/meta.dump" <<'EOF'
import sys
lines = open(sys.argv[1]).read().split("\n")
for i, l in enumerate(lines):
    if l.startswith(" ") and i > 0 and lines[i - 1].strip() == "7374617465":  # "state"
        lines[i] = l[:17] + "63" + l[19:]  # format 1 -> 99
open(sys.argv[1], "w").write("\n".join(lines))
EOF
    mdb_load -s meta "$T_TMP/old" <"$T_TMP/meta.dump" 2>/dev/null
    t_rc "a store of another version exits 1" 1 al --store "$T_TMP/old" ls
    t_eq "another-version message" "$(err)" "agentlink: cannot open store '$T_TMP/old': store was made by another format version"
    t_rc "writing it exits 1 too" 1 al --store "$T_TMP/old" put k <"$T_TMP/hello"
else
    t_skip "mdb_dump/mdb_load missing (lmdb-utils): another-version store not tested"
fi
if [ "$(id -u)" -ne 0 ]; then
    mkdir -p "$T_TMP/locked" && al --store "$T_TMP/locked/s" init >/dev/null && chmod 000 "$T_TMP/locked/s"
    t_rc "an unreadable store exits 1" 1 al --store "$T_TMP/locked/s" ls
    has "unreadable message" "$(err)" "Permission denied"
    chmod 700 "$T_TMP/locked/s"
else
    t_skip "running as root: permissions cannot make a store unreadable"
fi

t_done
