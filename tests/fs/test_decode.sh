#!/bin/bash
# Reading compressed results while the daemon decodes ahead (fs/decode.c),
# with the result replaced and evicted underneath.
#  1. Deterministic: a handle reads the start of two results sequentially
#     (O_DIRECT, so every read reaches the daemon); the worker decodes the
#     window after it (the daemon's -d log names each frame); one result is
#     replaced, the other evicted; the handles read on: ENODATA (the kernel
#     asks for the attributes the watcher dropped), never other bytes; new
#     opens see the new bytes / ENODATA.
#  2. Churn: cat and Python (4 KiB reads, line iteration) read a result
#     over and over while a writer replaces it, removes it and evicts it
#     with other results: every read is all of one version, or fails with
#     ENODATA (bytes read before it: a prefix of one version), never a mix.
#  3. -o decode_ahead: a bad size is a usage error; 0 turns the decoder off.
# Under make test-valgrind the daemon runs under memcheck too.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse

if [ -n "${OFFLOADFS_WRAP:-}" ]; then # the daemon under the wrapper too
    printf '#!/bin/sh\nexec %s "$@"\n' "$OFFLOADFS" >"$T_TMP/offloadfs"
    chmod +x "$T_TMP/offloadfs"
    M_FS=$T_TMP/offloadfs
fi
W=$T_TMP/w M=$T_TMP/mnt
mkdir -p "$W"
# Versions: 2 MiB of real text (32 frames of 64 KiB), each line tagged with
# its version, so any mix of two shows.
python3 - "$W" <<'PY'
import glob, sys
text = b"".join(open(f, "rb").read() for f in sorted(glob.glob("/usr/include/*.h"))[:200])
lines = text.splitlines(keepends=True)
for tag in ("A1", "A2", "B1", "C0", "C1", "C2", "C3"):
    out, i = bytearray(), 0
    while len(out) < 2 << 20:
        out += b"%s %d: %s" % (tag.encode(), i, lines[i % len(lines)])
        i += 1
    open("%s/%s" % (sys.argv[1], tag), "wb").write(out[: 2 << 20])
PY
head -c $((256 << 10)) /dev/urandom >"$W/noise" # stored raw: 256 KiB of the bound each
S=$T_TMP/s
"$M_AL" --store "$S" init --max-total-bytes 3M --max-result-bytes 3M --compression zstd >/dev/null
"$M_AL" --store "$S" put k1 --file "$W/A1" >/dev/null
"$M_AL" --store "$S" put k2 --file "$W/A2" >/dev/null
t_check "the results are stored compressed" python3 -c 'import json, sys
s = json.load(sys.stdin); sys.exit(not s["stored_bytes"] < s["bytes"] / 2)' \
    < <("$M_AL" --store "$S" stats --json)
m_mount "$S" "$M" -d -o prefetch=0 || { t_not_ok "mount"; t_done; }
LOG=$M.log

# ---- 1. handles reading on after a replace and an eviction -----------------
cat >"$T_TMP/hold.py" <<'PY'
# hold.py MNT OUTDIR: opens k1 and k2 with O_DIRECT, reads 128 KiB of each
# in 64 KiB reads, says "ready", waits for OUTDIR/go, then reads on in
# 64 KiB reads to the end or an error: OUTDIR/kN gets the bytes read,
# stdout one line per handle "kN ERRNO_NAME_OR_EOF".
import errno, mmap, os, sys, time
mnt, out = sys.argv[1], sys.argv[2]
buf = mmap.mmap(-1, 1 << 16)
fds = {k: os.open("%s/%s" % (mnt, k), os.O_RDONLY | os.O_DIRECT) for k in ("k1", "k2")}
got = {k: bytearray() for k in fds}
def read(k):
    n = os.preadv(fds[k], [buf], len(got[k]))
    got[k] += buf[:n]
    return n
for k in fds:
    read(k); read(k)
open(out + "/ready", "w").close()
deadline = time.time() + 60
while not os.path.exists(out + "/go") and time.time() < deadline:
    time.sleep(0.01)
