#!/usr/bin/env python3
"""latency_relay.py -- a TCP relay in front of an S3 server that delays each
HTTP request, for the tests and the benchmark of parallel uploads
(tests/remote/test_parallel.py, scripts/bench_uploads.sh). Standard library
only.

    latency_relay.py DIR HOST:PORT [--delay-ms N] [--refuse-hold-ms N]

Listens on a free loopback port, written to DIR/port once it listens.
Each accepted connection is relayed to HOST:PORT; the first bytes of each
request (the first client bytes after a response, or at the start) wait
--delay-ms (default 50) before they go on, so every request costs one fixed
added latency, whatever the machine does, as a far server would.

--refuse-hold-ms N: the server is "down": each connection is accepted,
held N ms, then reset, and nothing is relayed (a client sees its request
fail as against a dead server, and the relay sees every attempt).

DIR/log gets one line per event, in the order they happened:
    open C            connection C accepted
    req C METHOD PATH a request on C (its request line)
    resp C            the first bytes of the response to it
    close C           C ended (either side; a refused one: logged before
                      its reset, so before its client can know)
"req" is logged before the request goes on, "resp" before the response does:
a client that waits for its answer before its next request never shows two
of its own requests open at once. The tests count requests per object and overlaps from this log."""
import os
import socket
import sys
import threading
import time


class Log:
    def __init__(self, path):
        self.f = open(path, "a", buffering=1)
        self.lock = threading.Lock()

    def __call__(self, *words):
        with self.lock:
            self.f.write(" ".join(str(w) for w in words) + "\n")


def pump(src, dst, on_chunk):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            on_chunk(data)
            dst.sendall(data)
    except OSError:
        pass
    for s in (dst, src):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def relay(conn, cid, target, delay, log):
    try:
        up = socket.create_connection(target)
    except OSError:
        conn.close()
        log("close", cid)
        return
    up.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    state = {"answered": True}  # True: the next client bytes start a request

    def client_chunk(data):
        if state["answered"]:
            state["answered"] = False
            line = data.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
            if len(line) >= 2 and line[0].isalpha() and line[0].isupper():
                log("req", cid, line[0], line[1])
            time.sleep(delay)

    def server_chunk(data):
        if not state["answered"]:
            state["answered"] = True
            log("resp", cid)

    t = threading.Thread(target=pump, args=(up, conn, server_chunk), daemon=True)
    t.start()
    pump(conn, up, client_chunk)
    t.join()
    conn.close()
    up.close()
    log("close", cid)


def refuse(conn, cid, hold, log):
    time.sleep(hold)
    try:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
    except OSError:
        pass
    log("close", cid)  # before the reset: the client cannot have seen it yet
    conn.close()


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    d, host_port = args[0], args[1]
    delay, hold = 0.05, None
    i = 2
    while i < len(args):
        if args[i] == "--delay-ms":
            delay = int(args[i + 1]) / 1000.0
        elif args[i] == "--refuse-hold-ms":
            hold = int(args[i + 1]) / 1000.0
        else:
            sys.exit("latency_relay.py: unknown option '%s'" % args[i])
        i += 2
    host, port = host_port.rsplit(":", 1)
    target = (host, int(port))
    log = Log(os.path.join(d, "log"))
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(128)
    tmp = os.path.join(d, "port.tmp")
    with open(tmp, "w") as f:
        f.write(str(ls.getsockname()[1]))
    os.rename(tmp, os.path.join(d, "port"))
    n = 0
    while True:
        conn, _ = ls.accept()
        n += 1
        log("open", n)
        if hold is not None:
            fn, a = refuse, (conn, n, hold, log)
        else:
            fn, a = relay, (conn, n, target, delay, log)
        threading.Thread(target=fn, args=a, daemon=True).start()


if __name__ == "__main__":
    main()
