#!/bin/bash
# test_cli_limits.sh -- init's limits: messages that name the value and the
# limit it breaks, and a configured max_result_bytes that a
# lowered bound holds down only while it is lower.
. "$(dirname "$0")/../lib.sh"

al() { $AGENTLINK "$@"; }
unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG XDG_STATE_HOME
export OFFLOADFS_STORE=$T_TMP/store
limits() { al stats --json >"$T_TMP/stats" && python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["max_total_bytes"], j["max_result_bytes"])' "$T_TMP/stats"; }

al init >/dev/null
# ---- values over what a store can hold: named, with the limit ------------
t_rc "init --max-total-bytes 2^64-1 exits 2" 2 al init --max-total-bytes 18446744073709551615
t_eq "it names the value and the largest bound" "$(cat "$T_TMP/err")" \
    "agentlink: --max-total-bytes 18446744073709551615 is above the largest bound a store can have, 17592186044416 (16 TiB)"
t_rc "init --max-total-bytes 17T exits 2" 2 al init --max-total-bytes 17408G
t_eq "it names that value" "$(cat "$T_TMP/err")" \
    "agentlink: --max-total-bytes 18691697672192 is above the largest bound a store can have, 17592186044416 (16 TiB)"
t_rc "init --max-result-bytes 2^64-1 exits 2" 2 al init --max-result-bytes 18446744073709551615
t_eq "it names the value and the store's bound" "$(cat "$T_TMP/err")" \
    "agentlink: --max-result-bytes 18446744073709551615 is above the store's max_total_bytes 1073741824: a result must fit in the store"
t_eq "refused limits changed nothing" "$(limits)" "1073741824 67108864"


# ---- a lowered bound holds max_result_bytes down only while it is lower ----
t_rc "lowering the bound to 1M exits 0" 0 al init --max-total-bytes 1M
t_eq "init says the configured value is held down" "$(cat "$T_TMP/out")" \
    "store $T_TMP/store: max_total_bytes 1048576, max_result_bytes 1048576 (67108864 configured, held to max_total_bytes while the bound is lower)"
t_eq "max_result_bytes in force is the bound" "$(limits)" "1048576 1048576"
t_eq "stats --json gives the configured value too" \
    "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["max_result_bytes_configured"])' "$T_TMP/stats")" "67108864"
t_rc "raising the bound to 1G exits 0" 0 al init --max-total-bytes 1G
t_eq "the configured max_result_bytes is back" "$(limits)" "1073741824 67108864"
t_eq "init says no more than the limits" "$(cat "$T_TMP/out")" \
    "store $T_TMP/store: max_total_bytes 1073741824, max_result_bytes 67108864"
head -c 2000000 /dev/zero | tr '\0' a >"$T_TMP/2m"
t_rc "a 2 MB result after the bound went down and up exits 0" 0 al put big --file "$T_TMP/2m"
t_eq "it is stored whole, not cut to the old bound" "$(al stat big --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["size"], j["truncated"])')" "2000000 False"

# A max_result_bytes set while the bound is low is the one kept.
t_rc "init --max-total-bytes 1M --max-result-bytes 512K exits 0" 0 al init --max-total-bytes 1M --max-result-bytes 512K
t_rc "lowering the bound under it exits 0" 0 al init --max-total-bytes 100K
t_eq "held to the bound" "$(limits)" "102400 102400"
t_rc "raising it again exits 0" 0 al init --max-total-bytes 1G
t_eq "the value given last comes back" "$(limits)" "1073741824 524288"

# ---- a bound too small for the cut's marker is refused ----------------------
t_rc "init --max-total-bytes 1 exits 2" 2 al init --max-total-bytes 1
t_eq "it names the value and the minimum" "$(cat "$T_TMP/err")" \
    "agentlink: --max-total-bytes 1 is below the minimum of 64 bytes: a cut result needs room for its marker line"
t_rc "init --max-result-bytes 63 exits 2" 2 al init --max-result-bytes 63
t_eq "it names that value" "$(cat "$T_TMP/err")" \
    "agentlink: --max-result-bytes 63 is below the minimum of 64 bytes: a cut result needs room for its marker line"
t_eq "refused limits changed nothing" "$(limits)" "1073741824 524288"
t_rc "init --max-total-bytes 64 (the minimum) exits 0" 0 al init --max-total-bytes 64
printf 'first line\n%0500d\nlast line\n' 0 >"$T_TMP/small"
t_rc "a put over it exits 0" 0 al put cut --file "$T_TMP/small"
al get cut >"$T_TMP/got"
t_check "the stored result fits the bound" test "$(stat -c %s "$T_TMP/got")" -le 64
t_eq "and keeps its marker line" "$(grep -c '^\[\.\.\. offloadfs: [0-9]* bytes cut here \.\.\.\]$' "$T_TMP/got")" "1"

t_done
