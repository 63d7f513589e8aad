"""Slow HTTP clients for the metrics tests (tests/fs/test_metrics_slow.sh).

python3 slow_clients.py PORT FIRST COUNT SPREAD HISTORY

Opens COUNT TCP connections to 127.0.0.1:PORT, from the address FIRST
(SPREAD 0: all from FIRST; 1: FIRST, FIRST + 1, ... one each; every
127.0.0.0/8 address is this host's), each on a thread of its own. Each
sends the start of a request, GET /metrics, one byte every 0.2 s, and
never ends its headers: the slow client that holds a server's place
without ever asking anything. A connection counts as closed when the
server ends it (EOF, a reset, or any answer at all).

HISTORY gets one line "connected C closed K" after every connect and every
close, in order, so a test can ask whether a state was ever reached
(grep -x) and what the last one is (tail -1). Runs until killed.
"""
import ipaddress
import socket
import sys
import threading
import time

PERIOD = 0.2
REQUEST = b"GET /metrics HTTP/1.1\r\nHost: offloadfs\r\nX-Slow: "


def main():
    port, first, count = int(sys.argv[1]), ipaddress.ip_address(sys.argv[2]), int(sys.argv[3])
    spread, history = sys.argv[4] == "1", sys.argv[5]
    lock = threading.Lock()
    state = {"connected": 0, "closed": 0}

    def report(what):
        with lock:
            state[what] += 1
            with open(history, "a") as f:
                f.write(f"connected {state['connected']} closed {state['closed']}\n")

    def byte(i):  # the request's bytes, then an endless header value
        return REQUEST[i:i + 1] if i < len(REQUEST) else b"a"

    def drip(src):
        s = socket.socket()
        s.bind((str(src), 0))
        try:
            s.connect(("127.0.0.1", port))
        except OSError:
            return
        report("connected")
        i = 0
        while True:
            time.sleep(PERIOD)
            try:
                s.recv(1, socket.MSG_DONTWAIT)
                break  # EOF or an answer: the server ended it
            except BlockingIOError:
                pass  # nothing yet: still open
            except OSError:
                break  # reset
            try:
                s.send(byte(i))
            except OSError:
                break
            i += 1
        s.close()
        report("closed")

    for n in range(count):
        threading.Thread(target=drip, args=(first + n if spread else first,), daemon=True).start()
    while True:
        time.sleep(3600)


main()
