#!/bin/bash
# agentlink stats --json says whether the mount at the mount path serves
# this store and namespace, from the mount itself (the root's
# user.offloadfs.* attributes, al_store_mount_check()): a mount of another
# namespace of the same store, or of another store named -o fsname=, does
# not; a plain directory says nothing; a stopped daemon is not waited for.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse

S=$(m_store s) || { t_not_ok "make a store"; t_done; }
S2=$(m_store s2) || { t_not_ok "make a second store"; t_done; }
ln -s "$S" "$T_TMP/link"
M=$T_TMP/mnt MO=$T_TMP/mnt-other MF=$T_TMP/mnt-foo MP=$T_TMP/plain
mkdir -p "$MP"
m_mount "$S" "$M" || { t_not_ok "mount"; t_done; }
m_mount "$S" "$MO" -o namespace=other || { t_not_ok "mount -o namespace=other"; t_done; }
m_mount "$S2" "$MF" -o fsname=foo || { t_not_ok "mount of another store -o fsname=foo"; t_done; }

# mount_of ARGS...: the "mount" object of stats --json, as Python's repr
mount_of() {
    $AGENTLINK "$@" --json stats | python3 -c 'import json, sys
m = json.load(sys.stdin)["mount"]
print(m["serves"], m["store"], m["namespace"], m["reason"], sep="|")'
}
t_eq "its own mount: serves" "$(mount_of --store "$S" --mount "$M")" "True|$S|default|None"
t_eq "the store named through a symlink: serves" "$(mount_of --store "$T_TMP/link" --mount "$M")" \
    "True|$S|default|None"
t_eq "namespace other through a default mount: does not serve" \
    "$(mount_of --store "$S" --namespace other --mount "$M" | cut -d'|' -f1-3)" "False|$S|default"
t_eq "a mount of namespace other: does not serve, says what it serves" \
    "$(mount_of --store "$S" --mount "$MO")" \
    "False|$S|other|$MO serves store '$S', namespace 'other', not store '$S', namespace 'default'"
t_eq "... but serves namespace other" "$(mount_of --store "$S" --namespace other --mount "$MO" | cut -d'|' -f1)" True
t_eq "a mount of another store (-o fsname=foo): does not serve" \
    "$(mount_of --store "$S" --mount "$MF")" \
    "False|$S2|default|$MF serves store '$S2', namespace 'default', not store '$S', namespace 'default'"
t_eq "a plain directory: does not serve, says nothing" "$(mount_of --store "$S" --mount "$MP")" \
    "False|None|None|$MP is not an offloadfs mount that says what it serves (no user.offloadfs.store attribute: another filesystem, or an offloadfs older than that attribute)"
t_eq "no such directory: does not serve" "$(mount_of --store "$S" --mount "$T_TMP/none")" \
    "False|None|None|$T_TMP/none: No such file or directory"

# A stopped daemon: answered after the bound (1 s), not waited for; the time
# is checked only as a hang guard (the answer names the bound). The
# program runs without valgrind even under make test-valgrind, and without
# LeakSanitizer under make test-asan: neither can stop or end a thread
# blocked in a FUSE request (the kernel lets only SIGKILL through), and
# both would wait at exit until the daemon runs again.
pid=$(m_pid "$M")
kill -STOP "$pid"
t_on_exit "kill -CONT $pid 2>/dev/null"
start=$(date +%s%N)
got=$(AGENTLINK=$T_BUILD/agentlink ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 \
    mount_of --store "$S" --mount "$M")
ms=$(( ($(date +%s%N) - start) / 1000000 ))
kill -CONT "$pid"
t_eq "a stopped daemon: does not serve, says it did not answer" "$got" \
    "False|None|None|$M did not answer within 1000 ms (its offloadfs daemon is stopped or busy)"
t_check "... and returns, not blocked ($ms ms; bound 1 s, checked < 30 s)" test "$ms" -lt 30000
t_eq "running again: serves" "$(mount_of --store "$S" --mount "$M" | cut -d'|' -f1)" True

m_umount "$MF"; t_eq "daemon exits 0 (fsname=foo)" "$?" 0
m_umount "$MO"; t_eq "daemon exits 0 (namespace other)" "$?" 0
m_umount "$M"; t_eq "daemon exits 0" "$?" 0
t_done
