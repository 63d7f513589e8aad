#!/usr/bin/env python3
"""hostile_s3.py -- a misbehaving S3 server, for fault injection into the
remote tier's own logic (tests/remote/test_hostile_*.sh). Standard library
only; loopback only; no signature check (the tier's requests are signed,
this server does not look).

usage: hostile_s3.py DIR

Serves path-style at http://127.0.0.1:PORT: the port (ephemeral) is written
to DIR/port once the server listens. A bucket's name is the mode it
misbehaves in, "MODE" or "MODE-LIMIT" (one server, any number of modes).
The objects of bucket B are the files under DIR/B/obj/ (the path below it
is the key); GET (with Range), HEAD and ListObjectsV2 read them, PUT and
DELETE answer 200 and keep nothing. Every request is logged as one line
to DIR/B/requests: "METHOD PATH?QUERY RANGE". The modes:

  plain        nothing wrong (the control case)
  shortkey     the listing also holds keys outside PREFIX/NS/: "pfx/a",
               "pfx", "pfx/defaultXb", "pfx/default", "other/default/x"
  repeat       the listing is truncated with the same continuation token
               every page; after LIMIT listing requests it ends
  fresh        each page is 1000 new keys with a new token; after LIMIT
               pages the listing ends
  hold         a listing of more than one key waits until DIR/B/release
               exists (at most 120 s), logs "hold ended" and answers (a
               lookup or a CHECK does not wait)
  unsorted     the listing pages through the keys in a shuffled order
  offset       a range not at 0 is answered 206 with the bytes from 0 and
               a Content-Range that says so
  star         every 206 says "Content-Range: bytes FIRST-LAST/*"
  noetag       no ETag anywhere; a range not at 0 is served from the file
               under DIR/B/obj2/ (the object replaced between two windows)
  ctlerror     every request is refused: HTTP 403 whose <Code> holds an
               escape sequence, a newline and a forged log line
"""
import http.server
import os
import random
import sys
import threading
import time
import urllib.parse
from email.utils import formatdate

DIR = sys.argv[1]
LOCK = threading.Lock()
LISTS = {}  # listing requests so far, per bucket
FORGED = "\x1b[31mAccessDenied\noffloadfs: forged: SECRET=x\x1b[0m"


def log(bucket, line):
    os.makedirs(os.path.join(DIR, bucket), exist_ok=True)
    with LOCK, open(os.path.join(DIR, bucket, "requests"), "a") as f:
        f.write(line + "\n")


def all_keys(obj):
    keys = []
    for root, _, files in os.walk(obj):
        for name in files:
            keys.append(os.path.relpath(os.path.join(root, name), obj))
    return sorted(keys)


