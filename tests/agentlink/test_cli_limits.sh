#!/bin/bash
# test_cli_limits.sh -- init's limits: messages that name the value and the
# limit it breaks (issue 16.8), and a configured max_result_bytes that a
# lowered bound holds down only while it is lower (issue 16.7).
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

t_done
