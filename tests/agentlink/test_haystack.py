"""test_haystack.py -- the binding as a drop-in for Haystack's tool result
offloading: ToolResultStore and PolicyFile against the ToolResultStore and
OffloadPolicy protocols (haystack.hooks.tool_result_offloading), checked with
the standard library only (Haystack cannot be installed here).

Run by tests/run.sh as: python3 -m unittest -v tests/agentlink/test_haystack.py
"""
import importlib
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "agentlink", "python"))
BUILD = os.environ.get("OFFLOADFS_BUILD") or os.path.join(TOP, "build")
CLI = os.path.join(BUILD, "agentlink")

import agentlink  # noqa: E402

ENV_VARS = ("OFFLOADFS_STORE", "OFFLOADFS_NAMESPACE", "OFFLOADFS_MOUNT", "OFFLOADFS_CONFIG")


def load_by_type(data):
    """What Haystack does with a serialised hook part: import the class the
    "type" names ("module.Class") and call its from_dict."""
    module, _, name = data["type"].rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    return cls.from_dict(data)


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="offloadfs-hs.")
        self.dir = os.path.join(self.tmp, "store")
        self.saved = {k: os.environ.pop(k, None) for k in ENV_VARS}

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(self.tmp, ignore_errors=True)

    def cli(self, *args, stdin=b"", env=None):
        return subprocess.run([CLI, "--store", self.dir, *args], input=stdin, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def policy_file(self, name, policy):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(policy if isinstance(policy, str) else json.dumps(policy))
        return path


class StoreProtocol(Base):
    def test_the_methods_haystack_calls_have_its_signatures(self):
        sig = inspect.signature(agentlink.ToolResultStore.write)
        self.assertEqual([(p.name, p.kind) for p in sig.parameters.values()],
                         [("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                          ("key", inspect.Parameter.KEYWORD_ONLY),
                          ("content", inspect.Parameter.KEYWORD_ONLY)])
        self.assertEqual(list(inspect.signature(agentlink.ToolResultStore.read).parameters),
                         ["self", "reference"])
        self.assertIsInstance(inspect.getattr_static(agentlink.ToolResultStore, "from_dict"),
                              classmethod)
        self.assertIs(agentlink.ToolResultStore.supports_binary_content, False)
        store = agentlink.ToolResultStore(store=self.dir)
        with self.assertRaises(TypeError):
            store.write("k", "v")  # keyword-only, as the protocol declares
        ref = store.write(key="2_web_search_call-123.txt", content="result ✓")
        self.assertEqual(ref, "/large_tool_results/2_web_search_call-123.txt")
        self.assertIs(type(store.read(ref)), str)
        self.assertEqual(store.read(ref), "result ✓")

    def test_to_dict_keeps_the_arguments_as_given(self):
        store = agentlink.ToolResultStore()
        self.assertEqual(store.to_dict(), {
            "type": "agentlink.ToolResultStore",
            "init_parameters": {"store": None, "namespace": None, "mount": None}})
        full = agentlink.ToolResultStore(store=self.dir, namespace="run7", mount="/mnt/r/")
        data = full.to_dict()
        self.assertEqual(data["init_parameters"],
                         {"store": self.dir, "namespace": "run7", "mount": "/mnt/r/"})
        self.assertEqual(json.loads(json.dumps(data)), data)  # plain JSON, as pipelines save it
        again = load_by_type(json.loads(json.dumps(data)))
        self.assertIsInstance(again, agentlink.ToolResultStore)
        self.assertEqual((again.store, again.namespace, again.mount), (self.dir, "run7", "/mnt/r"))
        self.assertEqual(again.to_dict(), data)
        from pathlib import Path
        self.assertEqual(agentlink.ToolResultStore(store=Path(self.dir)).to_dict()["init_parameters"]
                         ["store"], self.dir)

    def test_none_stays_none_so_the_environment_decides_at_load_time(self):
        data = agentlink.ToolResultStore(store=self.dir).to_dict()
        os.environ["OFFLOADFS_NAMESPACE"] = "at_load"
        os.environ["OFFLOADFS_MOUNT"] = "/loaded"
        again = agentlink.ToolResultStore.from_dict(data)
        self.assertEqual((again.store, again.namespace, again.mount), (self.dir, "at_load", "/loaded"))
        self.assertEqual(again.to_dict(), data)
        self.assertEqual(again.write(key="k", content="v"), "/loaded/k")
        got = self.cli("get", "k", "--namespace", "at_load")
        self.assertEqual((got.returncode, got.stdout), (0, b"v"))

    def test_from_dict_refuses_what_it_cannot_build(self):
        with self.assertRaisesRegex(ValueError, "type 'haystack.*FileSystemToolResultStore' is not "
                                                "'agentlink.ToolResultStore'"):
            agentlink.ToolResultStore.from_dict({
                "type": "haystack.hooks.tool_result_offloading.stores.FileSystemToolResultStore",
                "init_parameters": {"root": "x"}})
        with self.assertRaisesRegex(ValueError, "unknown init parameter 'root'"):
            agentlink.ToolResultStore.from_dict({"type": "agentlink.ToolResultStore",
                                                 "init_parameters": {"root": "x"}})
        with self.assertRaisesRegex(ValueError, "expected"):
            agentlink.ToolResultStore.from_dict({"init_parameters": {}})
        os.environ["OFFLOADFS_STORE"] = self.dir
        self.assertEqual(agentlink.ToolResultStore.from_dict({"type": "agentlink.ToolResultStore"}).store,
                         self.dir)


class Keys(Base):
    # Keys as Haystack's hook and its users make them: "{step}_{tool}_{id}.txt",
    # and FileSystemToolResultStore's subdirectories.
    NESTED = ["run_1/search_1.txt", "a/b/c.txt", "3_fetch_call/.../x.txt", ".hidden.txt",
              "run 2/id with spaces.txt", "ünï/çødé ✓.txt", "x" * 300 + ".txt", "tab\there.txt",
              "a//b.txt", "./a.txt", "a/b/"]

    def test_valid_keys_are_kept(self):
        store = agentlink.ToolResultStore(store=self.dir)
        for key in ("2_web_search_call-123.txt", "1_bash_call0.txt", "y" * 255):
            self.assertEqual(store.write(key=key, content=key), "/large_tool_results/" + key)
            self.assertEqual(store.read(key), key)

    def test_other_keys_go_through_the_cli_key_derivation_and_read_back(self):
        store = agentlink.ToolResultStore(store=self.dir)
        paths = set()
        for i, key in enumerate(self.NESTED):
            content = "result %d of %r\n" % (i, key) * 100
            ref = store.write(key=key, content=content)
            derived = subprocess.run([CLI, "key", key], stdout=subprocess.PIPE, check=True)
            derived = derived.stdout.decode().rstrip("\n")
            self.assertNotEqual(derived, key)
            self.assertEqual(ref, "/large_tool_results/" + derived, key)
            self.assertEqual(agentlink.derive_key(key), derived)
            self.assertEqual(store.path_of(key), ref)
            self.assertEqual(store.key_of(key), derived)
            self.assertEqual(store.read(ref), content)   # the reference write returned
            self.assertEqual(store.read(key), content)   # and the key Haystack gave
            got = self.cli("get", derived)              # the store holds it under the derived key
            self.assertEqual((got.returncode, got.stdout), (0, content.encode()), key)
            paths.add(ref)
        self.assertEqual(len(paths), len(self.NESTED))
        # nested keys never take the place of a flat one that looks alike
        store.write(key="run_1_search_1.txt", content="flat")
        self.assertEqual(store.read("run_1/search_1.txt"), "result 0 of 'run_1/search_1.txt'\n" * 100)
        # rewriting a nested key replaces it, as a rerun does
        self.assertEqual(store.write(key="a/b/c.txt", content="second"), store.path_of("a/b/c.txt"))
        self.assertEqual(store.read("a/b/c.txt"), "second")
        store.delete("a/b/c.txt")
        with self.assertRaises(agentlink.EvictedError):
            store.read("a/b/c.txt")

    def test_keys_that_escape_raise_value_error_and_write_nothing(self):
        store = agentlink.ToolResultStore(store=self.dir)
        for key in ("/etc/passwd", "/large_tool_results/k", "../x.txt", "a/../../x.txt",
                    "a/../b.txt", "..", "run_1/..", b"../x", "", "//x", "a\0b.txt", b"run\0/x"):
            # no file store takes a NUL either (open() raises ValueError)
            with self.assertRaisesRegex(ValueError, "escape the store|is empty|NUL", msg=key):
                store.write(key=key, content="v")
            if key and key != "/large_tool_results/k":  # a reference write may return
                with self.assertRaises(ValueError, msg=key):
                    store.read(key)
        self.assertFalse(os.path.exists(self.dir))
        with self.assertRaisesRegex(ValueError, "not a path directly under the mount"):
            store.read("/etc/passwd")
        with self.assertRaisesRegex(ValueError, "not a path directly under the mount"):
            store.read("/large_tool_results/run_1/search_1.txt")


class Policy(Base):
    CONTRACT = {
        "rules": [
            {"tools": ["web_search"], "offload": "always"},
            {"tools": ["get_time"], "offload": "never"},
            {"tools": ["read_file", "list_dir"], "offload": {"over_chars": 4000}},
            {"tools": ["*"], "offload": {"over_bytes": 32768}},
        ]}
    PATTERNS = {
        "rules": [
            {"tools": ["mcp_*"], "offload": {"over_tokens": 10}},
            {"tools": ["mcp_github_*"], "offload": "never"},
        ]}
    TOOLS = ["web_search", "get_time", "read_file", "list_dir", "bash", "mcp_github_issues",
             "mcp_fs_read"]
    RESULTS = ["", "x", "a" * 40, "a" * 41, "é" * 4000, "é" * 4001, "a" * 4001,
               "a" * 32768, "a" * 32769, "ü" * 16385, b"\xff" * 4001, b"\xff" * 40 + b"a"]

    def cli_decides(self, tool, result, config=None, env=None):
        args = ["--json", "offload", "--tool", tool, "--call-id", "c"]
        if config is not None:
            args[1:1] = ["--config", config]
        r = self.cli(*args, stdin=result if isinstance(result, bytes) else result.encode(),
                     env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout.decode("utf-8", "replace"))["offloaded"]

    def test_decisions_are_the_clis_on_the_same_inputs(self):
        contract = self.policy_file("contract.json", self.CONTRACT)
        patterns = self.policy_file("patterns.json", self.PATTERNS)
        empty = self.policy_file("empty.json", {"rules": []})
        env = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
        both = [0, 0]
        for path in (contract, patterns, empty, None):
            pol = agentlink.PolicyFile(path)
            for tool in self.TOOLS:
                for result in self.RESULTS:
                    want = self.cli_decides(tool, result, path, env)
                    got = pol.should_offload(tool, result, state=None)
                    self.assertIs(got, want, (path, tool, result[:8], len(result)))
                    both[want] += 1
        self.assertGreater(both[0], 50)  # the inputs straddle every threshold
        self.assertGreater(both[1], 50)

    def test_the_same_precedence_as_the_cli(self):
        contract = self.policy_file("contract.json", self.CONTRACT)
        patterns = self.policy_file("patterns.json", self.PATTERNS)
        os.environ["OFFLOADFS_CONFIG"] = patterns
        from_env = agentlink.PolicyFile()
        self.assertEqual(from_env.source, patterns)
        self.assertTrue(from_env.should_offload("mcp_fs_read", "a" * 41, None))
        self.assertFalse(from_env.should_offload("bash", "a" * 100000, None))
        self.assertEqual(self.cli_decides("bash", "a" * 100000), False)
        explicit = agentlink.PolicyFile(contract)  # a path beats the environment, as --config does
        self.assertTrue(explicit.should_offload("bash", "a" * 32769, None))
        self.assertEqual(self.cli_decides("bash", "a" * 32769, contract), True)
        os.environ["OFFLOADFS_CONFIG"] = ""  # set but empty: the built-in default
        default = agentlink.PolicyFile()
        self.assertIsNone(default.source)
        self.assertTrue(default.should_offload("mcp_fs_read", "a" * 32769, None))
        self.assertFalse(default.should_offload("mcp_fs_read", "a" * 32768, None))

    def test_the_same_errors_as_the_cli(self):
        cases = {
            "unknown.json": '{"rules": [], "extra": 1}',
            "type.json": '{"rules": [{"tools": ["a"], "offload": {"over_chars": "4000"}}]}',
            "broken.json": '{"rules": [',
            "empty.json": "",
        }
        paths = [self.policy_file(n, text) for n, text in cases.items()]
        paths.append(os.path.join(self.tmp, "missing.json"))
        for path in paths:
            with self.assertRaises(agentlink.ConfigError) as cm:
                agentlink.PolicyFile(path)
            self.assertIn("config '%s'" % path, str(cm.exception))
            r = self.cli("offload", "--config", path, "--tool", "t", "--call-id", "c", stdin=b"x")
            self.assertEqual(r.returncode, 2)
            self.assertEqual(r.stderr.decode(),
                             "agentlink: %s; nothing was written\n" % cm.exception)
            os.environ["OFFLOADFS_CONFIG"] = path  # through the environment too
            with self.assertRaises(agentlink.ConfigError) as env_cm:
                agentlink.PolicyFile()
            self.assertEqual(str(env_cm.exception), str(cm.exception))
            del os.environ["OFFLOADFS_CONFIG"]
        pol = agentlink.PolicyFile()
        for tool in ("", "a\nb", "t" * 256, b"\xff"):
            with self.assertRaisesRegex(ValueError, "tool"):
                pol.should_offload(tool, "x", None)
            r = self.cli("offload", "--tool", tool, "--call-id", "c", stdin=b"x")
            self.assertEqual(r.returncode, 2, tool)
        self.assertFalse(os.path.exists(self.dir))

    def test_to_dict_round_trips_the_path(self):
        contract = self.policy_file("contract.json", self.CONTRACT)
        patterns = self.policy_file("patterns.json", self.PATTERNS)
        data = agentlink.PolicyFile(contract).to_dict()
        self.assertEqual(data, {"type": "agentlink.PolicyFile", "init_parameters": {"path": contract}})
        again = load_by_type(json.loads(json.dumps(data)))
        self.assertEqual((again.path, again.source), (contract, contract))
        self.assertTrue(again.should_offload("web_search", "x", None))
        data = agentlink.PolicyFile().to_dict()
        self.assertEqual(data["init_parameters"], {"path": None})
        os.environ["OFFLOADFS_CONFIG"] = patterns  # None stays None: the environment decides at load
        again = agentlink.PolicyFile.from_dict(data)
        self.assertEqual((again.path, again.source), (None, patterns))
        with self.assertRaisesRegex(ValueError, "is not 'agentlink.PolicyFile'"):
            agentlink.PolicyFile.from_dict({"type": "agentlink.ToolResultStore", "init_parameters": {}})

    def test_offload_takes_a_policy_file(self):
        pol = agentlink.PolicyFile(self.policy_file("contract.json", self.CONTRACT))
        text = agentlink.offload("web_search", "c1", "tiny", pol, store=self.dir)
        self.assertIn("/large_tool_results/c1\n", text)
        self.assertEqual(agentlink.offload("get_time", "c2", "z" * 100000, pol, store=self.dir),
                         "z" * 100000)


class Hook(Base):
    """What Haystack's ToolResultOffloadHook does with the two, step by step:
    pick the policy for the tool (exact name, then "*"), ask it, write the
    text under "{step}_{tool}_{call id}.txt", put the reference in the
    conversation; save the hook with its parts' to_dict() and load it back
    by their "type"."""

    def run_hook(self, store, strategies, step, tool, call_id, text):
        policy = strategies.get(tool, strategies.get("*"))
        if policy is None or not policy.should_offload(tool, text, {"step_count": step}):
            return text
        reference = store.write(key="%d_%s_%s.txt" % (step, tool, call_id), content=text)
        return "Tool result offloaded to '%s' (%d characters)." % (reference, len(text))

    def test_a_hook_configured_with_both_survives_a_save_and_load(self):
        config = self.policy_file("policy.json", Policy.CONTRACT)
        os.environ["OFFLOADFS_STORE"] = self.dir
        os.environ["OFFLOADFS_CONFIG"] = config
        hook = {"store": agentlink.ToolResultStore(), "offload_strategies": {"*": agentlink.PolicyFile()}}
        saved = json.dumps({"store": hook["store"].to_dict(),
                            "offload_strategies": {k: v.to_dict() for k, v in hook["offload_strategies"].items()}})
        loaded = json.loads(saved)
        store = load_by_type(loaded["store"])
        strategies = {k: load_by_type(v) for k, v in loaded["offload_strategies"].items()}
        page = "<html>" + "word " * 10000 + "</html>"
        msg = self.run_hook(store, strategies, 2, "web_search", "call/7", page)
        ref = msg.split("'")[1]
        self.assertEqual(ref, "/large_tool_results/" + agentlink.derive_key("2_web_search_call/7.txt"))
        self.assertEqual(store.read(ref), page)
        self.assertEqual(self.run_hook(store, strategies, 2, "get_time", "c", "x" * 100000), "x" * 100000)
        self.assertEqual(self.run_hook(store, strategies, 3, "bash", "c", "small"), "small")


if __name__ == "__main__":
    unittest.main()
