#!/bin/bash
# Read-your-writes across a gap in the change log: a daemon that was stopped
# while more changes happened than the log keeps (200,000) cannot replay
# them; it drops every live name when it runs again. A name removed or
# evicted in that window must answer ENODATA too, not keep the dentry (and
# attributes) the kernel cached before, for the hour of the cache timeout.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse

S=$(m_store s) || { t_not_ok "make a store"; t_done; }
printf 'hello\n' | m_put "$S" victim
printf 'bye\n' | m_put "$S" evictee
M=$T_TMP/m
m_mount "$S" "$M" || { t_not_ok "mount"; t_done; }
t_eq "stat through the mount caches both names" \
    "$(m_errno stat "$M/victim") $(m_errno stat "$M/evictee")" "0 0"

P=$(m_pid "$M")
kill -STOP "$P"
t_on_exit "kill -CONT $P 2>/dev/null"
# The stopped daemon's socket goes aside, so that 200,000 writers do not
# each wait for it (they would stop waiting once its backlog is full, but
# only after 64 x 200 ms).
sock=$(cd "$S/wake" && ls)
mv "$S/wake/$sock" "$S/wake/aside"
m_rm "$S" victim
"$M_CTL" "$S" bulk gap 200001 1 >/dev/null || t_not_ok "bulk insert"
"$M_AL" --store "$S" init --max-total-bytes 200000 >/dev/null # evicts the oldest: evictee
mv "$S/wake/aside" "$S/wake/$sock"
t_eq "evictee was evicted (agentlink stat exits 4)" \
    "$("$M_AL" --store "$S" stat evictee >/dev/null 2>&1; echo $?)" 4
kill -CONT "$P"
# The daemon drops 200,000 names now, which takes longer than a writer
# waits for it (200 ms): wait for it here instead, with a deadline.
printf 'new\n' | m_put "$S" fresh
t_eq "the daemon serves the store again" "$(cat "$M/fresh")" "new"
gone() { [ "$(m_errno stat "$M/$1")" = ENODATA ]; }
m_within 20 gone victim
t_eq "a name removed during the gap: ENODATA (after ${M_WAITED_MS} ms)" "$?" 0
m_within 20 gone evictee
t_eq "a name evicted during the gap: ENODATA" "$?" 0
t_eq "a live name still stats" "$(m_errno stat "$M/gap200000")" 0
m_umount "$M"; t_eq "daemon exits 0" "$?" 0
t_done