for k in fds:
    try:
        while read(k):
            pass
        end = "EOF"
    except OSError as e:
        end = errno.errorcode[e.errno]
    open("%s/%s" % (out, k), "wb").write(got[k])
    print(k, end)
PY
mkdir -p "$T_TMP/h"
python3 "$T_TMP/hold.py" "$M" "$T_TMP/h" >"$T_TMP/h/out" 2>&1 &
hold=$!
t_wait_until 30 test -e "$T_TMP/h/ready" || t_not_ok "the reader opened both results"
v1=$(stat -c %i "$M/k1") v2=$(stat -c %i "$M/k2")
# Frames 2..17 (1 MiB after the 128 KiB read) decoded ahead of each reader.
ahead() { grep -q "decoded ahead: version $1 frame 17\$" "$LOG"; }
t_wait_until 30 ahead "$v1"
t_check "the worker decoded 1 MiB ahead of the reader of k1 (daemon log)" ahead "$v1"
t_wait_until 30 ahead "$v2"
t_check "and of the reader of k2" ahead "$v2"
"$M_AL" --store "$S" put k1 --file "$W/B1" >/dev/null # replaced
# Results written after k2 until it is evicted (the oldest goes first).
for i in $(seq 1 12); do
    "$M_AL" --store "$S" put "noise$i" --file "$W/noise" >/dev/null
    "$M_AL" --store "$S" stat k2 >/dev/null 2>&1 || break
done
t_rc "k2 was evicted by the writes after it" 4 "$M_AL" --store "$S" stat k2
t_rc "k1 (replaced after k2) was not" 0 "$M_AL" --store "$S" stat k1
touch "$T_TMP/h/go"
wait "$hold"
t_eq "both handles read on until ENODATA" "$(cat "$T_TMP/h/out")" "k1 ENODATA
k2 ENODATA"
for k in k1 k2; do
    want=$W/A${k#k}
    n=$(stat -c %s "$T_TMP/h/$k")
    t_check "$k: at least the 128 KiB read before were read" test "$n" -ge $((128 << 10))
    t_check "$k: every byte read is the old version's" cmp -s "$T_TMP/h/$k" <(head -c "$n" "$want")
done
t_check "a new open of the replaced k1 reads the new bytes" cmp -s "$M/k1" "$W/B1"
t_eq "a new open of the evicted k2 fails with ENODATA" "$(m_errno open_r "$M/k2")" ENODATA

# ---- 2. cat and Python reading under churn ---------------------------------
cat >"$T_TMP/check.py" <<'PY'
# check.py WANTDIR FILE ERRNO: FILE (what a reader got; ERRNO its end:
# 0, or the errno name) is one whole version, or a prefix of one ended by
# ENODATA. Prints "whole TAG", "enodata", or exits 1 naming the problem.
import sys
d, got, end = sys.argv[1], open(sys.argv[2], "rb").read(), sys.argv[3]
wants = {t: open("%s/%s" % (d, t), "rb").read() for t in ("C0", "C1", "C2", "C3")}
if end not in ("0", "ENODATA"):
    sys.exit("read failed with %s" % end)
tag = got[:2].decode("ascii", "replace")
if got and tag not in wants:
    sys.exit("bytes of no version: %r" % got[:40])
if end == "0":
    if got != wants.get(tag):
        sys.exit("not all of version %s (%d bytes)" % (tag, len(got)))
    print("whole", tag)
else:
    if got and not wants[tag].startswith(got):
        sys.exit("%d bytes before ENODATA are not a prefix of version %s" % (len(got), tag))
    print("enodata")
PY
cat >"$T_TMP/pyread.py" <<'PY'
# pyread.py FILE OUT MODE: reads FILE in 4 KiB reads (MODE raw) or line by
# line (MODE lines) into OUT; prints 0 or the errno name it ended with.
import errno, sys
got = bytearray()
try:
    if sys.argv[3] == "raw":
        with open(sys.argv[1], "rb", buffering=0) as f:
            while True:
                b = f.read(4096)
                if not b:
                    break
                got += b
    else:
        with open(sys.argv[1], "rb") as f:
            for line in f:
                got += line
    end = "0"
except OSError as e:
    end = errno.errorcode[e.errno]
open(sys.argv[2], "wb").write(got)
print(end)
PY
# Each read races one write: a replace (most), a removal, or an eviction
# (the bound lowered, which evicts at once, and raised again).
step() {
    case $(($1 % 6)) in
    0) "$M_AL" --store "$S" rm k3 >/dev/null ;;
    3) "$M_AL" --store "$S" init --max-total-bytes 64K >/dev/null
       "$M_AL" --store "$S" init --max-total-bytes 3M --max-result-bytes 3M >/dev/null ;;
    *) "$M_AL" --store "$S" put k3 --file "$W/C$(($1 % 4))" >/dev/null ;;
    esac
}
"$M_AL" --store "$S" put k3 --file "$W/C0" >/dev/null
bad=0 reads=0 whole=0 enodata=0 gone=0
readone() { # readone R: one read of k3 by cat or Python into $T_TMP/got; prints its end
    case $(($1 % 3)) in
    0) if cat "$M/k3" >"$T_TMP/got" 2>"$T_TMP/err"; then echo 0
       elif grep -q "No data available" "$T_TMP/err"; then echo ENODATA
       else echo "cat: $(cat "$T_TMP/err")"; fi ;;
    1) python3 "$T_TMP/pyread.py" "$M/k3" "$T_TMP/got" raw ;;
    2) python3 "$T_TMP/pyread.py" "$M/k3" "$T_TMP/got" lines ;;
    esac
}
for r in $(seq 1 36); do
    step "$r" &
    writer=$!
    end=$(readone "$r")
    wait "$writer"
    reads=$((reads + 1))
    if res=$(python3 "$T_TMP/check.py" "$W" "$T_TMP/got" "$end" 2>&1); then
        case $res in whole*) whole=$((whole + 1)) ;; *) enodata=$((enodata + 1)) ;; esac
    else
        bad=$((bad + 1)); echo "  read $r: $res"
    fi
    case $((r % 6)) in 0|3) # removed or evicted: a read now must fail
        end=$(readone $((r + 1)))
        if [ "$end" = ENODATA ] && [ ! -s "$T_TMP/got" ]; then gone=$((gone + 1))
        else bad=$((bad + 1)); echo "  read after step $r: $end, $(stat -c %s "$T_TMP/got") bytes"; fi ;;
    esac
