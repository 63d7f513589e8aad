"""test_binding.py -- the Python binding (agentlink/python/agentlink.py).

Run by tests/run.sh as: python3 -m unittest -v tests/agentlink/test_binding.py
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "agentlink", "python"))
BUILD = os.environ.get("OFFLOADFS_BUILD") or os.path.join(TOP, "build")
CLI = os.path.join(BUILD, "agentlink")

import agentlink  # noqa: E402

ENV_VARS = ("OFFLOADFS_STORE", "OFFLOADFS_NAMESPACE", "OFFLOADFS_MOUNT", "OFFLOADFS_CONFIG")


CLOSE_RACE = r"""
import json, random, sys, threading, time
import agentlink
store_dir, rounds = sys.argv[1], int(sys.argv[2])
content = "".join("line %07d of the result\n" % i for i in range((1 << 20) // 25 + 1))[:1 << 20]
agentlink.ToolResultStore(store=store_dir).write(key="k", content=content)
stats = {"exact": 0, "closed": 0, "readers": 0, "bad": []}
lock = threading.Lock()


def reader(s, started):
    started.wait()
    while True:
        try:
            got = s.read("k")
        except ValueError as e:
            with lock:
                if str(e) == "ToolResultStore is closed":
                    stats["closed"] += 1
                else:
                    stats["bad"].append(repr(e))
            return
        except Exception as e:
            with lock:
                stats["bad"].append(repr(e))
            return
        with lock:
            if got == content:
                stats["exact"] += 1
            else:
                stats["bad"].append("wrong text, %d characters" % len(got))


for r in range(rounds):
    n = 2 + r % 7  # 2 to 8 readers
    s = agentlink.ToolResultStore(store=store_dir)
    started = threading.Barrier(n + 1)
    threads = [threading.Thread(target=reader, args=(s, started)) for _ in range(n)]
    for t in threads:
        t.start()
    stats["readers"] += n
    started.wait()
    time.sleep(random.uniform(0, 0.005))
    s.close()
    for t in threads:
        t.join()
print(json.dumps(stats))
"""


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="offloadfs-py.")
        self.dir = os.path.join(self.tmp, "store")
        self.saved = {k: os.environ.pop(k, None) for k in ENV_VARS}

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(self.tmp, ignore_errors=True)

    def cli(self, *args, stdin=b""):
        return subprocess.run([CLI, "--store", self.dir, *args], input=stdin,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)


class HaystackShape(Base):
    def test_write_then_read_round_trips_by_path_and_key(self):
        store = agentlink.ToolResultStore(store=self.dir)
        content = "Résumé of the search ✓\n" * 2000
        path = store.write(key="call_1", content=content)
        self.assertEqual(path, "/large_tool_results/call_1")
        self.assertEqual(store.read(path), content)
        self.assertEqual(store.read("call_1"), content)
        # the CLI sees the same bytes
        got = self.cli("get", "call_1")
        self.assertEqual(got.returncode, 0)
        self.assertEqual(got.stdout, content.encode())

    def test_write_replaces_an_existing_key(self):
        store = agentlink.ToolResultStore(store=self.dir)
        store.write(key="k", content="first")
        store.write(key="k", content="second")
        self.assertEqual(store.read("k"), "second")

    def test_read_of_a_never_written_key_raises_file_not_found(self):
        store = agentlink.ToolResultStore(store=self.dir)
        with self.assertRaises(FileNotFoundError):
            store.read("never")  # no store at all yet
        self.assertFalse(os.path.exists(self.dir))
        store.write(key="other", content="x")
        with self.assertRaises(FileNotFoundError) as cm:
            store.read("/large_tool_results/never")
        self.assertEqual(cm.exception.filename, "/large_tool_results/never")

    def test_read_of_an_evicted_key_raises_evicted_error(self):
        # Raw values: "z" * 40000 would shrink to a few bytes compressed.
        self.assertEqual(self.cli("init", "--max-total-bytes", "100K",
                                  "--compression", "none").returncode, 0)
        store = agentlink.ToolResultStore(store=self.dir)
        for k in ("a", "b", "c"):
            store.write(key=k, content="z" * 40000)
        with self.assertRaises(agentlink.EvictedError) as cm:
            store.read("a")
        e = cm.exception
        self.assertIsInstance(e, LookupError)
        self.assertEqual(e.reason, "evicted")
        self.assertEqual(e.key, "a")
        self.assertRegex(e.evicted_at, r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertIn("evicted", str(e))
        self.assertIn("run the tool again", str(e))
        self.assertEqual(store.read("c"), "z" * 40000)

    def test_delete_leaves_the_key_removed(self):
        store = agentlink.ToolResultStore(store=self.dir)
        path = store.write(key="k", content="v")
        store.delete(path)
        with self.assertRaises(agentlink.EvictedError) as cm:
            store.read(path)
        self.assertEqual(cm.exception.reason, "removed")

    def test_escaping_keys_and_foreign_paths_raise_value_error(self):
        # Other invalid keys are mapped (test_haystack.py); these never are.
        store = agentlink.ToolResultStore(store=self.dir)
        with self.assertRaisesRegex(ValueError, r"key '\.\./x' would escape the store"):
            store.write(key="../x", content="v")
        with self.assertRaisesRegex(ValueError, "not a path directly under the mount"):
            store.read("/etc/passwd")
        self.assertFalse(os.path.exists(self.dir))

    def test_mount_and_namespace_follow_argument_then_environment(self):
        os.environ["OFFLOADFS_STORE"] = self.dir
        os.environ["OFFLOADFS_NAMESPACE"] = "envns"
        os.environ["OFFLOADFS_MOUNT"] = "/env/mnt"
        store = agentlink.ToolResultStore()
        self.assertEqual((store.store, store.namespace, store.mount),
                         (self.dir, "envns", "/env/mnt"))
        self.assertEqual(store.write(key="k", content="v"), "/env/mnt/k")
        self.assertEqual(store.read("/env/mnt/k"), "v")
        mine = agentlink.ToolResultStore(namespace="mine", mount="/m/")
        self.assertEqual((mine.namespace, mine.mount), ("mine", "/m"))
        with self.assertRaises(FileNotFoundError):
            mine.read("k")  # namespaces are isolated
        self.assertEqual(self.cli("get", "k", "--namespace", "envns").stdout, b"v")

    def test_bytes_are_kept_exactly(self):
        store = agentlink.ToolResultStore(store=self.dir)
        blob = bytes(range(256)) * 10
        store.write(key="bin", content=blob)
        self.assertEqual(store.read_bytes("bin"), blob)
        self.assertIn("\ufffd", store.read("bin"))


class Offload(Base):
    def test_small_results_come_back_unchanged(self):
        content = "short"
        self.assertIs(agentlink.offload("bash", "id1", content, store=self.dir), content)
        self.assertFalse(os.path.exists(self.dir))

    def test_large_results_become_a_pointer_to_the_stored_bytes(self):
        content = "".join("line %d\n" % i for i in range(40000))
        text = agentlink.offload("bash", "call/../1", content, store=self.dir)
        key = agentlink.derive_key("call/../1")
        self.assertIn("/large_tool_results/" + key, text)
        self.assertIn('"No data available"', text)
        self.assertLess(len(text), 4096)
        store = agentlink.ToolResultStore(store=self.dir)
        self.assertEqual(store.read(key), content)

    def test_config_decides_per_tool(self):
        config = {"rules": [{"tools": ["web_search"], "offload": "always"},
                            {"tools": ["*"], "offload": "never"}]}
        self.assertEqual(agentlink.offload("bash", "b", "x" * 100000, config, store=self.dir),
                         "x" * 100000)
        text = agentlink.offload("web_search", "w", "tiny", config, store=self.dir)
        self.assertTrue(text.startswith("[offloadfs]"))

    def test_config_file_and_environment(self):
        path = os.path.join(self.tmp, "p.json")
        with open(path, "w") as f:
            f.write('{"mount": "/cfg", "rules": [{"tools": ["*"], "offload": "always"}]}')
        self.assertIn("/cfg/k1\n", agentlink.offload("t", "k1", "v", path, store=self.dir))
        os.environ["OFFLOADFS_CONFIG"] = path
        self.assertIn("/cfg/k2\n", agentlink.offload("t", "k2", "v", store=self.dir))

    def test_a_refused_config_raises_and_writes_nothing(self):
        bad = {"rules": [{"tools": ["a"], "offload": {"over_chars": "4000"}}]}
        with self.assertRaisesRegex(agentlink.ConfigError,
                                    r"field 'rules\[0\]\.offload\.over_chars': expected a non-negative integer"):
            agentlink.offload("a", "x", "v" * 100000, bad, store=self.dir)
        with self.assertRaisesRegex(agentlink.ConfigError, "No such file"):
            agentlink.offload("a", "x", "v", os.path.join(self.tmp, "none.json"), store=self.dir)
        self.assertFalse(os.path.exists(self.dir))

    def test_derive_key_matches_the_cli(self):
        for raw in ("call_1", "a/b", "x" * 1500, "..", "id with space"):
            cli = subprocess.run([CLI, "key", raw], stdout=subprocess.PIPE, check=True)
            self.assertEqual(agentlink.derive_key(raw), cli.stdout.decode().rstrip("\n"))


class EmptyAndTypes(Base):
    """One behaviour on every surface: empty content as the CLI stores it; offload() gives str."""

    def test_empty_content_is_a_zero_byte_entry_as_with_the_cli(self):
        store = agentlink.ToolResultStore(store=self.dir)
        self.assertEqual(store.write(key="e_py", content=""), "/large_tool_results/e_py")
        self.assertEqual(store.write(key="e_pyb", content=b""), "/large_tool_results/e_pyb")
        put = self.cli("put", "e_cli", stdin=b"")
        self.assertEqual((put.returncode, put.stdout, put.stderr),
                         (0, b"/large_tool_results/e_cli\n", b""))
        for key in ("e_py", "e_pyb", "e_cli"):
            self.assertEqual(store.read(key), "")
            self.assertEqual(store.read_bytes(key), b"")
            got = self.cli("get", key)
            self.assertEqual((got.returncode, got.stdout), (0, b""))

    def test_offload_always_returns_str(self):
        always = {"rules": [{"tools": ["*"], "offload": "always"}]}
        never = {"rules": [{"tools": ["*"], "offload": "never"}]}
        cases = [("text ✓", "text ✓"), (b"kept bytes", "kept bytes"),
                 ("caf\u00e9".encode(), "caf\u00e9"),
                 (b"\xe9t\xe9\xff", "\ufffdt\ufffd\ufffd"), ("", ""), (b"", "")]
        for content, want in cases:
            got = agentlink.offload("t", "c", content, never, store=self.dir)
            self.assertIs(type(got), str, content)
            self.assertEqual(got, want)
            # the CLI keeps the same bytes; the binding shows invalid ones as U+FFFD
            cli = self.cli("offload", "--tool", "t", "--call-id", "c", stdin=_bytes(content))
            self.assertEqual(cli.stdout.decode("utf-8", "replace"), want)
        for content in (b"stored bytes \xe9", "stored text"):
            got = agentlink.offload("t", "c2", content, always, store=self.dir)
            self.assertIs(type(got), str)
            self.assertIn("/large_tool_results/c2\n", got)
        # an empty result is never offloaded, whatever the policy
        self.assertEqual(agentlink.offload("t", "c3", b"", always, store=self.dir), "")


def _bytes(content):
    return content if isinstance(content, bytes) else content.encode()


class Surrogates(Base):
    """Text holding lone surrogates (json.loads('"\\ud800"') makes them)
    is stored, never refused: each one no UTF-8 can hold becomes U+FFFD, as
    Node's Buffer.from() stores it; a split pair is the character; the
    surrogateescape range (\\udc80-\\udcff, os.fsdecode's) stays its byte."""

    CASES = [
        ("a\ud800b", "a\ufffdb".encode()),
        ("\udfff end", "\ufffd end".encode()),
        ("pair \ud83d\ude00 ok", "pair \U0001f600 ok".encode()),
        ("esc \udc80\udcff", b"esc \x80\xff"),
        ("mixed \udc80\ud800", b"mixed \x80" + "\ufffd".encode()),
        (json.loads('"\\udbff\\u00e9"'), "\ufffd\u00e9".encode()),
    ]

    def test_write_stores_text_with_lone_surrogates(self):
        store = agentlink.ToolResultStore(store=self.dir)
        for i, (text, want) in enumerate(self.CASES):
            path = store.write(key="s%d" % i, content=text)
            self.assertEqual(store.read_bytes(path), want, repr(text))
            got = self.cli("get", "s%d" % i)
            self.assertEqual((got.returncode, got.stdout), (0, want), repr(text))

    def test_offload_and_should_offload_take_them(self):
        always = {"rules": [{"tools": ["*"], "offload": "always"}]}
        never = {"rules": [{"tools": ["*"], "offload": "never"}]}
        text = "result \ud800 " * 5
        self.assertEqual(agentlink.offload("t", "c", text, never, store=self.dir), text)
        got = agentlink.offload("t", "call\ud800", text, always, store=self.dir)
        self.assertIn("/large_tool_results/call", got)
        key = agentlink.derive_key("call\ud800")
        self.assertEqual(self.cli("get", key).stdout, ("result \ufffd " * 5).encode())
        policy = agentlink.PolicyFile()
        self.assertFalse(policy.should_offload("t", "small \ud800"))
        self.assertTrue(policy.should_offload("t", "\ud800" * 40000))


FORK_WHILE_BUSY = r"""
import json, os, signal, sys, threading
import agentlink
store_dir, children = sys.argv[1], int(sys.argv[2])
s = agentlink.ToolResultStore(store=store_dir)
s.write(key="k", content="parent\n" * 1000)
stop = threading.Event()


def busy():
    # Keeps a call inside the library (its handle locked) most of the time.
    while not stop.is_set():
        s.write(key="busy", content="b" * 4096)


threads = [threading.Thread(target=busy) for _ in range(2)]
for t in threads:
    t.start()
results = []
for i in range(children):
    pid = os.fork()
    if pid == 0:
        signal.alarm(5)  # a child stuck on the parent's handle dies here
        try:
            ok = s.read("k") == "parent\n" * 1000
            s.write(key="child%d" % i, content="from child %d" % i)
            os._exit(0 if ok and s.read("child%d" % i) == "from child %d" % i else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    results.append(os.WTERMSIG(status) * 1000 if os.WIFSIGNALED(status)
                   else os.WEXITSTATUS(status))
    if results[-1]:
        break
stop.set()
for t in threads:
    t.join()
print(json.dumps({"results": results, "parent": s.read("k") == "parent\n" * 1000}))
"""


class Robustness(Base):
    def test_a_relative_store_stays_where_it_was_opened_after_chdir(self):
        os.makedirs(os.path.join(self.tmp, "elsewhere"))
        here = os.getcwd()
        try:
            os.chdir(self.tmp)
            store = agentlink.ToolResultStore(store="store")
            store.write(key="k1", content="one")
            os.chdir("elsewhere")
            self.assertEqual(store.read("k1"), "one")
            store.write(key="k2", content="two")
            self.assertFalse(os.path.exists("store"))
        finally:
            os.chdir(here)
        self.assertEqual(self.cli("get", "k2").stdout, b"two")
        self.assertEqual(store.to_dict()["init_parameters"]["store"], "store")

    def test_a_child_forked_while_threads_use_the_store_gets_its_own_handle(self):
        # os.fork() (multiprocessing's fork, gunicorn's preload) copies the
        # handle's mutex locked when another thread is inside a call: the
        # child used to wait on it forever. It must open its own handle.
        env = dict(os.environ, PYTHONPATH=os.path.join(TOP, "agentlink", "python"))
        r = subprocess.run([sys.executable, "-c", FORK_WHILE_BUSY, self.dir, "12"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        got = json.loads(r.stdout)
        # 14000: killed by SIGALRM (14), i.e. hung for 5 s.
        self.assertEqual(got, {"results": [0] * 12, "parent": True})
        for i in range(12):
            self.assertEqual(self.cli("get", "child%d" % i).stdout, b"from child %d" % i)

    def test_a_store_that_disappears_reads_as_empty_and_comes_back(self):
        store = agentlink.ToolResultStore(store=self.dir)
        store.write(key="k", content="v")
        shutil.rmtree(self.dir)
        with self.assertRaises(FileNotFoundError):
            store.read("k")
        store.write(key="k2", content="again")
        self.assertEqual(store.read("k2"), "again")
        self.assertEqual(self.cli("get", "k2").stdout, b"again")

    @unittest.skipIf("libasan" in os.environ.get("LD_PRELOAD", ""),
                     "ASan's quarantine keeps freed memory: RSS says nothing there")
    def test_no_leak_over_many_calls(self):
        store = agentlink.ToolResultStore(store=self.dir)
        content = "y" * 100000

        def burst(n):
            for i in range(n):
                store.write(key="k%d" % (i % 10), content=content)
                store.read("k%d" % (i % 10))
                try:
                    store.read("missing")
                except FileNotFoundError:
                    pass
                agentlink.derive_key("a/b" * 100)

        burst(200)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        burst(1500)
        grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        # a leak of one 100 KB value per call would be 150 MB
        self.assertLess(grown_kb, 20 * 1024)

    def test_threads_share_one_store(self):
        store = agentlink.ToolResultStore(store=self.dir)
        errors = []

        def worker(n):
            try:
                for i in range(50):
                    key = "t%d-%d" % (n, i)
                    store.write(key=key, content=key * 100)
                    if store.read(key) != key * 100:
                        errors.append(key)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

    def test_closed_store_raises(self):
        store = agentlink.ToolResultStore(store=self.dir)
        store.close()
        store.close()  # twice is fine
        with self.assertRaises(ValueError):
            store.read("k")

    def test_close_racing_reads_never_crashes(self):
        # Threads loop read() on a 1 MB result while the main thread closes
        # the handle. Each read returns the exact text or raises the closed
        # error; before the use count, the handle was freed under a reader
        # (SIGSEGV) or its mutex destroyed while held (hang). A child
        # process, so that a crash fails this test rather than the suite.
        rounds = 40
        r = subprocess.run([sys.executable, "-c", CLOSE_RACE, self.dir, str(rounds)],
                           env=dict(os.environ, PYTHONPATH=os.path.join(TOP, "agentlink", "python")),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        self.assertEqual(r.returncode, 0, "child died: %r\n%s" % (r.returncode, r.stderr.decode()))
        stats = json.loads(r.stdout)
        self.assertEqual(stats["bad"], [])
        # every reader ends on the closed error, and the reads did overlap the close
        self.assertEqual(stats["closed"], stats["readers"])
        self.assertGreater(stats["exact"], 0)

    def test_agentlink_lib_is_honoured(self):
        code = "import agentlink; agentlink.derive_key('x')"
        env = dict(os.environ, AGENTLINK_LIB="/nonexistent/libagentlink.so",
                   PYTHONPATH=os.path.join(TOP, "agentlink", "python"))
        r = subprocess.run([sys.executable, "-c", code], env=env, stderr=subprocess.PIPE)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(b"/nonexistent/libagentlink.so", r.stderr)
        env["AGENTLINK_LIB"] = os.path.join(BUILD, "libagentlink.so")
        r = subprocess.run([sys.executable, "-c", code], env=env)
        self.assertEqual(r.returncode, 0)


class KeyText(Base):
    """A str key holding a lone surrogate is no text: write and read refuse
    it with a message that says so, where and what to do, and the error is
    still a UnicodeEncodeError (a ValueError). Nothing is stored, and the
    name with U+FFFD in its place keeps its own result."""

    WANT = ("key 'p\\ud800.txt' is not well-formed text: it holds a lone surrogate U+D800 at "
            "index 1, which is no character and has no UTF-8 form (U+DC80-U+DCFF, as "
            "os.fsdecode() makes them, stand for bytes and are taken as such); use a key made "
            "of whole characters, or bytes")

    def test_write_refuses_a_key_with_a_lone_surrogate_saying_why(self):
        store = agentlink.ToolResultStore(store=self.dir)
        store.write(key="p\ufffd.txt", content="B")
        with self.assertRaises(UnicodeEncodeError) as cm:
            store.write(key="p\ud800.txt", content="A")
        self.assertEqual(str(cm.exception), self.WANT)
        self.assertIsInstance(cm.exception, ValueError)
        self.assertEqual((cm.exception.start, cm.exception.end), (1, 2))
        self.assertEqual(store.read("p\ufffd.txt"), "B")
        listed = self.cli("ls").stdout.decode().splitlines()
        self.assertEqual([line.split("\t")[0] for line in listed], ["p\ufffd.txt"])

    def test_read_path_of_and_namespace_say_the_same(self):
        store = agentlink.ToolResultStore(store=self.dir)
        with self.assertRaisesRegex(UnicodeEncodeError, r"^reference 'q\\udfff' is not well-formed "
                                    r"text: it holds a lone surrogate U\+DFFF at index 1"):
            store.read("q\udfff")
        with self.assertRaisesRegex(ValueError, r"^key 'x\\udbff' is not well-formed text"):
            store.path_of("x\udbff")
        with self.assertRaisesRegex(ValueError, r"^namespace 'n\\ud800' is not well-formed text"):
            agentlink.ToolResultStore(store=self.dir, namespace="n\ud800")

    def test_surrogateescape_bytes_are_still_taken(self):
        store = agentlink.ToolResultStore(store=self.dir)
        path = store.write(key="raw\udcff", content="bytes")
        self.assertEqual(store.read(path), "bytes")
        self.assertEqual(store.read(b"raw\xff"), "bytes")


if __name__ == "__main__":
    unittest.main()
