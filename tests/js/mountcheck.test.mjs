// mountcheck.test.mjs -- OffloadBackend reads through a mount only when the
// mount says it serves the backend's store and namespace (the root's
// user.offloadfs.* attributes, asked through `agentlink stats --json`): a
// mount of another namespace (-o namespace=) or of another store named
// -o fsname=foo is never read, whatever the first call; a new mount at the
// same path is asked again. And a name that is not well-formed Unicode is
// refused instead of sharing the key of the name with U+FFFD in its place.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { OffloadBackend } from "../../agentlink/js/index.js";
import { AGENTLINK, FOO_MOUNT, FOO_STORE, MOUNT, NS_MOUNT, STORE, cli, scratch, storedBytes } from "./env.mjs";

const OFFLOADFS = path.join(path.dirname(AGENTLINK), "offloadfs");

/** An agentlink that writes each command line to a log, then runs the real one. */
function loggedCli() {
  const dir = scratch("ofl-cli-");
  const log = path.join(dir, "log");
  const bin = path.join(dir, "agentlink");
  writeFileSync(bin, `#!/bin/sh\nprintf '%s\\n' "$*" >>'${log}'\nexec '${AGENTLINK}' "$@"\n`, { mode: 0o755 });
  const calls = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []);
  return { bin, calls, gets: () => calls().filter((c) => / get -- /.test(c)).length };
}

const put = (store, key, text, ns = "default") =>
  assert.equal(cli(["--store", store, "--namespace", ns, "put", "--", key], text).status, 0);

test("a mount of another namespace is never read, even on a fresh backend's first call", async () => {
  put(STORE, "call_mc_shared.txt", "ns bytes\nNEEDLE ns\n", "ns");
  put(STORE, "call_mc_ns_only.txt", "only ns\n", "ns");
  put(STORE, "call_mc_shared.txt", "default bytes\nNEEDLE default\n");
  // NS_MOUNT shows namespace "ns": it has the shared name, with other bytes.
  assert.equal(readFileSync(path.join(NS_MOUNT, "call_mc_shared.txt"), "utf8"), "ns bytes\nNEEDLE ns\n");
  const fresh = () => new OffloadBackend({ store: STORE, mount: NS_MOUNT, agentlink: AGENTLINK });
  assert.equal((await fresh().read("/call_mc_shared.txt")).content, "default bytes\nNEEDLE default\n");
  assert.equal((await fresh().readRaw("/call_mc_shared.txt")).data?.content, "default bytes\nNEEDLE default\n");
  assert.deepEqual((await fresh().grep("NEEDLE", "/call_mc_shared.txt")).matches,
    [{ path: "/call_mc_shared.txt", line: 2, text: "NEEDLE default" }]);
  const names = (await fresh().ls("/")).files.map((f) => f.path);
  assert.ok(names.includes("/call_mc_shared.txt"), "this namespace's result is listed");
  assert.ok(!names.includes("/call_mc_ns_only.txt"), "the other namespace's is not");
  assert.match((await fresh().read("/call_mc_ns_only.txt")).error, /^File '\/call_mc_ns_only\.txt' not found/);
  // The namespace it does serve reads through it.
  const ns = new OffloadBackend({ store: STORE, namespace: "ns", mount: NS_MOUNT, agentlink: AGENTLINK });
  assert.equal((await ns.read("/call_mc_shared.txt")).content, "ns bytes\nNEEDLE ns\n");
});

test("a mount of another store named -o fsname=foo is never read", async () => {
  put(FOO_STORE, "call_mc_foo.txt", "foo's bytes\n");
  put(FOO_STORE, "call_mc_foo_only.txt", "foo only\n");
  put(STORE, "call_mc_foo.txt", "this store's bytes\n");
  assert.ok(readFileSync("/proc/self/mountinfo", "utf8").includes(` ${FOO_MOUNT} `));
  const fresh = () => new OffloadBackend({ store: STORE, mount: FOO_MOUNT, agentlink: AGENTLINK });
  assert.equal((await fresh().read("/call_mc_foo.txt")).content, "this store's bytes\n");
  assert.equal((await fresh().readRaw("/call_mc_foo.txt")).data?.content, "this store's bytes\n");
  assert.deepEqual((await fresh().grep("bytes", "/call_mc_foo.txt")).matches,
    [{ path: "/call_mc_foo.txt", line: 1, text: "this store's bytes" }]);
  assert.ok(!(await fresh().ls("/")).files.some((f) => f.path === "/call_mc_foo_only.txt"));
  assert.match((await fresh().read("/call_mc_foo_only.txt")).error, /not found/);
});

