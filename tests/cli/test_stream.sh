#!/bin/bash
# test_cli_stream.sh -- put and offload read their input as a stream
# memory stays near max_result_bytes whatever the length, an
# endless input is refused past --max-input-bytes (exit 2, nothing stored),
# and what is stored is byte for byte what the whole-buffer cut stored.
. "$(dirname "$0")/../lib.sh"

al() { $AGENTLINK "$@"; }
unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG XDG_STATE_HOME
export OFFLOADFS_STORE=$T_TMP/store
OUT=$T_TMP/out ERR=$T_TMP/err
err() { cat "$ERR"; }

# peak_kb SHELL-COMMAND : the largest resident set (KiB) of the processes
# the command ran (getrusage of the waited-for children: their maximum).
peak_kb() {
    python3 -c '
import resource, subprocess, sys
subprocess.run(["bash", "-c", sys.argv[1]], stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$1"
}

al init --max-result-bytes 1M >/dev/null

# ---- memory: bounded by about max_result_bytes, not by the input ----------
base=$(peak_kb "printf small | $AGENTLINK put small")
big=$(peak_kb "head -c 256M /dev/zero | $AGENTLINK put big 2>/dev/null")
echo "# peak RSS: $base KiB for 5 bytes, $big KiB for 256 MiB (max_result_bytes 1 MiB)"
t_check "put of 256 MiB holds under 16 MiB more than put of 5 bytes" test $((big - base)) -lt 16384
t_eq "it stored the cut 256 MiB" "$(al stat big --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["original_size"], j["truncated"], j["size"] <= 1048576)')" \
    "268435456 True True"
big=$(peak_kb "head -c 256M /dev/zero | $AGENTLINK offload --tool t --call-id big2 >/dev/null")
echo "# peak RSS: $big KiB for offload of 256 MiB"
t_check "offload of 256 MiB holds under 16 MiB more than put of 5 bytes" test $((big - base)) -lt 16384
t_rc "offload stored it" 0 al stat big2

# ---- an endless input is refused, nothing stored ----------------------------
printf 'kept' | al put z >/dev/null
t_rc "put z </dev/zero ends: exit 2" 2 timeout 120 $AGENTLINK put z </dev/zero
t_eq "it says why and what to do" "$(err)" \
    "agentlink: stdin is longer than --max-input-bytes 1073741824 (the default, 1 GiB): refused, nothing was stored (--max-input-bytes N reads more)"
t_rc "the earlier value of z is untouched" 0 al get z
t_eq "its bytes" "$(cat "$OUT")" "kept"
t_rc "put --file /dev/zero ends: exit 2" 2 timeout 120 $AGENTLINK put z2 --file /dev/zero --max-input-bytes 8M
t_eq "it names the file and the limit" "$(err)" \
    "agentlink: file '/dev/zero' is longer than --max-input-bytes 8388608: refused, nothing was stored (--max-input-bytes N reads more)"
t_rc "nothing was stored under z2" 3 al get z2
t_rc "offload </dev/zero ends: exit 2" 2 timeout 120 $AGENTLINK offload --tool t --call-id z3 --max-input-bytes 8M </dev/zero
t_rc "nothing was stored under z3" 3 al get z3
echo '{"rules": [{"tools": ["*"], "offload": "never"}]}' >"$T_TMP/never.json"
t_rc "offload of a kept result past the limit: exit 2" 2 timeout 120 $AGENTLINK offload --tool t --call-id z4 --config "$T_TMP/never.json" --max-input-bytes 8M </dev/zero
t_eq "and prints nothing" "$(stat -c %s "$OUT")" "0"
head -c 1048576 /dev/zero >"$T_TMP/1m"
t_rc "an input of exactly --max-input-bytes is taken" 0 al put exact --file "$T_TMP/1m" --max-input-bytes 1M
t_rc "one byte more is not" 2 al put exact2 --max-input-bytes 1048575 <"$T_TMP/1m"
t_rc "a bad --max-input-bytes exits 2" 2 al put k --max-input-bytes 0 <"$T_TMP/1m"
t_eq "it names the option" "$(err)" "agentlink: --max-input-bytes '0': expected a size: a whole number of bytes >= 1, optionally followed by K, M or G"
t_rc "drop-referenced refuses a longer text too" 2 al drop-referenced --max-input-bytes 1K <"$T_TMP/1m"
t_rc "get does not take --max-input-bytes" 2 al get k --max-input-bytes 1K

# ---- the stored bytes are those of the whole-buffer cut ---------------------
# Hashes of what the build before streaming (main 954234a) stored for these
# inputs: the cut of the whole value, kept byte for byte.
gen() {
    python3 - "$1" <<'PY'
import random, sys
kind = sys.argv[1]
out = sys.stdout.buffer
if kind == "log":      # 4.9 MB of numbered lines, the failure at the end
    for i in range(1, 120001):
        out.write(b"build step %06d: compiling unit %d ok\n" % (i, i * 7 % 1000))
    out.write(b"error: the real failure is here\n")
elif kind == "utf8":   # 2.1 MB of 3-byte characters, no newline
    out.write(("\u20ac" * 700000).encode())
elif kind == "bin":    # 5 MiB of seeded bytes, NULs and 0xE9 included
    out.write(random.Random(16).randbytes(5 * 1024 * 1024))
PY
}
stored_sha() { al get "$1" | sha256sum | cut -c1-64; }
for k in log utf8 bin; do gen $k >"$T_TMP/$k"; done
al init --max-result-bytes 64K >/dev/null
al put log <"$T_TMP/log" 2>/dev/null >/dev/null
t_eq "a 4.9 MB log cut to 64K from a pipe: the same bytes" "$(stored_sha log)" 05ed44266578419c95bdc1fcccbba4d742cdb126608aec76598f21d22a830e8b
al put logf --file "$T_TMP/log" 2>/dev/null >/dev/null
t_eq "and from --file" "$(stored_sha logf)" 05ed44266578419c95bdc1fcccbba4d742cdb126608aec76598f21d22a830e8b
al offload --tool t --call-id off1 <"$T_TMP/log" >"$T_TMP/ptr"
t_eq "offload stores the same bytes" "$(stored_sha off1)" 05ed44266578419c95bdc1fcccbba4d742cdb126608aec76598f21d22a830e8b
t_eq "and prints the same pointer" "$(sha256sum <"$T_TMP/ptr" | cut -c1-64)" 94238682acfb9df903ad3d997fa8c4ed1d1e8110fa528b3981ac998bd0f1de47
al init --max-result-bytes 100000 >/dev/null
al put utf8 <"$T_TMP/utf8" 2>/dev/null >/dev/null
t_eq "2.1 MB of 3-byte characters cut to 100000: the same bytes" "$(stored_sha utf8)" 32bf3eabf22bcdd69fab90b1cd4541e21ca4db8c3d55a6217563987a36e7d21c
al init --max-result-bytes 1M >/dev/null
cat "$T_TMP/bin" | al put bin 2>/dev/null >/dev/null
t_eq "5 MiB of any bytes cut to 1M: the same bytes" "$(stored_sha bin)" 4c06f8b8c6fd4df9bbc6a8eb424fcfb455f98d9e3f6576a07b24073d37df52ef
t_eq "it records the original size" "$(al stat bin --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["original_size"], j["truncated"])')" "5242880 True"

# ---- the policy decides on the stream as it did on the whole ----------------
cat >"$T_TMP/chars.json" <<'JSON'
{"rules": [{"tools": ["c"], "offload": {"over_chars": 100000}},
           {"tools": ["t"], "offload": {"over_tokens": 30000}}]}
JSON
python3 -c 'import sys; sys.stdout.buffer.write(("\u20ac" * 100000).encode())' >"$T_TMP/100k-chars"
t_rc "100000 characters (300000 bytes) under over_chars 100000: exit 0" 0 al offload --tool c --call-id ch1 --config "$T_TMP/chars.json" <"$T_TMP/100k-chars"
t_check "kept whole" cmp -s "$OUT" "$T_TMP/100k-chars"
printf 'x' >>"$T_TMP/100k-chars"
t_rc "one character more: exit 0" 0 al offload --tool c --call-id ch2 --config "$T_TMP/chars.json" <"$T_TMP/100k-chars"
has_ptr=$(head -c 11 "$OUT")
t_eq "offloaded" "$has_ptr" "[offloadfs]"
al get ch2 >"$T_TMP/got"
t_check "stored exactly" cmp -s "$T_TMP/got" "$T_TMP/100k-chars"
t_rc "120001 characters over over_tokens 30000: exit 0" 0 al offload --tool t --call-id tk1 --config "$T_TMP/chars.json" < <(cat "$T_TMP/100k-chars" "$T_TMP/100k-chars")
t_eq "offloaded" "$(head -c 11 "$OUT")" "[offloadfs]"

t_done
