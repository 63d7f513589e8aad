#!/bin/bash
# The daemon out of descriptors (EMFILE) with a writer's connection queued
# on its wake-up socket: accept4 fails, the socket stays readable, and the
# watcher must not spin on it; it backs off to its 20 ms poll for that
# round (the write still shows through the poll). Measured as the daemon's
# CPU time over one second while the connection waits: a spinning watcher
# burns most of that second, a backing-off one almost none.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse
command -v prlimit >/dev/null || { t_not_ok "prlimit is installed (util-linux)"; t_done; }

S=$(m_store emfile) || { t_not_ok "make a store"; t_done; }
M=$T_TMP/m
m_mount "$S" "$M" || { t_not_ok "mount"; t_done; }
pid=$(m_pid "$M")
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }

# 0, 1 and 2 are open: no new descriptor fits under 3.
prlimit --pid "$pid" --nofile=3:
t_eq "the daemon's descriptor limit lowered" "$(prlimit --pid "$pid" --nofile -o SOFT --noheadings | tr -d ' ')" 3
echo hello | m_put "$S" k1 &
writer=$!
t_wait_until 10 test -e "$M/k1"
t_eq "the write shows through the poll all the same" "$(cat "$M/k1")" hello
before=$(cpu)
sleep 1 # a measuring window, not a wait for a state
spent=$(( $(cpu) - before ))
hz=$(getconf CLK_TCK)
t_eq "the watcher does not spin on the unaccepted connection (CPU ticks in 1 s: $spent of $hz)" \
    "$(( spent * 5 < hz ))" 1
prlimit --pid "$pid" --nofile=1024:
wait "$writer"
t_eq "the writer ends once descriptors are back" "$?" 0
t_rc "the daemon exits 0 at unmount" 0 m_umount "$M"
t_done
