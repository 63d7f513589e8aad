"""test_threads.py -- ToolResultStore objects made, used and closed by many
threads at once, the way a thread pool that builds a store per task does;
and os.fork() while such stores are open and writing.

Each scenario runs in a child Python, so that a crash (SIGSEGV) fails its
test instead of the whole suite. Every write that returned a path must read
back with its exact content; keys name their content so nothing else is
needed to check them.

Run by tests/run.sh as: python3 -m unittest -v tests/agentlink/test_threads.py
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PYPATH = os.path.join(TOP, "agentlink", "python")

COMMON = r"""
import json, os, sys, threading
import agentlink
store_dir = sys.argv[1]


def content(key, size):
    # Text zstd cannot shrink much: a result fills the store like a real one.
    import hashlib
    out, n = [], 0
    while n < size:
        h = hashlib.sha256(("%s:%d" % (key, n)).encode()).hexdigest()
        out.append(h)
        n += len(h)
    return "".join(out)[:size]


def check(keys, size):
    # Every acknowledged key, read through a fresh store: the exact text.
    s = agentlink.ToolResultStore(store=store_dir)
    bad = []
    for k in keys:
        try:
            if s.read(k) != content(k, size):
                bad.append([k, "wrong content"])
        except Exception as e:
            bad.append([k, repr(e)])
    s.close()
    return bad
"""

# Threads meet at a barrier, each makes its own store object, writes, closes
# it, and does it again: opens and closes race other threads' writes.
OPEN_AT_ONCE = COMMON + r"""
threads, rounds, puts, size = (int(a) for a in sys.argv[2:6])
agentlink.ToolResultStore(store=store_dir).write(key="seed", content="x")
barrier = threading.Barrier(threads)
acked, errors, lock = [], [], threading.Lock()


def worker(n):
    for r in range(rounds):
        barrier.wait()
        try:
            s = agentlink.ToolResultStore(store=store_dir)
            for i in range(puts):
                k = "t%d-%d-%d" % (n, r, i)
                path = s.write(key=k, content=content(k, size))
                if not path.endswith("/" + k):
                    raise AssertionError("path %r" % path)
                with lock:
                    acked.append(k)
            s.close()
        except Exception as e:
            with lock:
                errors.append(repr(e))


ts = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(json.dumps({"acked": len(acked), "errors": errors, "bad": check(acked, size)}))
"""

# Stores open in the parent and threads writing through them while the main
# thread forks. The child writes through an inherited store and a new one,
# and reads the parent's result; the parent, after the child, reads all.
FORK = COMMON + r"""
import warnings
warnings.simplefilter("ignore", DeprecationWarning)  # fork() with threads: on purpose
size = 50000
first = agentlink.ToolResultStore(store=store_dir)
first.write(key="before", content=content("before", size))
acked, errors, lock, stop = [], [], threading.Lock(), threading.Event()


def writer(n):
    s = agentlink.ToolResultStore(store=store_dir)
    i = 0
    while not stop.is_set() or i < 3:
        k = "p%d-%d" % (n, i)
        try:
            s.write(key=k, content=content(k, size))
            with lock:
                acked.append(k)
        except Exception as e:
            with lock:
                errors.append(repr(e))
            break
        i += 1
    s.close()


ts = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
for t in ts:
    t.start()
children = []
for c in range(3):
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            k = "c%d-inherited" % c
            first.write(key=k, content=content(k, size))
            own = agentlink.ToolResultStore(store=store_dir)
            k2 = "c%d-own" % c
            own.write(key=k2, content=content(k2, size))
            if own.read("before") != content("before", size) or first.read(k2) != content(k2, size):
                code = 3
            own.close()
            first.close()
        except BaseException as e:
            sys.stderr.write("child: %r\n" % (e,))
            code = 2
        os._exit(code)
    children.append(pid)
statuses = [os.waitpid(p, 0)[1] for p in children]
stop.set()
for t in ts:
    t.join()
first.write(key="after", content=content("after", size))
first.close()
keys = acked + ["before", "after"] + ["c%d-%s" % (c, w) for c in range(3) for w in ("inherited", "own")]
print(json.dumps({"statuses": statuses, "errors": errors, "bad": check(keys, size)}))
"""


class Threads(unittest.TestCase):
    def setUp(self):
        self.base = tempfile.mkdtemp(prefix="offloadfs-pythr.")
        self.dir = os.path.join(self.base, "store")

    def tearDown(self):
        shutil.rmtree(self.base, ignore_errors=True)

    def run_script(self, script, *args):
        env = dict(os.environ, PYTHONPATH=PYPATH)
        for v in ("OFFLOADFS_STORE", "OFFLOADFS_NAMESPACE", "OFFLOADFS_MOUNT", "OFFLOADFS_CONFIG"):
            env.pop(v, None)
        r = subprocess.run([sys.executable, "-c", script, self.dir] + [str(a) for a in args],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        self.assertEqual(r.returncode, 0, "child died: %r\n%s" % (r.returncode, r.stderr.decode()))
        return json.loads(r.stdout)

    def test_stores_opened_at_once_by_threads_keep_every_write(self):
        threads, rounds, puts = 8, 3, 4
        got = self.run_script(OPEN_AT_ONCE, threads, rounds, puts, 200000)
        self.assertEqual(got["errors"], [])
        self.assertEqual(got["acked"], threads * rounds * puts)
        self.assertEqual(got["bad"], [])

    # Under make test-asan libasan is preloaded into Python, whose threads
    # then allocate through ASan's allocator. Debian 12's libasan (GCC 12)
    # takes no allocator lock around fork (ASan gained its pthread_atfork
    # handler in LLVM 18), so a child forked while another thread is inside
    # malloc inherits that lock held and hangs on its first allocation (seen
    # in gdb: a child waiting in SizeClassAllocator64::GetFromAllocator under
    # Python's hashlib): a runtime limitation, not the library's. make test runs this case, and
    # the C fork tests (tests/store, tests/agentlink test_threads.c) run
    # under ASan, valgrind and ThreadSanitizer.
    @unittest.skipIf("libasan" in os.environ.get("LD_PRELOAD", ""),
                     "fork with writing threads: not under a preloaded ASan runtime")
    def test_fork_while_stores_are_open_and_writing(self):
        got = self.run_script(FORK)
        self.assertEqual(got["statuses"], [0, 0, 0])
        self.assertEqual(got["errors"], [])
        self.assertEqual(got["bad"], [])


if __name__ == "__main__":
    unittest.main()
