#!/bin/bash
# agentlink stats --prometheus: the store's metrics in Prometheus' text
# format (0.0.4), checked by promtool; the values are the store's, the
# counters (puts, evictions, removals) count every writer and never go
# backwards; bad combinations are usage errors. (The daemon's GET /metrics,
# whose store part this is: tests/fs/test_metrics.sh.)
. "$(dirname "$0")/../lib.sh"

al() { $AGENTLINK "$@"; }
unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG XDG_STATE_HOME
export OFFLOADFS_STORE=$T_TMP/store
command -v promtool >/dev/null || { t_not_ok "promtool is installed (scripts/deps.sh)"; t_done; }
# sample FILE NAME : the value of NAME (any labels) in FILE.
sample() { N=$2 awk 'index($1, ENVIRON["N"] "{") == 1 {print $2}' "$1"; }

t_rc "no store yet: exit 1" 1 al stats --prometheus
t_check "... saying there is no store" grep -q "no store at" "$T_TMP/err"
t_check "... and printing nothing" test ! -s "$T_TMP/out"

al init --max-total-bytes 100000 --compression none >/dev/null
for k in a b c d; do head -c 30000 /dev/urandom | al put "$k" >/dev/null; done # a evicted
head -c 30000 /dev/urandom | al --namespace other put e >/dev/null               # b evicted
al rm c
t_rc "stats --prometheus: exit 0" 0 al stats --prometheus
cp "$T_TMP/out" "$T_TMP/m1"
t_check "promtool check metrics passes" bash -c "promtool check metrics <'$T_TMP/m1' >'$T_TMP/lint' 2>&1"
sed 's/^/  promtool: /' "$T_TMP/lint"
t_eq "the families, in order, each with HELP and TYPE" \
    "$(sed -n 's/^# TYPE //p' "$T_TMP/m1" | tr '\n' ' ')" \
    "offloadfs_store_entries gauge offloadfs_store_bytes gauge offloadfs_store_stored_bytes gauge offloadfs_store_max_total_bytes gauge offloadfs_puts_total counter offloadfs_evictions_total counter offloadfs_removals_total counter "
t_eq "one HELP per family" "$(grep -c '^# HELP offloadfs_' "$T_TMP/m1")" 7
t_eq "entries" "$(sample "$T_TMP/m1" offloadfs_store_entries)" 2
t_eq "bytes" "$(sample "$T_TMP/m1" offloadfs_store_bytes)" 60000
t_eq "stored_bytes" "$(sample "$T_TMP/m1" offloadfs_store_stored_bytes)" 60000
t_eq "max_total_bytes" "$(sample "$T_TMP/m1" offloadfs_store_max_total_bytes)" 100000
t_eq "puts_total (both namespaces)" "$(sample "$T_TMP/m1" offloadfs_puts_total)" 5
t_eq "evictions_total" "$(sample "$T_TMP/m1" offloadfs_evictions_total)" 2
t_eq "removals_total" "$(sample "$T_TMP/m1" offloadfs_removals_total)" 1
t_check "every sample names the store by its real path" \
    bash -c "[ \$(grep -vc '^#' '$T_TMP/m1') -eq 7 ] && ! grep -v '^#' '$T_TMP/m1' | grep -vq '{store=\"$(realpath "$T_TMP/store")\"} '"
t_eq "the same figures as stats --json" \
    "$(al stats --json | python3 -c 'import json, sys; j = json.load(sys.stdin)
print(j["entries"], j["bytes"], j["stored_bytes"], j["max_total_bytes"], j["evictions"], j["removals"])')" \
    "2 60000 60000 100000 2 1"

# Counters never go backwards: lowering the bound evicts (it counts), a
# refused put does not, and a new process reads on from the store.
al init --max-total-bytes 40000 >/dev/null
printf x | al put .hidden >/dev/null 2>&1  # refused: a key may not start with "."
al stats --prometheus >"$T_TMP/m2"
t_eq "after lowering the bound: evictions_total 3" "$(sample "$T_TMP/m2" offloadfs_evictions_total)" 3
t_eq "a refused put is not counted: puts_total still 5" "$(sample "$T_TMP/m2" offloadfs_puts_total)" 5
head -c 100 /dev/urandom | al put f >/dev/null
al stats --prometheus >"$T_TMP/m3"
t_eq "puts_total 6 after one more put" "$(sample "$T_TMP/m3" offloadfs_puts_total)" 6

t_rc "--json with --prometheus: exit 2" 2 al stats --json --prometheus
t_check "... saying so" grep -q "stats takes --json or --prometheus, not both" "$T_TMP/err"
t_rc "--prometheus on another command: exit 2" 2 al ls --prometheus
t_check "... saying so" grep -q "ls does not take --prometheus" "$T_TMP/err"
t_rc "stdout full: exit 1" 1 bash -c "$AGENTLINK stats --prometheus >/dev/full"
t_check "... saying so" grep -q "writing the metrics to stdout failed" "$T_TMP/err"
t_done