def xml_escape(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def contents(key, size):
    return ("<Contents><Key>%s</Key><LastModified>2024-01-02T03:04:05.000Z</LastModified>"
            "<ETag>&quot;e&quot;</ETag><Size>%d</Size><StorageClass>STANDARD</StorageClass>"
            "</Contents>" % (xml_escape(key), size))


def page(items, token):
    body = ['<?xml version="1.0" encoding="UTF-8"?>'
            '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
            "<Name>bkt</Name><KeyCount>%d</KeyCount>" % len(items)]
    body += [contents(k, s) for k, s in items]
    if token:
        body.append("<IsTruncated>true</IsTruncated><NextContinuationToken>%s"
                    "</NextContinuationToken>" % xml_escape(token))
    else:
        body.append("<IsTruncated>false</IsTruncated>")
    body.append("</ListBucketResult>")
    return "".join(body).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def refuse(self):
        body = ("<?xml version=\"1.0\"?><Error><Code>%s</Code><Message>no</Message></Error>"
                % FORGED).encode()
        self.answer(403, body, [("Content-Type", "application/xml")])

    def split(self):
        u = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(u.path)
        q = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
        parts = path.lstrip("/").split("/", 1)
        return parts[0], (parts[1] if len(parts) > 1 else ""), q

    def start(self):
        bucket, key, q = self.split()
        self.mode, _, limit = bucket.partition("-")
        self.limit = int(limit) if limit.isdigit() else 100
        self.obj = os.path.join(DIR, bucket, "obj")
        self.obj2 = os.path.join(DIR, bucket, "obj2")
        self.bucket = bucket
        log(bucket, "%s %s %s" % (self.command, self.path, self.headers.get("Range", "-")))
        n = int(self.headers.get("Content-Length", "0") or 0)
        if n:
            self.rfile.read(n)
        if self.mode == "ctlerror":
            self.refuse()
            return None
        return bucket, key, q

    def do_PUT(self):
        if self.start():
            self.answer(200, b"", [("ETag", '"put"')])

    def do_DELETE(self):
        if self.start():
            self.answer(204)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        got = self.start()
        if not got:
            return
        _, key, q = got
        if not key:
            self.listing(q)
        else:
            self.object(key)

    # ---- listings ----
    def listing(self, q):
        prefix, token = q.get("prefix", ""), q.get("continuation-token")
        maxkeys = int(q.get("max-keys", "1000"))
        mode, limit = self.mode, self.limit
        with LOCK:
            LISTS[self.bucket] = nth = LISTS.get(self.bucket, 0) + 1
        if mode == "hold" and maxkeys > 1:
            end = time.monotonic() + 120  # a test that fails still ends
            while not os.path.exists(os.path.join(DIR, self.bucket, "release")) and time.monotonic() < end:
                time.sleep(0.05)
            log(self.bucket, "hold ended")
        if mode == "repeat" and maxkeys > 1:
            items = [(k, 1) for k in all_keys(self.obj) if k.startswith(prefix)]
            self.answer(200, page(items, "same-token" if nth <= limit else None))
            return
        if mode == "fresh" and maxkeys > 1:
            n = int(token[1:]) if token else 0
            items = [("%sf%06d-%04d" % (prefix, n, i), 1) for i in range(1000)]
            self.answer(200, page(items, "t%d" % (n + 1) if n + 1 < limit else None))
            return
        keys = [k for k in all_keys(self.obj) if k.startswith(prefix)]
        if mode == "shortkey":
            keys += ["pfx/a", "pfx", "pfx/defaultXb", "pfx/default", "other/default/x"]
        if mode == "unsorted":
            random.Random(7).shuffle(keys)
        start = int(token) if token else 0
        chunk = keys[start:start + maxkeys]
        more = str(start + maxkeys) if start + maxkeys < len(keys) else None
        size = lambda k: (os.path.getsize(os.path.join(self.obj, k))
                          if os.path.isfile(os.path.join(self.obj, k)) else 1)
        self.answer(200, page([(k, size(k)) for k in chunk], more))

    # ---- objects ----
    def object(self, key):
        mode, path = self.mode, os.path.join(self.obj, key)
        if not os.path.isfile(path):
            body = b"<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code></Error>"
            self.answer(404, body, [("Content-Type", "application/xml")])
            return
        with open(path, "rb") as f:
            data = f.read()
        headers = [("Last-Modified", formatdate(1704164645, usegmt=True))]
        if mode != "noetag":
            headers.append(("ETag", '"v1-%d"' % len(data)))
        rng = self.headers.get("Range")
        if not rng or self.command == "HEAD":
            self.answer(200, data, headers)
            return
        first, _, last = rng[len("bytes="):].partition("-")
        first = int(first)
        last = min(int(last), len(data) - 1) if last else len(data) - 1
        if first >= len(data):
            self.answer(416, b"", headers)
            return
        if mode == "noetag" and first > 0 and os.path.isfile(os.path.join(self.obj2, key)):
            with open(os.path.join(self.obj2, key), "rb") as f:
                data = f.read()
        start = 0 if mode == "offset" and first > 0 else first
        part = data[start:start + last - first + 1]
        total = "*" if mode == "star" else str(len(data))
        headers.append(("Content-Range", "bytes %d-%d/%s" % (start, start + len(part) - 1, total)))
        self.answer(206, part, headers)


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    tmp = os.path.join(DIR, "port.tmp")
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, os.path.join(DIR, "port"))
    srv.serve_forever()


if __name__ == "__main__":
    main()
