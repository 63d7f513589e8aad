"""The Python binding on a store with a remote tier, against the radosgw
tests/run.sh started: a write uploads and returns the path; with radosgw
stopped it still returns the path, warns PendingUploadWarning saying why,
and the result reads here; agentlink sync sends it afterwards."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "agentlink", "python"))
import agentlink  # noqa: E402

BUILD = os.environ.get("OFFLOADFS_BUILD", os.path.join(HERE, "..", "..", "build"))
AL = os.path.join(BUILD, "agentlink")


def rgw_pid():
    with open(os.path.join(os.environ["OFFLOADFS_S3_DIR"], "run", "client.rgw.offloadfs.pid")) as f:
        return int(f.read())


def stop(pid):
    """SIGSTOP, then wait until every thread has stopped."""
    os.kill(pid, signal.SIGSTOP)
    for _ in range(100):
        tasks = os.listdir("/proc/%d/task" % pid)
        states = []
        for t in tasks:
            with open("/proc/%d/task/%s/stat" % (pid, t)) as f:
                states.append(f.read().rsplit(")", 1)[1].split()[0])
        if all(s == "T" for s in states):
            return
        time.sleep(0.02)
    raise AssertionError("radosgw did not stop")


class RemoteBinding(unittest.TestCase):
    def setUp(self):
        if not os.environ.get("AWS_ENDPOINT_URL") or not os.environ.get("OFFLOADFS_S3_DIR"):
            self.fail("no S3 server: run through tests/run.sh")
        self.tmp = tempfile.mkdtemp(prefix="offloadfs-py-remote.")
        self.store = os.path.join(self.tmp, "s")
        self.url = "s3://%s/py-%d-%d" % (os.environ["OFFLOADFS_S3_BUCKET"], os.getpid(), time.time_ns())
        subprocess.run([AL, "--store", self.store, "init", "--remote", self.url], check=True,
                       stdout=subprocess.DEVNULL)
        os.environ["OFFLOADFS_REMOTE_STALL_SECONDS"] = "1"
        os.environ["OFFLOADFS_REMOTE_RETRIES"] = "0"

    def tearDown(self):
        os.kill(rgw_pid(), signal.SIGCONT)
        shutil.rmtree(self.tmp)

    def stats(self):
        out = subprocess.run([AL, "--store", self.store, "stats"], check=True,
                             capture_output=True, text=True).stdout
        return dict(line.split(": ", 1) for line in out.splitlines())

    def test_write_uploads_and_returns_the_path(self):
        with agentlink.ToolResultStore(store=self.store) as st:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # no warning on success
                path = st.write(key="k1", content="on the remote")
        self.assertEqual(path, "/large_tool_results/k1")
        self.assertEqual(self.stats()["pending"], "0")

    def test_write_with_the_remote_stopped_warns_and_keeps_it(self):
        pid = rgw_pid()
        with agentlink.ToolResultStore(store=self.store) as st:
            stop(pid)
            try:
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    path = st.write(key="k2", content="pending bytes")
            finally:
                os.kill(pid, signal.SIGCONT)
            self.assertEqual(path, "/large_tool_results/k2")
            self.assertEqual(len(w), 1)
            self.assertIs(w[0].category, agentlink.PendingUploadWarning)
            self.assertIn("'k2' is stored here but not yet on the remote (PUT s3://", str(w[0].message))
            self.assertEqual(st.read("k2"), "pending bytes")
        self.assertEqual(self.stats()["pending"], "1")
        for _ in range(5):
            r = subprocess.run([AL, "--store", self.store, "sync"], capture_output=True, text=True)
            if r.returncode == 0:
                break
            time.sleep(0.3)
        self.assertEqual(r.stdout, "1 uploaded, 0 pending\n")


if __name__ == "__main__":
    unittest.main()
