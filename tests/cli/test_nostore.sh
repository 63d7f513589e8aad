#!/bin/bash
# test_nostore.sh -- every command on a missing store fails the same way
# (exit 1, "no store at ..."; with --json also {"error":"no_store"} on
# stdout, the signal programs such as the JS backend read), except those that
# create it: init, put, offload, import.
. "$(dirname "$0")/../lib.sh"

al() { $AGENTLINK "$@"; }
unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG XDG_STATE_HOME OFFLOADFS_STORE
S=$T_TMP/no/such/dir
want="agentlink: no store at '$S' yet: 'agentlink init' or a first write (put, offload, import) creates it"

for args in "ls" "ls --json" "stats" "stats --json" "get k" "stat k" "stat k --json" "rm k" "rm a b"; do
    # shellcheck disable=SC2086
    t_rc "$args on a missing store exits 1" 1 al --store "$S" $args
    t_eq "$args says there is no store" "$(cat "$T_TMP/err")" "$want"
    case $args in
    *--json*) t_eq "$args says no_store on stdout" "$(cat "$T_TMP/out")" '{"error":"no_store"}' ;;
    *) t_eq "$args prints nothing on stdout" "$(cat "$T_TMP/out")" "" ;;
    esac
done
t_rc "drop-referenced on a missing store exits 1" 1 al --store "$S" drop-referenced <<<"see /large_tool_results/k"
t_eq "drop-referenced says there is no store" "$(cat "$T_TMP/err")" "$want"
t_rc "drop-referenced --json on a missing store exits 1" 1 al --store "$S" --json drop-referenced <<<"nothing"
t_eq "and says no_store on stdout" "$(cat "$T_TMP/out")" '{"error":"no_store"}'
t_check "none of them created the store" test ! -e "$T_TMP/no"

# An invalid argument is still a usage error first.
t_rc "get of an invalid key exits 2 before looking for the store" 2 al --store "$S" get a/b

# The commands that write create it.
t_rc "put creates the store: exit 0" 0 al --store "$S" put k <<<"x"
t_rc "ls on it exits 0" 0 al --store "$S" ls
t_eq "ls lists the key" "$(cut -f1 "$T_TMP/out")" "k"
t_rc "a namespace with nothing in it is not a missing store: exit 0" 0 al --store "$S" --namespace other ls
t_eq "and lists nothing" "$(cat "$T_TMP/out")" ""
rm -rf "$T_TMP/no"
t_rc "init creates the store: exit 0" 0 al --store "$S" init
rm -rf "$T_TMP/no"
echo '{"rules": [{"tools": ["*"], "offload": "always"}]}' >"$T_TMP/always.json"
t_rc "offload creates the store: exit 0" 0 al --store "$S" offload --tool t --call-id c --config "$T_TMP/always.json" <<<"x"
t_rc "get of what it stored exits 0" 0 al --store "$S" get c
t_eq "with the bytes" "$(cat "$T_TMP/out")" "x"

t_done
