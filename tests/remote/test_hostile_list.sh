#!/bin/bash
# Listings from a misbehaving S3 server (tests/remote/hostile_s3.py, no
# radosgw): whatever it answers, ls ends, lists exactly the names under
# PREFIX/NS/, never hangs the mount nor makes its caller unkillable, and
# the daemon's memory stays bounded (doc/remote.md, "Listings").
#   keys shorter than PREFIX/NS/ or beside it: not listed (no overflow)
#   a repeated continuation token: an error after two pages
#   fresh tokens for ever: stopped at -o remote_list_max names
#   keys out of order: every name listed once; remote_ttl=0: one listing
#     per ls, not one per readdir batch
#   a listing that never comes: local lookups answered meanwhile, ls
#     killable with SIGKILL, ls ends at -o remote_list_seconds
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fs/mountlib.sh"
. "$(dirname "$0")/lib.sh"
m_require_fuse
hs_daemon
hs_start
sanitized=
ldd "$T_BUILD/offloadfs" 2>/dev/null | grep -q libasan && sanitized=1

# names MNT : the names ls -f shows, dot entries left out, one a line.
names() { ls -f "$1" | grep -v '^\.\.\?$'; }
# local_store NAME BUCKET : a store on bucket BUCKET of the hostile server,
# holding local result "loc".
local_store() {
    local s
    s=$(hs_store "$1" "$2") && printf 'local bytes\n' | m_put "$s" loc && echo "$s"
}

# ---- keys shorter than PREFIX/NS/, or beside it ----------------------------
S=$(local_store short shortkey) || { t_not_ok "store"; t_done; }
printf 'one\n' | hs_object shortkey k1
mkdir -p "$HS/shortkey/obj/pfx/default/deeper" && printf 'x' >"$HS/shortkey/obj/pfx/default/deeper/x"
m_mount "$S" "$T_TMP/m-short" -o remote_ttl=0 || { t_not_ok "mount"; t_done; }
t_eq "listed keys 'pfx/a', 'pfx', 'pfx/defaultXb', 'pfx/default', 'other/default/x': none shown" \
    "$(names "$T_TMP/m-short" | LC_ALL=C sort | tr '\n' ' ')" "k1 loc "
t_check "  the remote name reads" cmp -s "$T_TMP/m-short/k1" <(printf 'one\n')
t_rc "  the daemon exits 0 at unmount (no overflow)" 0 m_umount "$T_TMP/m-short"

# ---- the same continuation token again and again --------------------------
S=$(local_store rep repeat-50) || { t_not_ok "store"; t_done; }
printf 'r\n' | hs_object repeat-50 r1
m_mount "$S" "$T_TMP/m-rep" || { t_not_ok "mount"; t_done; }
t_eq "a repeated token: ls ends, showing the local results" "$(timeout 120 ls -f "$T_TMP/m-rep" | grep -v '^\.')" loc
t_eq "  after two pages (the second repeats the first's token), not 50" "$(hs_lists repeat-50)" 2
grep -q "remote listing: LIST s3://repeat-50/pfx: the server repeated continuation token 'same-token'" \
    "$T_TMP/m-rep.log" && t_ok "  the log names the repeated token" ||
    { t_not_ok "  the log names the repeated token"; cat "$T_TMP/m-rep.log"; }
t_rc "  the daemon exits 0 at unmount" 0 m_umount "$T_TMP/m-rep"

# ---- a fresh token on every page, for ever (the server stops at 300) -------
S=$(local_store fresh fresh-300) && m_mount "$S" "$T_TMP/m-fresh" -o remote_list_max=20000 ||
    { t_not_ok "mount"; t_done; }
t_eq "endless pages of new keys: ls ends, showing the local results" \
    "$(timeout 300 ls -f "$T_TMP/m-fresh" | grep -v '^\.')" loc
# ls waits 2 s at most: the lister may still be at it (valgrind); wait for its end.
capped() { grep -q "remote listing: more than 20000 names" "$T_TMP/m-fresh.log"; }
t_wait_until 300 capped && t_ok "  the listing stops at the bound, logged" ||
    { t_not_ok "  the listing stops at the bound, logged"; cat "$T_TMP/m-fresh.log"; }
t_eq "  past 20000 names (21 pages of 1000), not at 300 pages" "$(hs_lists fresh-300)" 21
if [ -n "$sanitized${OFFLOADFS_VALGRIND:-}" ]; then
    t_skip "the daemon's peak memory (under a sanitizer or valgrind the memory is the tool's)"
else
    hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$(m_pid "$T_TMP/m-fresh")/status")
    [ "${hwm:-999999999}" -lt 200000 ] && t_ok "  the daemon's peak memory stayed under 200 MB (${hwm} kB)" ||
        t_not_ok "  the daemon's peak memory stayed under 200 MB (${hwm:-?} kB)"
fi
t_rc "  the daemon exits 0 at unmount" 0 m_umount "$T_TMP/m-fresh"

