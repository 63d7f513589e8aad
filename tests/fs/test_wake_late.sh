#!/bin/bash
# A stopped daemon delays one writing call by the bound (200 ms) once, not
# once per key: `agentlink rm` of 20 keys wakes it (connects to its socket)
# once, not 20 times (20 x 200 ms), and the mount shows every removal once
# it runs again. Counted, not timed: the connections wait in the stopped
# daemon's listen queue, where ss(8) shows them; the time is printed only,
# with a hang guard far above it.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse

S=$(m_store s) || { t_not_ok "make a store"; t_done; }
keys=()
for i in $(seq 1 20); do printf 'v%d\n' "$i" | m_put "$S" "k$i"; keys+=("k$i"); done
M=$T_TMP/m
m_mount "$S" "$M" || { t_not_ok "mount"; t_done; }
t_eq "the mount shows the keys" "$(cat "$M/k1" "$M/k20")" "v1
v20"
P=$(m_pid "$M")
kill -STOP "$P"
t_on_exit "kill -CONT $P 2>/dev/null"
start=$(date +%s%N)
"$M_AL" --store "$S" rm "${keys[@]}"; rc=$?
took=$(( ($(date +%s%N) - start) / 1000000 ))
echo "# agentlink rm of 20 keys with the daemon stopped: ${took} ms"
t_eq "rm of 20 keys with the daemon stopped succeeds" "$rc" 0
queued=$(ss -xlp | awk -v p="pid=$P," '$1 == "u_seq" && $2 == "LISTEN" && index($0, p) {print $3}')
t_eq "and wakes the stopped daemon once, not once per key" "$queued" 1
t_check "and returns, not blocked (${took} ms, hang guard 30 s)" test "$took" -lt 30000
kill -CONT "$P"
gone() { [ "$(m_errno stat "$M/k1") $(m_errno stat "$M/k20")" = "ENODATA ENODATA" ]; }
m_within 10 gone; t_eq "after SIGCONT the mount shows the removals (${M_WAITED_MS} ms)" "$?" 0
printf 'new\n' | m_put "$S" k1
t_eq "and read-your-writes holds again" "$(cat "$M/k1")" "new"
m_umount "$M"; t_eq "daemon exits 0" "$?" 0
t_done
