#!/bin/bash
# Objects and errors from a misbehaving S3 server (tests/remote/hostile_s3.py,
# no radosgw): a read returns the stored bytes or fails with EIO and one
# log line that says why, never other bytes; nothing the server sends
# writes control characters into a log or onto stderr.
#   a 206 at another offset than asked: EIO, logged (read through the
#     windows, and fetched whole: nothing kept)
#   a 206 whose length is "*": EIO, with a message after the colon
#   no ETag (and the object replaced between two windows): refused, EIO,
#     never a mix of the two versions
#   an error <Code> holding an escape sequence and a forged log line:
#     escaped in the daemon's log and on agentlink's stderr
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../fs/mountlib.sh"
. "$(dirname "$0")/lib.sh"
m_require_fuse
hs_daemon
hs_start

# mount NAME BUCKET : a store on BUCKET mounted at $T_TMP/m-NAME (MNT). Its
# bound (1 MiB) keeps no copy of the 600,000-byte object, so its reads go
# through the read windows, whose ranged GETs start where the reads do
# (fs/fill.h): the wrong offset below is then the server's, not ours.
mount() {
    local s
    m_store "$1" $((1024 * 1024)) >/dev/null || { t_not_ok "make store $1"; t_done; }
    s=$(hs_store "$1" "$2") && MNT=$T_TMP/m-$1 && m_mount "$s" "$MNT" -o remote_ttl=0,prefetch=0 ||
        { t_not_ok "mount $1"; t_done; }
}
# logged MNT TEXT : the daemon's log holds TEXT (fixed string); shows it if not.
logged() { grep -qF -- "$2" "$1.log" || { echo "  log of $1:"; sed 's/^/    /' "$1.log"; return 1; }; }

# ---- a 206 at the wrong offset ------------------------------------------------
head -c 600000 /dev/urandom >"$T_TMP/obj"
mount off offset
hs_object offset k "$T_TMP/obj"
t_eq "the first bytes (asked at 0) read right" "$("$M_PROBE" pread "$MNT/k" 0 4096 | od -An -tx1 | md5sum)" \
    "$(head -c 4096 "$T_TMP/obj" | od -An -tx1 | md5sum)"
t_eq "bytes=131072-393215 answered with 'bytes 0-262143/600000': EIO" \
    "$("$M_PROBE" pread "$MNT/k" 131072 4096 2>&1 >/dev/null)" "fsprobe: pread: EIO"
t_check "  logged with the range asked and the one answered" logged "$MNT" \
    "remote read of 'k': GET s3://offset/pfx/default/k: the server answered Content-Range 'bytes 0-262143/600000' to bytes=131072-393215"
cat "$MNT/k" >"$T_TMP/got" 2>"$T_TMP/err"
t_eq "  cat fails with EIO" "$?:$(grep -c 'Input/output error' "$T_TMP/err")" 1:1
t_check "  having returned only the object's own first bytes" cmp -s "$T_TMP/got" <(head -c "$(stat -c %s "$T_TMP/got")" "$T_TMP/obj")
t_rc "  the daemon exits 0 at unmount" 0 m_umount "$MNT"

# The same server to a store that keeps copies: a 3 MiB object is fetched
# whole (fs/fill.h), in 2 MiB chunks; the second chunk's range is answered
# from 0.
head -c $((3 * 1024 * 1024)) /dev/urandom >"$T_TMP/big"
hs_object offset big "$T_TMP/big"
S=$(hs_store offfill offset) && m_mount "$S" "$T_TMP/m-offfill" -o remote_ttl=0,prefetch=0 ||
    { t_not_ok "mount offfill"; t_done; }
t_eq "fetched whole: a read in the second chunk is EIO" \
    "$("$M_PROBE" pread "$T_TMP/m-offfill/big" $((2 * 1024 * 1024 + 4096)) 4096 2>&1 >/dev/null)" \
    "fsprobe: pread: EIO"
t_eq "  and nothing is kept" \
    "$($AGENTLINK --store "$S" --json stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["cached_entries"])')" 0
t_rc "  the daemon exits 0 at unmount" 0 m_umount "$T_TMP/m-offfill"

# ---- a 206 without the object's length ------------------------------------
mount star star
printf 'star bytes\n' | hs_object star k
t_eq "Content-Range 'bytes 0-10/*': EIO" "$("$M_PROBE" errno stat "$MNT/k")" EIO
t_check "  and the log line says why (nothing empty after the name)" logged "$MNT" \
    "remote lookup of 'k': GET s3://star/pfx/default/k: Content-Range 'bytes 0-10/*' answering bytes=0-131071 gives no object length"
t_eq "  no log line ends at the colon" "$(grep -c ": \$" "$MNT.log")" 0
t_rc "  the daemon exits 0 at unmount" 0 m_umount "$MNT"

# ---- no ETag, the object replaced between two windows ------------------------
mount noetag noetag
hs_object noetag k "$T_TMP/obj"
head -c 600000 /dev/urandom >"$HS/noetag/obj2/k.tmp"
mkdir -p "$HS/noetag/obj2/pfx/default" && mv "$HS/noetag/obj2/k.tmp" "$HS/noetag/obj2/pfx/default/k"
t_eq "an object without ETag: EIO (nothing can pin its version)" "$("$M_PROBE" errno open_r "$MNT/k")" EIO
cat "$MNT/k" >"$T_TMP/got" 2>/dev/null
t_eq "  cat returns no byte (never a mix of two versions)" "$(stat -c %s "$T_TMP/got")" 0
t_check "  logged, naming what the server lacks" logged "$MNT" \
    "remote lookup of 'k': the server sent no usable ETag, so a read could mix two versions of the object: refused"
t_rc "  the daemon exits 0 at unmount" 0 m_umount "$MNT"

# ---- control characters in an error's <Code> --------------------------------
mount ctl ctlerror
t_eq "HTTP 403 with a forged <Code>: EIO" "$("$M_PROBE" errno stat "$MNT/k")" EIO
t_eq "  the daemon's log holds no control character" "$(tr -d '\n' <"$MNT.log" | LC_ALL=C grep -c '[[:cntrl:]]')" 0
t_eq "  and no forged line" "$(grep -c '^offloadfs: forged' "$MNT.log")" 0
t_check "  the code is there, escaped" logged "$MNT" \
    'remote lookup of '"'k'"': GET s3://ctlerror/pfx/default/k: HTTP 403 \x1b[31mAccessDenied\noffloadfs: forged: SECRET=x\x1b[0m'
t_rc "  the daemon exits 0 at unmount" 0 m_umount "$MNT"
S=$(hs_store cli ctlerror)
printf 'x' | $AGENTLINK --store "$S" put k2 >/dev/null 2>"$T_TMP/err"
t_eq "agentlink put to the refusing remote: exit 5 (pending)" "$?" 5
t_eq "  its stderr holds no control character" "$(tr -d '\n' <"$T_TMP/err" | LC_ALL=C grep -c '[[:cntrl:]]')" 0
t_eq "  and no forged line" "$(grep -c '^offloadfs: forged' "$T_TMP/err")" 0
grep -qF 'HTTP 403 \x1b[31mAccessDenied\noffloadfs: forged' "$T_TMP/err" && t_ok "  the code is there, escaped" ||
    { t_not_ok "  the code is there, escaped"; cat "$T_TMP/err"; }
t_done
