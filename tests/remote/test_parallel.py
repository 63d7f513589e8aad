"""Uploads in parallel, against the radosgw tests/run.sh started, behind a
relay that delays each request 50 ms (tests/tools/latency_relay.py, whose
log these tests read): threads on one handle, and handles of one process,
upload at the same time (the relay sees their requests overlap), every
result is PUT exactly once (no write's catch-up sends again what another
writer is sending), and with the server refusing every connection each
write fails once, its own attempts only, while the others' attempts overlap
it rather than queue behind it. Counts and orders at the relay, never
durations."""
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(TOP, "agentlink", "python"))
import agentlink  # noqa: E402

BUILD = os.environ.get("OFFLOADFS_BUILD", os.path.join(TOP, "build"))
AL = os.path.join(BUILD, "agentlink")
RELAY = os.path.join(TOP, "tests", "tools", "latency_relay.py")
THREADS = 8
PER_THREAD = 4
DEADLINE = 300  # seconds a thread may take before the test gives up (a wait, not a bar)


def events(log):
    with open(log) as f:
        return [line.split() for line in f]


def max_overlap(evs, start, end):
    """The most START..END intervals (per connection) open at once."""
    open_, best = set(), 0
    for e in evs:
        if e[0] == start:
            open_.add(e[1])
            best = max(best, len(open_))
        elif e[0] == end:
            open_.discard(e[1])
    return best


class Parallel(unittest.TestCase):
    def setUp(self):
        if not os.environ.get("AWS_ENDPOINT_URL") or not os.environ.get("OFFLOADFS_S3_BUCKET"):
            self.fail("no S3 server: run through tests/run.sh")
        self.tmp = tempfile.mkdtemp(prefix="offloadfs-parallel.")
        self.store = os.path.join(self.tmp, "s")
        self.url = "s3://%s/par-%d-%d" % (os.environ["OFFLOADFS_S3_BUCKET"], os.getpid(), time.time_ns())
        subprocess.run([AL, "--store", self.store, "init", "--remote", self.url], check=True,
                       stdout=subprocess.DEVNULL)
        self.env = dict(os.environ)
        self.relay = None

    def tearDown(self):
        os.environ.clear()
        os.environ.update(self.env)
        if self.relay:
            self.relay.kill()
            self.relay.wait()
        shutil.rmtree(self.tmp)

    def start_relay(self, *opts):
        """Starts the relay before radosgw; later opens of the tier go through it."""
        d = os.path.join(self.tmp, "relay")
        os.mkdir(d)
        target = self.env["AWS_ENDPOINT_URL"].split("//", 1)[1].rstrip("/")
        self.relay = subprocess.Popen([sys.executable, RELAY, d, target] + list(opts))
        port = os.path.join(d, "port")
        for _ in range(1000):
            if os.path.exists(port):
                break
            time.sleep(0.01)
        with open(port) as f:
            os.environ["AWS_ENDPOINT_URL"] = "http://127.0.0.1:" + f.read()
        self.log = os.path.join(d, "log")

    def stats(self):
        out = subprocess.run([AL, "--store", self.store, "stats"], check=True,
                             capture_output=True, text=True).stdout
        return dict(line.split(": ", 1) for line in out.splitlines())

    def run_writers(self, stores, per_thread):
        """THREADS threads, thread i writing through stores[i], at once.
        Returns the warnings issued."""
        errors, go = [], threading.Barrier(THREADS)

        def writer(i):
            try:
                go.wait()
                for j in range(per_thread):
                    k = "t%d_%d" % (i, j)
                    stores[i].write(key=k, content=("%s " % k) * 500)
            except Exception as e:  # noqa: BLE001 -- reported below
                errors.append(e)

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ts = [threading.Thread(target=writer, args=(i,)) for i in range(THREADS)]
            for t in ts:
                t.start()
            for t in ts:
                t.join(DEADLINE)
                self.assertFalse(t.is_alive(), "a writer still runs after %d s" % DEADLINE)
        self.assertEqual(errors, [])
        return w

    def puts_by_key(self):
        n = {}
        for e in events(self.log):
            if e[0] == "req" and e[2] == "PUT" and "?" not in e[3]:
                k = e[3].rsplit("/", 1)[1]
                n[k] = n.get(k, 0) + 1
        return n

    def check_uploaded_once(self, w):
        self.assertEqual([str(x.message) for x in w], [])
        want = {"t%d_%d" % (i, j): 1 for i in range(THREADS) for j in range(PER_THREAD)}
        self.assertEqual(self.puts_by_key(), want)
        self.assertEqual(self.stats()["pending"], "0")
        # several writers' requests were outstanding at once
        self.assertGreaterEqual(max_overlap(events(self.log), "req", "resp"), 2)

    def test_threads_on_one_handle_upload_at_once_and_each_once(self):
        self.start_relay("--delay-ms", "50")
        with agentlink.ToolResultStore(store=self.store) as st:
            w = self.run_writers([st] * THREADS, PER_THREAD)
        self.check_uploaded_once(w)

    def test_handles_of_one_process_send_each_version_once(self):
        self.start_relay("--delay-ms", "50")
        stores = [agentlink.ToolResultStore(store=self.store) for _ in range(THREADS)]
        try:
            w = self.run_writers(stores, PER_THREAD)
        finally:
            for st in stores:
                st.close()
        self.check_uploaded_once(w)

    def test_refused_writes_fail_once_each_and_not_in_a_queue(self):
        os.environ["OFFLOADFS_REMOTE_RETRIES"] = "1"
        os.environ["OFFLOADFS_REMOTE_STALL_SECONDS"] = "2"
        self.start_relay("--refuse-hold-ms", "200")
        with agentlink.ToolResultStore(store=self.store) as st:
            w = self.run_writers([st] * THREADS, 1)
            # each write: one warning, its own, and the result reads here
            msgs = sorted(str(x.message) for x in w)
            self.assertEqual(len(msgs), THREADS, msgs)
            self.assertTrue(all(x.category is agentlink.PendingUploadWarning for x in w))
            for i in range(THREADS):
                self.assertEqual(sum("'t%d_0'" % i in m for m in msgs), 1, msgs)
                self.assertEqual(st.read("t%d_0" % i), ("t%d_0 " % i) * 500)
        self.assertEqual(self.stats()["pending"], str(THREADS))
        evs = events(self.log)
        opens = sum(1 for e in evs if e[0] == "open")
        # its own attempts only (1 + 1 retry each), no catch-up of others'
        self.assertGreaterEqual(opens, THREADS)
        self.assertLessEqual(opens, THREADS * 2)
        # the writers' attempts overlapped: none waited for another's to end
        self.assertGreaterEqual(max_overlap(evs, "open", "close"), 2)


if __name__ == "__main__":
    unittest.main()
