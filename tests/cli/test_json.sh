#!/bin/bash
# test_cli_json.sh -- --json output is valid UTF-8 JSON that carries every
# byte of a result exactly: NUL bytes, bytes that are not UTF-8.
. "$(dirname "$0")/../lib.sh"

al() { $AGENTLINK "$@"; }
unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG XDG_STATE_HOME
export OFFLOADFS_STORE=$T_TMP/store
OUT=$T_TMP/out

# decode FILE INPUT : the result the JSON in FILE carries, compared with the
# bytes of INPUT by a strict decoder (UTF-8 'strict', json.loads); prints
# "encoding offloaded" when they are equal, the difference otherwise.
decode() {
    python3 - "$1" "$2" <<'PY'
import base64, json, sys
raw = open(sys.argv[1], "rb").read()
try:
    j = json.loads(raw.decode("utf-8", "strict"))
except Exception as e:
    print("not UTF-8 JSON: %s" % e); sys.exit(0)
want = open(sys.argv[2], "rb").read()
enc = j.get("encoding")
if enc == "utf-8":
    got = j["text"].encode("utf-8", "strict")
elif enc == "base64":
    got = base64.b64decode(j["text"], validate=True)
else:
    print("encoding %r" % enc); sys.exit(0)
print(enc, j["offloaded"] if got == want else "differs: %r != %r" % (got[:40], want[:40]))
PY
}

printf 'line1\0line2' >"$T_TMP/nul"
t_rc "offload --json of a kept result with a NUL exits 0" 0 al --json offload --tool t --call-id c1 <"$T_TMP/nul"
t_eq "the NUL and what follows it are carried" "$(decode "$OUT" "$T_TMP/nul")" "utf-8 False"
t_eq "as a JSON escape" "$(grep -c 'line1\\u0000line2' "$OUT")" "1"

printf 'caf\xe9 au lait\n' >"$T_TMP/latin1"
t_rc "offload --json of a result with 0xE9 exits 0" 0 al --json offload --tool t --call-id c2 <"$T_TMP/latin1"
t_eq "it is valid UTF-8 JSON carrying the exact bytes, in base64" "$(decode "$OUT" "$T_TMP/latin1")" "base64 False"

printf 'caf\xc3\xa9 \xe2\x82\xac "quoted" back\\slash\ttab\r\n\x01\x1f\x7f' >"$T_TMP/utf8"
t_rc "offload --json of UTF-8 with controls exits 0" 0 al --json offload --tool t --call-id c3 <"$T_TMP/utf8"
t_eq "UTF-8 text with quotes and controls comes back exactly" "$(decode "$OUT" "$T_TMP/utf8")" "utf-8 False"
t_check "non-ASCII characters stay readable, not escaped" grep -q 'café €' "$OUT"

# An offloaded result: "text" is the pointer (always UTF-8); the stored
# bytes are exact.
{ printf 'head\0\xe9\n'; head -c 40000 /dev/zero | tr '\0' x; printf '\ntail \xe9\0end\n'; } >"$T_TMP/big"
t_rc "offload --json of a large result with NUL and 0xE9 exits 0" 0 al --json offload --tool t --call-id c4 <"$T_TMP/big"
t_check "the pointer is valid UTF-8 JSON" python3 -c 'import json,sys; j=json.loads(open(sys.argv[1],"rb").read().decode("utf-8","strict")); sys.exit(not (j["offloaded"] and j["encoding"]=="utf-8" and j["text"].startswith("[offloadfs]")))' "$OUT"
al get c4 >"$T_TMP/got"
t_check "the stored bytes are the input's" cmp -s "$T_TMP/got" "$T_TMP/big"

# The plain form keeps every byte as it did.
t_rc "plain offload of the NUL result exits 0" 0 al offload --tool t --call-id c5 <"$T_TMP/nul"
t_check "plain output is the bytes" cmp -s "$OUT" "$T_TMP/nul"

# key --json: a raw id that is not UTF-8 is carried the same way.
t_rc "key --json of a raw id with 0xE9 exits 0" 0 al --json key "$(printf 'id\xe9')"
t_check "key --json is valid UTF-8 JSON with the raw id in base64" python3 -c '
import base64, json, sys
j = json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))
sys.exit(not (j["raw_encoding"] == "base64" and base64.b64decode(j["raw"]) == b"id\xe9"))' "$OUT"
t_rc "key --json of a UTF-8 id exits 0" 0 al --json key "call_é"
t_check "a UTF-8 raw id stays text" python3 -c '
import json, sys
j = json.load(open(sys.argv[1], encoding="utf-8"))
sys.exit(not (j["raw_encoding"] == "utf-8" and j["raw"] == "call_é" and j["key"] == "call_é"))' "$OUT"

t_done
