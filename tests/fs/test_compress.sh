#!/bin/bash
# Compressed results through the mount: real text (C headers) three times
# the bound lives in the store compressed; st_size, ls -l, stat, xattrs and
# every read give the original bytes at any offset; df counts what the
# results occupy against the bound; a raw store next to it for contrast.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse

L=$T_TMP/local M=$T_TMP/mnt; mkdir -p "$L" "$M"
cat /usr/include/*.h /usr/include/*/*.h 2>/dev/null | head -c 3000000 >"$L/headers.h"
t_eq "3,000,000 bytes of headers collected" "$(stat -c %s "$L/headers.h")" 3000000
S=$T_TMP/s
"$M_AL" --store "$S" init --max-total-bytes 1M --max-result-bytes 1M --compression zstd >/dev/null
head -c 1000000 "$L/headers.h" | "$M_AL" --store "$S" put h1 --tool cat >/dev/null
tail -c +1000001 "$L/headers.h" | head -c 1000000 | "$M_AL" --store "$S" put h2 >/dev/null
tail -c 1000000 "$L/headers.h" | "$M_AL" --store "$S" put h3 >/dev/null
head -c 1000000 "$L/headers.h" >"$L/h1"
tail -c +1000001 "$L/headers.h" | head -c 1000000 >"$L/h2"
tail -c 1000000 "$L/headers.h" >"$L/h3"
"$M_AL" --store "$S" stats --json >"$T_TMP/stats"
js() { python3 -c 'import json, sys; print(eval(sys.argv[1], {"j": json.load(open(sys.argv[2]))}))' "$1" "$T_TMP/stats"; }
t_eq "three results of 1 MB in a 1 MiB bound, none evicted" "$(js 'j["entries"], j["bytes"], j["evictions"]')" "(3, 3000000, 0)"
t_check "they occupy less than the bound (stored_bytes)" test "$(js 'j["stored_bytes"]')" -le 1048576
stored=$(js 'j["stored_bytes"]')

m_mount "$S" "$M" || { t_not_ok "mount"; t_done; }
t_eq "st_size is the original size" "$(stat -c %s "$M/h1") $(stat -c %s "$M/h3")" "1000000 1000000"
t_eq "ls -l shows original sizes" "$(ls -l "$M" | awk 'NR > 1 {print $5}' | sort -u)" "1000000"
t_eq "xattr original_size" "$(python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "user.offload.original_size").decode())' "$M/h1")" "1000000"
for k in h1 h2 h3; do t_check "cat $k is exact" cmp -s "$M/$k" "$L/$k"; done
t_check "reads at odd offsets and lengths are exact (Python pread)" python3 - "$M/h2" "$L/h2" <<'PY'
import os, random, sys
want = open(sys.argv[2], "rb").read()
fd = os.open(sys.argv[1], os.O_RDONLY)
r = random.Random(3)
for _ in range(3000):
    off = r.randrange(0, len(want) + 5000)
    n = r.choice([1, 17, 4096, 65535, 65536, 65537, 131072, 300000])
    if os.pread(fd, n, off) != want[off:off + n]:
        sys.exit("pread(%d, %d) differs" % (off, n))
PY
t_check "dd skip= across a frame boundary is exact" \
    bash -c "cmp <(dd if='$M/h3' bs=1000 skip=65 count=3 2>/dev/null) <(dd if='$L/h3' bs=1000 skip=65 count=3 2>/dev/null)"
t_eq "grep -c over the mount counts as over the files" "$(grep -c define "$M/h1")" "$(grep -c define "$L/h1")"
read -r blocks free < <(stat -f -c '%b %f' "$M")
t_eq "df: the bound in 4 KiB blocks" "$blocks" $((1048576 / 4096))
t_eq "df: free is the bound less what results occupy" "$free" $(((1048576 - stored) / 4096))
m_umount "$M"; t_eq "daemon exits 0 after fusermount3 -u" "$?" "0"

# The same text in a raw store: 1 MiB holds one of them.
R=$T_TMP/r
"$M_AL" --store "$R" init --max-total-bytes 1M --max-result-bytes 1M --compression none >/dev/null
for k in h1 h2 h3; do "$M_AL" --store "$R" put $k --file "$L/$k" >/dev/null; done
"$M_AL" --store "$R" stats --json >"$T_TMP/stats"
t_eq "a raw store of the same bound keeps one, evicting two" "$(js 'j["entries"], j["evictions"], j["stored_bytes"] == j["bytes"]')" "(1, 2, True)"
t_done