done
echo "# churn: $reads reads during writes: $whole whole versions, $enodata ENODATA;" \
    "the worker met a version gone $(grep -c "decode ahead: version" "$LOG") times"
t_eq "no read under churn gave a mix of versions or another error" "$bad" 0
t_check "reads saw whole versions under churn" test "$whole" -gt 0
t_eq "reads after a removal or an eviction failed with ENODATA" "$gone" 12
t_check "the worker decoded ahead during the churn" \
    test "$(grep -c "decoded ahead: version" "$LOG")" -gt 40

m_umount "$M"; t_eq "daemon exits 0 after fusermount3 -u" "$?" "0"

# ---- 3. -o decode_ahead ------------------------------------------------------
t_rc "-o decode_ahead=abc: usage error" 2 "$M_FS" -f -o decode_ahead=abc "$S" "$T_TMP"
t_check "-o decode_ahead=abc: the message names it" grep -q "decode_ahead 'abc'" "$T_TMP/err"
"$M_AL" --store "$S" put k4 --file "$W/C1" >/dev/null
M0=$T_TMP/mnt0
m_mount "$S" "$M0" -d -o prefetch=0,decode_ahead=0 || t_not_ok "mount with -o decode_ahead=0"
t_check "-o decode_ahead=0: reads are exact" cmp -s "$M0/k4" "$W/C1"
t_eq "-o decode_ahead=0: nothing decoded ahead" "$(grep -c "decoded ahead" "$M0.log")" 0
m_umount "$M0"; t_eq "daemon exits 0 after fusermount3 -u" "$?" "0"
t_done
