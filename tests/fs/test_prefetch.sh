#!/bin/bash
# Prefetch: a result written while the mount is up is pushed into the
# kernel's page cache before anyone reads it (fincore counts the resident
# pages without reading), with exactly the stored bytes; -o prefetch=SIZE
# bounds the values pushed, 0 turns it off; a bulk load is not pushed; the
# daemon stops cleanly while pushing.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse
command -v fincore >/dev/null || { t_skip "prefetch tests need fincore (util-linux)"; t_done; }

S=$(m_store s 1G) || { t_not_ok "make a store"; t_done; }
M=$T_TMP/mnt M0=$T_TMP/mnt-off M8=$T_TMP/mnt-8k
m_mount "$S" "$M" -o prefetch=64M || { t_not_ok "mount"; t_done; }
m_mount "$S" "$M0" -o prefetch=0 || t_not_ok "mount with -o prefetch=0"
m_mount "$S" "$M8" -o prefetch=8K || t_not_ok "mount with -o prefetch=8K"

pages() { fincore --raw --noheadings -o PAGES "$1" 2>/dev/null; }  # resident pages
resident() { [ "$(pages "$1")" = "$2" ]; }
npages() { echo $(( ($(stat -c %s "$1") + 4095) / 4096 )); }

# ---- pushed before the first read, bytes exact -----------------------------
head -c 300000 /dev/urandom >"$T_TMP/v1"
m_put "$S" fresh <"$T_TMP/v1"
t_wait_until 10 test -e "$M/fresh"
t_wait_until 10 resident "$M/fresh" 74
t_eq "a 300000-byte result is in the page cache before any read" "$(pages "$M/fresh")" 74
t_check "and reads back exactly (cached bytes)" cmp -s "$M/fresh" "$T_TMP/v1"
head -c 3000000 /dev/urandom >"$T_TMP/v2"
m_put "$S" fresh <"$T_TMP/v2"
t_wait_until 10 cmp -s "$M/fresh" "$T_TMP/v2"
t_check "a replaced result reads as the new version" cmp -s "$M/fresh" "$T_TMP/v2"
t_eq "the new version was pushed too (whole file resident)" "$(pages "$M/fresh")" "$(npages "$M/fresh")"

# ---- -o prefetch=0 and -o prefetch=8K ---------------------------------------
t_wait_until 10 test -e "$M0/fresh"
t_eq "-o prefetch=0: nothing pushed" "$(pages "$M0/fresh")" 0
head -c 5000 /dev/urandom >"$T_TMP/small"
m_put "$S" small <"$T_TMP/small"
head -c 9000 /dev/urandom >"$T_TMP/large"
m_put "$S" large <"$T_TMP/large"
t_wait_until 10 resident "$M8/small" 2
t_eq "-o prefetch=8K: a 5000-byte result is pushed" "$(pages "$M8/small")" 2
t_wait_until 10 test -e "$M8/large"
sleep 0.2 # a push would have happened by now
t_eq "-o prefetch=8K: a 9000-byte result is not" "$(pages "$M8/large")" 0
t_check "-o prefetch=8K: both read back exactly" bash -c "cmp -s '$M8/small' '$T_TMP/small' && cmp -s '$M8/large' '$T_TMP/large'"

# ---- a bulk load is not pushed ------------------------------------------------
"$M_CTL" "$S" bulk bulk 2000 100 || t_not_ok "bulk load"
t_wait_until 10 test -e "$M/bulk001999"
sleep 0.3
pushed=$(fincore --raw --noheadings -o PAGES "$M"/bulk* | grep -c '^1$')
t_check "a bulk load of 2000 keys is not pushed ($pushed of them were)" test "$pushed" -lt 2000

# ---- bad values ----------------------------------------------------------------
t_rc "-o prefetch=abc: usage error" 2 "$M_FS" -f -o prefetch=abc "$S" "$T_TMP"
t_check "-o prefetch=abc: the message names it" grep -q "prefetch 'abc'" "$T_TMP/err"
t_rc "-o prefetch=-1: usage error" 2 "$M_FS" -f -o prefetch=-1 "$S" "$T_TMP"

m_umount "$M0"; t_eq "prefetch=0 daemon exits 0" "$?" "0"
m_umount "$M8"; t_eq "prefetch=8K daemon exits 0" "$?" "0"

# ---- stopping while pushing ---------------------------------------------------
head -c $((48 << 20)) /dev/urandom >"$T_TMP/big"
m_put "$S" big <"$T_TMP/big"
for _ in $(seq 20); do [ -e "$M/big" ] && break; sleep 0.02; done
pid=$(m_pid "$M")
kill -TERM "$pid"
if m_wait_gone "$pid"; then
    t_eq "SIGTERM while a 48 MiB result is pushed: exit 0" "$M_STATUS" 0
else
    t_not_ok "SIGTERM while a 48 MiB result is pushed: daemon still running after 10 s"
fi
t_check "and the mount is gone" bash -c "! mountpoint -q '$M'"
t_done