# ---- keys out of order, in several pages and readdir batches ---------------
S=$(local_store uns unsorted) || { t_not_ok "store"; t_done; }
mkdir -p "$HS/unsorted/obj/pfx/default"
for i in $(seq 1000 3999); do : >"$HS/unsorted/obj/pfx/default/u-$i-padding-padding"; done
m_mount "$S" "$T_TMP/m-uns" -o remote_ttl=0 || { t_not_ok "mount"; t_done; }
names "$T_TMP/m-uns" >"$T_TMP/uns.ls"
t_eq "3000 keys listed out of order: ls shows each once" \
    "$(grep -c '^u-' "$T_TMP/uns.ls") $(grep '^u-' "$T_TMP/uns.ls" | sort -u | wc -l)" "3000 3000"
t_eq "  and the local result" "$(grep -c '^loc$' "$T_TMP/uns.ls")" 1
t_eq "  remote_ttl=0: one listing (3 pages) for the whole ls, not one per readdir batch" "$(hs_lists unsorted)" 3
ls -f "$T_TMP/m-uns" >/dev/null
t_eq "  a second ls lists again (remote_ttl=0)" "$(hs_lists unsorted)" 6
t_rc "  the daemon exits 0 at unmount" 0 m_umount "$T_TMP/m-uns"

# ---- a listing that never comes ----------------------------------------------
# remote_stall=600: the held request stays within the stall limit, so only
# the listing's own bounds can end it. The kernel serialises lookups with
# readdir in a directory: a readdir waiting on the remote holds up lookups
# of local results, so no readdir waits more than 2 s (fs.h,
# OFS_REMOTE_LIST_WAIT).
S=$(local_store bound hold) || { t_not_ok "store"; t_done; }
printf 'h\n' | hs_object hold h1
m_mount "$S" "$T_TMP/m-bound" -o remote_stall=600,remote_list_seconds=3 || { t_not_ok "mount"; t_done; }
t_eq "a listing held for ever: ls ends, showing the local results" \
    "$(timeout 120 ls -f "$T_TMP/m-bound" | grep -v '^\.')" loc
bounded() { grep -q "remote listing: LIST s3://hold/pfx: not finished within its time bound" "$1"; }
t_wait_until 60 bounded "$T_TMP/m-bound.log" && t_ok "  the listing ends at remote_list_seconds, logged" ||
    { t_not_ok "  the listing ends at remote_list_seconds, logged"; cat "$T_TMP/m-bound.log"; }
t_rc "  the daemon exits 0 at unmount" 0 m_umount "$T_TMP/m-bound"

S=$(local_store wait hold) && m_mount "$S" "$T_TMP/m-wait" -o remote_stall=600,remote_list_seconds=3600 ||
    { t_not_ok "mount"; t_done; }
t_on_exit "touch '$HS/hold/release'"
before=$(hs_lists hold)
listing() { [ "$(hs_lists hold)" -gt "$before" ]; }
held() { [ "$(grep -c '^hold ended' "$HS/hold/requests")" -eq 0 ]; }
# gone PID: PID has ended (a zombie not yet waited for counts as ended)
gone() { local st; st=$(sed 's/^.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null); [ -z "$st" ] || [ "$st" = Z ]; }
ls -f "$T_TMP/m-wait" >/dev/null 2>&1 &
LS=$!
t_wait_until 60 listing || t_not_ok "the server got the listing request"
t_eq "while a listing is held: a local result's lookup is answered" \
    "$(timeout 60 "$M_PROBE" errno stat "$T_TMP/m-wait/loc"):$(held && echo held)" 0:held
t_check "  and its bytes read" cmp -s <(timeout 60 cat "$T_TMP/m-wait/loc") <(printf 'local bytes\n')
t_eq "  a remote name's lookup is answered" "$(timeout 60 "$M_PROBE" errno stat "$T_TMP/m-wait/h1")" 0
ls -f "$T_TMP/m-wait" >"$T_TMP/wait.ls" 2>&1 &
LS2=$!
t_wait_until 60 gone $LS2 && held && t_ok "  an ls meanwhile ends by itself" || t_not_ok "  an ls meanwhile ends by itself"
wait $LS2 2>/dev/null
t_eq "    listing the local results" "$(grep -v '^\.' "$T_TMP/wait.ls")" loc
ls -f "$T_TMP/m-wait" >/dev/null 2>&1 &
LS3=$!
kill -9 $LS3
t_wait_until 60 gone $LS3 && held && t_ok "  an ls killed with SIGKILL ends (never held in D state)" ||
    { t_not_ok "  an ls killed with SIGKILL ends (never held in D state)"; cat "/proc/$LS3/stack" 2>/dev/null; }
touch "$HS/hold/release"
wait $LS $LS3 2>/dev/null
both() { [ "$(ls -f "$T_TMP/m-wait" | grep -v '^\.' | LC_ALL=C sort | tr '\n' ' ')" = "h1 loc " ]; }
t_wait_until 60 both && t_ok "released: ls lists local and remote names" ||
    { t_not_ok "released: ls lists local and remote names"; ls -f "$T_TMP/m-wait"; }
t_rc "  the daemon exits 0 at unmount" 0 m_umount "$T_TMP/m-wait"
t_done
