#!/bin/bash
# Reading through the mount: ls, cat, head, tail, grep -r, sed -n, wc,
# sha256sum, dd skip=, Python open/mmap/pread, Node fs, against the bytes the
# store holds; listing with d_type; attributes; random pread across and past
# EOF.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse

S=$(m_store s) || { t_not_ok "make a store"; t_done; }
M=$T_TMP/mnt
L=$T_TMP/local; mkdir -p "$L"

# Fixtures: text with lines, random binary (odd size), empty, one byte,
# a UTF-8 name with spaces.
seq 1 150000 | sed 's/^/line /; s/$/ lorem ipsum dolor sit amet/' >"$L/text.log"
head -c $((5 * 1024 * 1024 + 123)) /dev/urandom >"$L/blob.bin"
: >"$L/empty"
printf 'x' >"$L/one"
printf 'caf\xc3\xa9 au lait\nsecond line\n' >"$L/résumé 1.txt"
for f in "$L"/*; do
    [ "$f" = "$L/empty" ] && continue
    m_put "$S" "$(basename "$f")" <"$f" || t_not_ok "put $(basename "$f")"
done
# An empty result is a 0-byte entry.
"$M_CTL" "$S" put empty </dev/null >/dev/null || t_not_ok "put an empty entry"
# What the store holds is the reference (the CLI's get).
R=$T_TMP/ref; mkdir -p "$R"
for f in "$L"/*; do k=$(basename "$f"); m_get "$S" "$k" >"$R/$k"; done
t_check "store round-trips the fixtures" cmp -s "$L/blob.bin" "$R/blob.bin"

m_mount "$S" "$M" || { t_not_ok "mount"; t_done; }

# ---- listing ------------------------------------------------------------------
t_eq "ls lists exactly the keys" "$(ls "$M")" "$(ls "$R")"
t_eq "ls -A shows nothing else" "$(ls -A "$M" | wc -l)" "5"
dt=$("$M_PROBE" ls "$M" | grep -v ' \.\.\?$' | cut -d' ' -f1 | sort -u)
t_eq "every key has d_type DT_REG (8)" "$dt" "8"
t_eq "python listdir" "$(python3 -c 'import os,sys; print(sorted(os.listdir(sys.argv[1])))' "$M")" \
     "$(python3 -c 'import os,sys; print(sorted(os.listdir(sys.argv[1])))' "$R")"

# ---- attributes -------------------------------------------------------------------
for k in text.log blob.bin empty one "résumé 1.txt"; do
    t_eq "st_size of '$k'" "$(stat -c %s "$M/$k")" "$(stat -c %s "$R/$k")"
done
t_eq "regular file, mode 0444, one link" "$(stat -c '%F %a %h' "$M/blob.bin")" "regular file 444 1"
t_eq "root is a 0555 directory" "$(stat -c '%F %a' "$M")" "directory 555"
mt=$(stat -c %Y "$M/text.log"); now=$(date +%s)
t_check "mtime is the write time (within 2 min)" test $((now - mt)) -ge 0 -a $((now - mt)) -lt 120
created=$(python3 -c 'import os,sys; print(os.getxattr(sys.argv[1], "user.offload.created").decode())' "$M/text.log")
t_eq "mtime matches user.offload.created" "$(date -u -d "@$(stat -c %.6Y "$M/text.log")" +%Y-%m-%dT%H:%M:%S)" "${created:0:19}"
i1=$(stat -c %i "$M/one"); i2=$(stat -c %i "$M/empty")
t_check "inode numbers are distinct and > 1" test "$i1" -gt 1 -a "$i2" -gt 1 -a "$i1" != "$i2"

# ---- shell tools ---------------------------------------------------------------------
for k in text.log blob.bin empty one "résumé 1.txt"; do
    t_check "cat '$k' == stored bytes" cmp -s <(cat "$M/$k") "$R/$k"
done
t_eq "head -n 5" "$(head -n 5 "$M/text.log")" "$(head -n 5 "$R/text.log")"
t_eq "tail -n 5" "$(tail -n 5 "$M/text.log")" "$(tail -n 5 "$R/text.log")"
t_check "tail -c 100000 (seeks from the end)" cmp -s <(tail -c 100000 "$M/blob.bin") <(tail -c 100000 "$R/blob.bin")
t_eq "sed -n 70000,70003p" "$(sed -n 70000,70003p "$M/text.log")" "$(sed -n 70000,70003p "$R/text.log")"
t_eq "grep -r finds the line" "$(cd "$M" && grep -r 'line 123456 ' .)" "./text.log:line 123456 lorem ipsum dolor sit amet"
t_eq "grep -rc over every file" "$(cd "$M" && grep -rc 'line' . | sort)" "$(cd "$R" && grep -rc 'line' . | sort)"
t_eq "wc -l -c" "$(wc -l -c <"$M/text.log")" "$(wc -l -c <"$R/text.log")"
t_eq "sha256sum of the binary" "$(sha256sum <"$M/blob.bin")" "$(sha256sum <"$R/blob.bin")"
t_check "dd bs=4096 skip=37 count=100" cmp -s \
    <(dd if="$M/blob.bin" bs=4096 skip=37 count=100 status=none) \
    <(dd if="$R/blob.bin" bs=4096 skip=37 count=100 status=none)
t_check "dd bs=1 skip=5242880 (near EOF, odd block size)" cmp -s \
    <(dd if="$M/blob.bin" bs=1 skip=5242880 status=none) \
    <(dd if="$R/blob.bin" bs=1 skip=5242880 status=none)
t_check "dd iflag=direct bs=1M" cmp -s \
    <(dd if="$M/blob.bin" bs=1M iflag=direct status=none) "$R/blob.bin"

# ---- Python: open, mmap, random pread across and past EOF ------------------------------
cat >"$T_TMP/py_read.py" <<'EOF'
import mmap, os, random, sys
mnt, ref = sys.argv[1], sys.argv[2]
bad = []
for name in sorted(os.listdir(ref)):
    want = open(os.path.join(ref, name), 'rb').read()
    p = os.path.join(mnt, name)
    if open(p, 'rb').read() != want:
        bad.append(name + ': open().read()')
    if want:
        with open(p, 'rb') as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            if m[:] != want or m[len(want) // 3:len(want) // 2] != want[len(want) // 3:len(want) // 2]:
                bad.append(name + ': mmap')
    fd = os.open(p, os.O_RDONLY)
    rnd = random.Random(len(want))
    n = len(want)
    offs = [0, max(n - 1, 0), n, n + 1, n + 4096, 2**40] + [rnd.randrange(0, n + 8192) for _ in range(300)]
    for off in offs:
        ln = rnd.choice([1, 7, 4096, 65536, 131072 + 5, 1 << 20, 3 << 20])
        if os.pread(fd, ln, off) != want[off:off + ln]:
            bad.append('%s: pread(%d, %d)' % (name, off, ln)); break
    os.close(fd)
print('\n'.join(bad) if bad else 'ok')
EOF
t_eq "python read, mmap and 306 random preads per file" "$(python3 "$T_TMP/py_read.py" "$M" "$R" 2>&1)" "ok"
t_eq "fsprobe pread past EOF reads nothing" "$("$M_PROBE" pread "$M/one" 1 10 | wc -c)" "0"
t_check "fsprobe pread 1 MiB at 4 MiB" cmp -s <("$M_PROBE" pread "$M/blob.bin" 4194304 1048576) \
    <(dd if="$R/blob.bin" bs=1M skip=4 count=1 status=none)

# ---- Node fs -------------------------------------------------------------------------------
if command -v node >/dev/null; then
    t_eq "node fs.readFileSync" "$(node -e 'const fs=require("fs");const [a,b]=process.argv.slice(1);console.log(Buffer.compare(fs.readFileSync(a),fs.readFileSync(b))===0 && fs.readdirSync(process.argv[3]).length)' "$M/blob.bin" "$R/blob.bin" "$M")" "5"
else
    t_skip "node not installed"
fi

# ---- a second read comes from the page cache, still the same bytes --------------------------
t_check "second cat of the binary == stored bytes" cmp -s "$M/blob.bin" "$R/blob.bin"

m_umount "$M"; t_eq "daemon exits 0 after fusermount3 -u" "$?" "0"
t_done