test("its own mount is read through, and the CLI asked once for it; another's reads go to the CLI", async () => {
  put(STORE, "call_mc_own.txt", "own\nNEEDLE\n");
  const own = loggedCli();
  const b = new OffloadBackend({ store: STORE, mount: MOUNT, agentlink: own.bin });
  for (let i = 0; i < 3; i++) assert.equal((await b.read("/call_mc_own.txt")).content, "own\nNEEDLE\n");
  assert.ok((await b.ls("/")).files.some((f) => f.path === "/call_mc_own.txt"));
  assert.equal((await b.grep("NEEDLE", "/call_mc_own.txt")).matches.length, 1);
  assert.deepEqual(own.calls().filter((c) => / stats$/.test(c)).length, 1, own.calls().join("\n"));
  assert.equal(own.gets(), 0, own.calls().join("\n"));
  const other = loggedCli();
  const f = new OffloadBackend({ store: STORE, mount: NS_MOUNT, agentlink: other.bin });
  assert.equal((await f.read("/call_mc_own.txt")).content, "own\nNEEDLE\n");
  assert.equal((await f.read("/call_mc_own.txt")).content, "own\nNEEDLE\n");
  assert.equal(other.gets(), 2, other.calls().join("\n"));
  assert.equal(other.calls().filter((c) => / stats$/.test(c)).length, 1, "what a mount said is kept");
});

test("a new mount at the same path is asked again: a remount of another namespace is not read", async () => {
  put(STORE, "call_mc_re.txt", "default re\n");
  put(STORE, "call_mc_re.txt", "ns re\n", "ns");
  const mnt = scratch("ofl-remount-");
  const mount = (...o) => assert.equal(spawnSync(OFFLOADFS, [...o, STORE, mnt]).status, 0);
  const umount = () => assert.equal(spawnSync("fusermount3", ["-u", mnt]).status, 0);
  const b = new OffloadBackend({ store: STORE, mount: mnt, agentlink: AGENTLINK });
  mount();
  try {
    assert.equal((await b.read("/call_mc_re.txt")).content, "default re\n");
  } finally {
    umount();
  }
  // Mount ids and device numbers come back as soon as they are free.
  mount("-o", "namespace=ns");
  try {
    assert.equal(readFileSync(path.join(mnt, "call_mc_re.txt"), "utf8"), "ns re\n");
    assert.equal((await b.read("/call_mc_re.txt")).content, "default re\n");
    assert.equal((await b.readRaw("/call_mc_re.txt")).data?.content, "default re\n");
  } finally {
    umount();
  }
});

test("a name that is not well-formed Unicode is refused: it never takes the key of the name with U+FFFD", async () => {
  const b = new OffloadBackend({ store: STORE, mount: MOUNT, agentlink: AGENTLINK });
  const w = await b.write("/r\ud800.txt", "A");
  assert.equal(w.error, "Error writing file '/r\ud800.txt': the name is not well-formed Unicode: it holds " +
    "a lone surrogate \\ud800 at index 1, which is no character and has no UTF-8 form, so no result " +
    "can be stored or found under it; use a name made of whole characters");
  assert.equal((await b.write("/r\ufffd.txt", "B")).error, undefined);
  assert.match((await b.read("/r\ud800.txt")).error, /^Error reading file '\/r\ud800\.txt': the name is not well-formed Unicode/);
  assert.equal((await b.read("/r\ufffd.txt")).content, "B");
  assert.equal(storedBytes(STORE, "r\ufffd.txt")?.toString(), "B");
  assert.match((await b.write("/dir/x\udc00", "C")).error, /lone surrogate \\udc00 at index 5/);
  assert.match((await b.write("/y\ud83d", "C")).error, /lone surrogate \\ud83d at index 1/);
  assert.deepEqual(await b.uploadFiles([["/u\ud800.txt", new Uint8Array([1])]]), [{ path: "/u\ud800.txt", error: "invalid_path" }]);
  assert.equal((await b.downloadFiles(["/u\ud800.txt"]))[0].error, "invalid_path");
  // A surrogate pair is one character: stored and read back.
  assert.equal((await b.write("/e\ud83d\ude00.txt", "D")).error, undefined);
  assert.equal((await b.read("/e\ud83d\ude00.txt")).content, "D");
});
