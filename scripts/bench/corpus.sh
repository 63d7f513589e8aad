#!/bin/bash
# scripts/bench/corpus.sh OUT SIZE -- collects SIZE bytes of real text from
# this machine into OUT, for the compression rows of `make bench`: C headers
# (/usr/include), package documentation (/usr/share/doc, .gz ones unpacked),
# the package database (/var/lib/dpkg/status) and logs (/var/log), cycled in
# turn a file at a time so the mix holds whatever SIZE is. Real text, not
# generated filler: what tool results look like (source, docs, metadata,
# logs). Files are taken in sorted order, so the corpus is the same on every
# run of one machine.
set -euo pipefail
out=$1 size=$2
lists=$(mktemp -d)
trap 'rm -rf "$lists"' EXIT
find /usr/include -type f -name '*.h' 2>/dev/null | LC_ALL=C sort >"$lists/0"
find /usr/share/doc -type f \( -name '*.gz' -o -name 'copyright' -o -name '*.txt' -o -name '*.md' -o -name '*.html' -o -name 'README*' -o -name 'NEWS*' \) 2>/dev/null | LC_ALL=C sort >"$lists/1"
echo /var/lib/dpkg/status >"$lists/2"
ls /var/lib/dpkg/info/*.list /var/lib/dpkg/info/*.md5sums 2>/dev/null | LC_ALL=C sort >>"$lists/2" || true
find /var/log -type f \( -name '*.log' -o -name '*.log.1' -o -name 'syslog*' -o -name 'dpkg.log*' -o -name 'history.log*' -o -name 'term.log*' \) -size +0 2>/dev/null | LC_ALL=C sort >"$lists/3"
python3 - "$out" "$size" "$lists" <<'PY'
import gzip, sys, os
out, size, d = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lists = [open(os.path.join(d, str(i))).read().split('\n') for i in range(4)]
lists = [[p for p in l if p] for l in lists]
pos = [0] * 4
done = 0
with open(out, 'wb') as f:
    while done < size and any(lists):
        for i, l in enumerate(lists):
            if not l or done >= size:
                continue
            p = l[pos[i] % len(l)]
            pos[i] += 1
            try:
                b = gzip.open(p).read() if p.endswith('.gz') else open(p, 'rb').read()
            except (OSError, EOFError):
                continue
            if b'\0' in b[:4096]:
                continue  # not text
            b = b[: size - done]
            f.write(b)
            done += len(b)
PY
