// backend.test.mjs -- each method of OffloadBackend against a real store
// and a real offloadfs mount (set up by test_js.sh), compared with what
// deepagents' own FilesystemBackend answers for the same files.
import assert from "node:assert/strict";
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { FilesystemBackend } from "deepagents";
import { OffloadBackend } from "../../agentlink/js/index.js";
import {
  AGENTLINK, BOUND, BOUND_MOUNT, BOUND_STORE, DEAD_MOUNT, DEAD_STORE, MOUNT, STOP_MOUNT, STOP_PID, STOP_STORE, NS_MOUNT, OTHER_MOUNT, OTHER_STORE,
  STORE, bigText, cli, scratch, stats, storedBytes,
} from "./env.mjs";

const mounted = () => new OffloadBackend({ store: STORE, mount: MOUNT, agentlink: AGENTLINK });
const unmounted = () => new OffloadBackend({ store: STORE, mount: scratch(), agentlink: AGENTLINK });

/** A FilesystemBackend over a plain directory holding the same files. */
function plain(files) {
  const root = scratch("ofl-plain-");
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), content);
  }
  return new FilesystemBackend({ rootDir: root, virtualMode: true });
}

const stripTimes = (r) => (r.files ? { ...r, files: r.files.map(({ modified_at: _m, ...f }) => f) } : r);

test("write stores the bytes under the file's name: agentlink get and the mount give them back exactly", async () => {
  const b = mounted();
  const text = `${bigText(300_000)}héllo ✓ last line without newline`;
  const w = await b.write("/call_w1.txt", text);
  assert.deepEqual(w, { path: "/call_w1.txt", filesUpdate: null, metadata: { offloadfs: `${MOUNT}/call_w1.txt` } });
  assert.ok(storedBytes(STORE, "call_w1.txt").equals(Buffer.from(text)));
  assert.ok(readFileSync(`${MOUNT}/call_w1.txt`).equals(Buffer.from(text)));
  const st = JSON.parse(cli(["--store", STORE, "--json", "stat", "call_w1.txt"]).stdout);
  assert.equal(st.tool, "deepagents");
});

test("write's metadata names the exact path, a key ending in spaces included", async () => {
  const b = mounted();
  for (const name of ["call_trailing.txt  ", " call_leading.txt"]) {
    const w = await b.write(`/${name}`, "spaced\n");
    assert.deepEqual(w, { path: `/${name}`, filesUpdate: null, metadata: { offloadfs: `${MOUNT}/${name}` } });
    assert.equal(readFileSync(w.metadata.offloadfs, "utf8"), "spaced\n");
  }
});

test("a name with a '..' component is refused, stores nothing, and never lists outside the route", async () => {
  const b = mounted();
  const before = stats(STORE).entries;
  for (const p of ["/../etc/call_x.txt", "/a/../call_x.txt", "/..", "//../x"]) {
    const w = await b.write(p, "escape\n");
    assert.equal(w.error, `Error writing file '${p}': a '..' component is not allowed (path traversal)`);
    assert.equal(w.path, undefined);
  }
  assert.deepEqual(await b.uploadFiles([["/../up.txt", new Uint8Array([1])]]), [{ path: "/../up.txt", error: "invalid_path" }]);
  assert.equal(stats(STORE).entries, before);
  assert.ok(!(await b.ls("/")).files.some((f) => f.path.includes("..")));
  // Dots that are not a '..' component are names like any other.
  for (const p of ["/call..x.txt", "/a/..b/c.txt", "/.../y.txt"]) {
    assert.equal((await b.write(p, "dots\n")).error, undefined, p);
    assert.equal((await b.read(p)).content, "dots\n", p);
  }
});

test("read pages by lines exactly as deepagents' FilesystemBackend does", async () => {
  const texts = {
    "call_r1.txt": bigText(50_000),
    "call_r2.txt": "one\ntwo\nthree",
    "call_r3.txt": "\n\n",
    "call_r4.txt": "x\n",
  };
  const b = mounted();
  const u = unmounted();
  const fsb = plain(texts);
  for (const [name, t] of Object.entries(texts)) assert.equal((await b.write(`/${name}`, t)).error, undefined);
  for (const name of Object.keys(texts)) {
    for (const [off, lim] of [[0, 500], [0, 1], [1, 2], [2, 100], [3, 5], [700, 3], [0, 0], [-4, 2], [1.7, 2.2], [5000, 1]]) {
      const want = await fsb.read(`/${name}`, off, lim);
      assert.deepEqual(await b.read(`/${name}`, off, lim), want, `${name} ${off} ${lim} (mount)`);
      assert.deepEqual(await u.read(`/${name}`, off, lim), want, `${name} ${off} ${lim} (CLI)`);
    }
    assert.deepEqual(await b.read(`/${name}`), await fsb.read(`/${name}`));
  }
});

test("a rerun of the same tool call replaces the result", async () => {
  const b = mounted();
  await b.write("/call_rerun.txt", "first version\n");
  await b.write("/call_rerun.txt", "second\n");
  assert.equal((await b.read("/call_rerun.txt")).content, "second\n");
  assert.equal(readFileSync(`${MOUNT}/call_rerun.txt`, "utf8"), "second\n");
  const ls = await b.ls("/");
  assert.equal(ls.files.filter((f) => f.path === "/call_rerun.txt").length, 1);
});

test("readRaw returns FileData v2 with the write time", async () => {
  const b = mounted();
  const before = Date.now() - 1000;
  await b.write("/call_raw.txt", "raw\ncontent\n");
  for (const x of [b, unmounted()]) {
    const r = await x.readRaw("/call_raw.txt");
    assert.equal(r.data.content, "raw\ncontent\n");
    assert.equal(r.data.mimeType, "text/plain");
    assert.equal(r.data.created_at, r.data.modified_at);
    assert.ok(Date.parse(r.data.created_at) >= before - 1000, r.data.created_at);
  }
  assert.match((await b.readRaw("/never_raw.txt")).error, /not found/);
});

test("names that are not keys get agentlink key's derived key and are found by their name", async () => {
  const b = mounted();
  const names = ["sub/dir/a.txt", ".hidden.txt", "ctl\u0001char.txt", "x".repeat(300)];
  for (const n of names) {
    assert.equal((await b.write(`/${n}`, `content of ${n}\n`)).error, undefined, n);
    const key = cli(["key", "--", n]).stdout.toString().trim();
    assert.match(key, /~[0-9a-f]{16}$/, n);
    assert.equal(readFileSync(path.join(MOUNT, key), "utf8"), `content of ${n}\n`, n);
  }
  for (const x of [b, unmounted()]) {
    for (const n of names) assert.equal((await x.read(`/${n}`)).content, `content of ${n}\n`, n);
    const top = (await x.ls("/")).files.map((f) => f.path);
    assert.ok(top.includes("/sub/"), "nested names show as a directory");
    assert.ok(top.includes("/.hidden.txt"), "by the name deepagents used");
    // Names that cannot be kept in the tool field (a control character,
    // over 255 bytes with the "deepagents:" prefix) list under their derived
    // key, which reads back too.
    for (const n of ["ctl\u0001char.txt", "x".repeat(300)]) {
      const key = cli(["key", "--", n]).stdout.toString().trim();
      assert.ok(top.includes(`/${key}`), top.join(" "));
      assert.equal((await x.read(`/${key}`)).content, `content of ${n}\n`);
    }
    assert.deepEqual(stripTimes(await x.ls("/sub/")), { files: [{ path: "/sub/dir/", is_dir: true, size: 0 }] });
    assert.deepEqual(stripTimes(await x.ls("/sub/dir")), {
      files: [{ path: "/sub/dir/a.txt", is_dir: false, size: Buffer.byteLength("content of sub/dir/a.txt\n") }],
    });
    assert.deepEqual((await x.glob("**/a.txt")).files.map((f) => f.path), ["/sub/dir/a.txt"]);
    assert.deepEqual((await x.grep("content of sub", "/sub")).matches,
      [{ path: "/sub/dir/a.txt", line: 1, text: "content of sub/dir/a.txt" }]);
  }
  // A derived key read by itself (what ls shows if the name cannot be kept) works too.
  const key = cli(["key", "--", "sub/dir/a.txt"]).stdout.toString().trim();
  assert.equal((await b.read(`/${key}`)).content, "content of sub/dir/a.txt\n");
});

test("ls lists files with sizes and times, like FilesystemBackend", async () => {
  const st = scratch("ofl-ls-");
  const ns = new OffloadBackend({ store: STORE, namespace: "ns", mount: NS_MOUNT, agentlink: AGENTLINK });
  const files = { "call_a.txt": "aaa\n", "call_b.txt": "b\nbb\n", "d/x.txt": "x" };
  for (const [n, c] of Object.entries(files)) await ns.write(`/${n}`, c);
  const want = stripTimes(await plain(files).ls("/"));
  assert.deepEqual(stripTimes(await ns.ls("/")), want);
  const unm = new OffloadBackend({ store: STORE, namespace: "ns", mount: st, agentlink: AGENTLINK });
  assert.deepEqual(stripTimes(await unm.ls("/")), want);
  for (const f of (await ns.ls("/")).files.filter((x) => !x.is_dir)) {
    assert.ok(Math.abs(Date.parse(f.modified_at) - Date.now()) < 120_000, f.modified_at);
  }
  // The "default" namespace's mount does not show them.
  assert.match((await mounted().read("/call_b.txt")).error, /not found/);
  assert.equal(readFileSync(path.join(NS_MOUNT, "call_b.txt"), "utf8"), "b\nbb\n");
});

test("grep finds literal text with 1-based lines, honours glob and maxCount", async () => {
  const b = mounted();
  const ns = "grep_case_";
  await b.write(`/${ns}1.txt`, "a.b\nab\nx a.b y\n");
  await b.write(`/${ns}2.md`, "a.b\n(a.b)\n");
  await b.write(`/${ns}3.txt`, "nothing\n");
  for (const x of [b, unmounted()]) {
    const all = await x.grep("a.b", "/", `${ns}*`);
    assert.deepEqual(all, { matches: [
      { path: `/${ns}1.txt`, line: 1, text: "a.b" },
      { path: `/${ns}1.txt`, line: 3, text: "x a.b y" },
      { path: `/${ns}2.md`, line: 1, text: "a.b" },
      { path: `/${ns}2.md`, line: 2, text: "(a.b)" },
    ] });
    assert.deepEqual((await x.grep("a.b", "/", `${ns}*.md`)).matches.map((m) => m.line), [1, 2]);
    assert.deepEqual(await x.grep("a.b", `/${ns}1.txt`), { matches: [
      { path: `/${ns}1.txt`, line: 1, text: "a.b" }, { path: `/${ns}1.txt`, line: 3, text: "x a.b y" }] });
    assert.deepEqual(await x.grep("a.b", "/", `${ns}*`, 3), { matches: all.matches.slice(0, 3), truncated: true });
    assert.deepEqual(await x.grep("no such text", "/", `${ns}*`), { matches: [] });
    assert.deepEqual(await x.grep("a.b", "/no_such_dir/"), { matches: [] });
  }
});

test("glob matches *, **, ?, {a,b} and [..] like micromatch (dot files included)", async () => {
  const b = mounted();
  const names = ["g_1.txt", "g_2.txt", "g_10.md", ".g_dot.txt", "gdir/g_3.txt"];
  for (const n of names) await b.write(`/${n}`, "g\n");
  const globs = {
    "g_*.txt": ["/g_1.txt", "/g_2.txt"],
    "g_?.txt": ["/g_1.txt", "/g_2.txt"],
    "g_{1,10}.*": ["/g_1.txt", "/g_10.md"],
    "g_[12].txt": ["/g_1.txt", "/g_2.txt"],
    "**/g_3.txt": ["/gdir/g_3.txt"],
    "*g_dot*": ["/.g_dot.txt"],
    "/g_10.md": ["/g_10.md"],
  };
  for (const x of [b, unmounted()]) {
    for (const [g, want] of Object.entries(globs)) {
      assert.deepEqual((await x.glob(g)).files.map((f) => f.path), want, g);
    }
    assert.deepEqual((await x.glob("*.txt", "/gdir")).files.map((f) => f.path), ["/gdir/g_3.txt"]);
    const one = (await x.glob("g_1.txt")).files[0];
    assert.equal(one.size, 2);
    assert.equal(one.is_dir, false);
  }
});

test("a glob no regular expression can express ('[z-a]') matches nothing, as FilesystemBackend's: no throw", async () => {
  const b = mounted();
  await b.write("/g_bad.txt", "g\n");
  const fsb = plain({ "g_bad.txt": "g\n" });
  for (const x of [b, unmounted()]) {
    for (const g of ["[z-a]", "g_[z-a].txt"]) {
      assert.deepEqual(await x.glob(g), await fsb.glob(g), g);
      assert.deepEqual(await x.grep("g", "/", g), await fsb.grep("g", "/", g), g);
    }
  }
});

test("edit answers a read-only error and changes nothing", async () => {
  const b = mounted();
  await b.write("/call_ro.txt", "keep me\n");
  const r = await b.edit("/call_ro.txt", "keep", "lose");
  assert.match(r.error, /^Error: '\/call_ro\.txt' is read-only/);
  assert.equal(readFileSync(`${MOUNT}/call_ro.txt`, "utf8"), "keep me\n");
});

test("never written: read says not found and names where it looked", async () => {
  for (const x of [mounted(), unmounted()]) {
    const r = await x.read("/call_never.txt");
    assert.match(r.error, /^File '\/call_never\.txt' not found: no result was ever stored under that name/);
    assert.ok(r.error.includes(STORE));
  }
});

test("removed or evicted: read, readRaw and grep say evicted, when, why, and to run the tool again", async () => {
  const b = mounted();
  await b.write("/call_gone.txt", "soon gone\n");
  assert.equal(cli(["--store", STORE, "rm", "call_gone.txt"]).status, 0);
  const when = JSON.parse(cli(["--store", STORE, "--json", "stat", "call_gone.txt"]).stdout).evicted_at;
  for (const x of [b, unmounted()]) {
    for (const r of [await x.read("/call_gone.txt"), await x.readRaw("/call_gone.txt"), await x.grep("soon", "/call_gone.txt")]) {
      assert.match(r.error, /^File '\/call_gone\.txt' \(.*\/call_gone\.txt\) was evicted from the offloadfs store at /);
      assert.ok(r.error.includes(when), r.error);
      assert.ok(r.error.includes("removed with agentlink rm"), r.error);
      assert.ok(r.error.includes("Run the tool that produced it again"), r.error);
    }
    assert.deepEqual(await x.downloadFiles(["/call_gone.txt"]), [{ path: "/call_gone.txt", content: null, error: "file_not_found" }]);
  }
  // Without a CLI nothing can check what the mount serves: it is not read,
  // and the answer says the store is unavailable, not another namespace's.
  const blind = new OffloadBackend({ store: STORE, mount: MOUNT, agentlink: "/nonexistent/agentlink" });
  assert.match((await blind.read("/call_gone.txt")).error, new RegExp("^Error reading file '/call_gone\\.txt': the " +
    "offloadfs store is unavailable: the agentlink CLI '/nonexistent/agentlink' was not found"));
  // Evicted by the bound.
  const bb = new OffloadBackend({ store: BOUND_STORE, mount: BOUND_MOUNT, agentlink: AGENTLINK });
  const chunk = bigText(Math.floor(BOUND / 3), "evict");
  // Nine thirds of the bound: over it even if the store compresses 2:1.
  for (let i = 0; i < 9; i++) assert.equal((await bb.write(`/call_fill_${i}.txt`, chunk)).error, undefined);
  const r = await bb.read("/call_fill_0.txt", 0, 10);
  assert.match(r.error, /was evicted from the offloadfs store at .* \(to keep the store under its size bound, max_total_bytes\)/);
  assert.equal((await bb.read("/call_fill_8.txt", 0, 1)).content, chunk.split("\n")[0]);
  const st = stats(BOUND_STORE);
  assert.ok((st.stored_bytes ?? st.bytes) <= BOUND, JSON.stringify(st));
});

test("uploadFiles and downloadFiles move bytes unchanged; binary types go base64 through write", async () => {
  const b = mounted();
  const bytes = new Uint8Array(Array.from({ length: 4096 }, (_, i) => (i * 7) & 0xff));
  assert.deepEqual(await b.uploadFiles([["/up.bin", bytes], ["/", bytes]]),
    [{ path: "/up.bin", error: null }, { path: "/", error: "is_directory" }]);
  assert.ok(readFileSync(`${MOUNT}/up.bin`).equals(Buffer.from(bytes)));
  for (const x of [b, unmounted()]) {
    const [d] = await x.downloadFiles(["/up.bin"]);
    assert.equal(d.error, null);
    assert.ok(Buffer.from(d.content).equals(Buffer.from(bytes)));
  }
  assert.equal((await b.write("/pic.png", Buffer.from(bytes).toString("base64"))).error, undefined);
  assert.ok(storedBytes(STORE, "pic.png").equals(Buffer.from(bytes)));
  const r = await b.read("/pic.png");
  assert.equal(r.mimeType, "image/png");
  assert.ok(Buffer.from(r.content).equals(Buffer.from(bytes)));
});

test("a mount of another store at the mount path is not read: the CLI answers from this store", async () => {
  const mine = new OffloadBackend({ store: STORE, mount: OTHER_MOUNT, agentlink: AGENTLINK });
  assert.equal(cli(["--store", OTHER_STORE, "put", "call_only_other.txt"], "other\n").status, 0);
  await mine.write("/call_only_mine.txt", "mine\n");
  assert.equal((await mine.read("/call_only_mine.txt")).content, "mine\n");
  assert.match((await mine.read("/call_only_other.txt")).error, /not found/);
  const names = (await mine.ls("/")).files.map((f) => f.path);
  assert.ok(names.includes("/call_only_mine.txt") && !names.includes("/call_only_other.txt"));
});

test("a mount whose daemon died (ENOTCONN): reads, ls, glob and grep come from the store through the CLI", async () => {
  assert.throws(() => readdirSync(DEAD_MOUNT), { code: "ENOTCONN" });
  const b = new OffloadBackend({ store: DEAD_STORE, mount: DEAD_MOUNT, agentlink: AGENTLINK });
  const text = "first line\nsecond NEEDLE line\n";
  assert.equal((await b.write("/call_dead.txt", text)).error, undefined);
  assert.equal((await b.write("/sub/call_dead.txt", text)).error, undefined);
  assert.ok(storedBytes(DEAD_STORE, "call_dead.txt").equals(Buffer.from(text)));
  assert.deepEqual(await b.read("/call_dead.txt", 1, 1),
    { content: "second NEEDLE line", mimeType: "text/plain", totalLines: 2, startLine: 2, endLine: 2, nextOffset: undefined });
  assert.equal((await b.readRaw("/sub/call_dead.txt")).data?.content, text);
  assert.deepEqual((await b.ls("/")).files?.map((f) => f.path), ["/call_dead.txt", "/sub/"]);
  assert.deepEqual((await b.glob("**/*.txt")).files?.map((f) => f.path), ["/call_dead.txt", "/sub/call_dead.txt"]);
  assert.deepEqual((await b.grep("NEEDLE")).matches,
    [{ path: "/call_dead.txt", line: 2, text: "second NEEDLE line" }, { path: "/sub/call_dead.txt", line: 2, text: "second NEEDLE line" }]);
  assert.match((await b.read("/call_never.txt")).error, /not found: no result was ever stored/);
  const dl = await b.downloadFiles(["/call_dead.txt"]);
  assert.ok(Buffer.from(dl[0].content).equals(Buffer.from(text)));
});

test("relative store and agentlink paths stay the ones given after the process chdir's", async () => {
  const here = process.cwd();
  const dir = scratch();
  const other = scratch();
  const rel = path.relative(dir, AGENTLINK);
  try {
    process.chdir(dir);
    const b = new OffloadBackend({ store: "rel-store", mount: scratch(), agentlink: rel });
    assert.equal(b.agentlink, AGENTLINK);
    assert.equal((await b.write("/call_rel1.txt", "one\n")).error, undefined);
    process.chdir(other);
    assert.equal((await b.write("/call_rel2.txt", "two\n")).error, undefined);
    assert.equal((await b.read("/call_rel1.txt")).content, "one\n");
  } finally {
    process.chdir(here);
  }
  assert.equal(storedBytes(path.join(dir, "rel-store"), "call_rel2.txt")?.toString(), "two\n");
});

test("a stopped daemon (SIGSTOP) hangs no call: past 2 s the CLI answers, and later calls do not wait", async () => {
  const b = new OffloadBackend({ store: STOP_STORE, mount: STOP_MOUNT, agentlink: AGENTLINK });
  // The answer of P, or "still waiting" after MS (the test must not hang either).
  const within = (p, ms) => Promise.race([p, new Promise((r) => setTimeout(() => r("still waiting"), ms))]);
  assert.equal((await b.write("/call_seen.txt", "seen\n")).error, undefined);
  assert.equal((await b.read("/call_seen.txt")).content, "seen\n");
  process.kill(STOP_PID, "SIGSTOP");
  try {
    // Written while the daemon is stopped: the kernel has never looked it up.
    assert.equal((await b.write("/call_stopped.txt", "one\nNEEDLE two\n")).error, undefined);
    assert.deepEqual(await within(b.read("/call_stopped.txt", 1, 1), 8_000), {
      content: "NEEDLE two", mimeType: "text/plain", totalLines: 2, startLine: 2, endLine: 2, nextOffset: undefined,
    });
    // The mount now counts as down until the blocked access returns.
    const later = (async () => [
      (await b.ls("/")).files.map((f) => f.path),
      (await b.grep("NEEDLE")).matches,
      (await b.glob("*stopped*")).files.map((f) => f.path),
      (await b.readRaw("/call_seen.txt")).data?.content,
    ])();
    assert.deepEqual(await within(later, 1_500), [
      ["/call_seen.txt", "/call_stopped.txt"],
      [{ path: "/call_stopped.txt", line: 2, text: "NEEDLE two" }],
      ["/call_stopped.txt"],
      "seen\n",
    ]);
  } finally {
    process.kill(STOP_PID, "SIGCONT");
  }
  // Running again: the blocked access finishes and the mount is used again.
  for (let i = 0; i < 50 && (await b.readRaw("/call_stopped.txt")).data?.content !== "one\nNEEDLE two\n"; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(readFileSync(path.join(STOP_MOUNT, "call_stopped.txt"), "utf8"), "one\nNEEDLE two\n");
});

test("a mount showing another namespace is not read from once that shows: own results, never another run's", async () => {
  // NS_MOUNT shows namespace "ns" of STORE; these backends write "default".
  const other = new OffloadBackend({ store: STORE, namespace: "ns", mount: NS_MOUNT, agentlink: AGENTLINK });
  assert.equal((await other.write("/call_shared.txt", "run ns\n")).error, undefined);
  assert.equal(cli(["--store", STORE, "put", "call_shared.txt"], "run default\n").status, 0);
  // A read before any write: the mount lacks a name the store has.
  assert.equal(cli(["--store", STORE, "put", "call_only_default.txt"], "mine\n").status, 0);
  const reader = new OffloadBackend({ store: STORE, mount: NS_MOUNT, agentlink: AGENTLINK });
  assert.equal((await reader.read("/call_only_default.txt")).content, "mine\n");
  assert.equal((await reader.read("/call_shared.txt")).content, "run default\n");
  assert.ok(!(await reader.ls("/")).files.some((f) => f.path === "/call_a.txt"), "ns's results are not listed");
  // A write first: the mount does not show what was just put.
  const writer = new OffloadBackend({ store: STORE, mount: NS_MOUNT, agentlink: AGENTLINK });
  assert.equal((await writer.write("/call_fresh_default.txt", "fresh\n")).error, undefined);
  assert.equal((await writer.read("/call_shared.txt")).content, "run default\n");
  assert.deepEqual((await writer.grep("run ", "/call_shared.txt")).matches,
    [{ path: "/call_shared.txt", line: 1, text: "run default" }]);
  // The right mount is still read from.
  assert.equal((await other.read("/call_shared.txt")).content, "run ns\n");
  assert.equal(readFileSync(path.join(NS_MOUNT, "call_shared.txt"), "utf8"), "run ns\n");
});

test("store unavailable: write and read return errors that say so, never throw", async () => {
  const file = path.join(scratch(), "a-file");
  writeFileSync(file, "not a directory");
  const bad = new OffloadBackend({ store: path.join(file, "store"), mount: scratch(), agentlink: AGENTLINK });
  const w = await bad.write("/call_x.txt", "x");
  assert.match(w.error, /^Error writing file '\/call_x\.txt': the offloadfs store is unavailable: agentlink: store '.*a-file\/store': Not a directory/);
  assert.equal(w.path, undefined);
  const nocli = new OffloadBackend({ store: STORE, mount: scratch(), agentlink: "/nonexistent/agentlink" });
  assert.match((await nocli.write("/call_x.txt", "x")).error, /the agentlink CLI '\/nonexistent\/agentlink' was not found/);
  assert.match((await nocli.read("/call_x.txt")).error, /^Error reading file '\/call_x\.txt': the offloadfs store is unavailable/);
  assert.match((await nocli.ls("/")).error, /^Error listing '\/': the offloadfs store is unavailable/);
  assert.match((await nocli.grep("x")).error, /unavailable/);
  assert.match((await nocli.glob("*")).error, /unavailable/);
  // No store yet is an empty store, not an error.
  const fresh = new OffloadBackend({ store: path.join(scratch(), "none"), mount: scratch(), agentlink: AGENTLINK });
  assert.deepEqual(await fresh.ls("/"), { files: [] });
  assert.deepEqual(await fresh.grep("x"), { matches: [] });
  assert.match((await fresh.read("/call_x.txt")).error, /not found/);
});

test("options: flag, then environment, then default; bad ones are refused by name", () => {
  const keys = ["OFFLOADFS_STORE", "OFFLOADFS_NAMESPACE", "OFFLOADFS_MOUNT"];
  const saved = keys.map((k) => process.env[k]);
  try {
    process.env.OFFLOADFS_STORE = "/tmp/env-store";
    process.env.OFFLOADFS_NAMESPACE = "envns";
    process.env.OFFLOADFS_MOUNT = "/tmp/env-mnt";
    let b = new OffloadBackend();
    assert.deepEqual([b.store, b.namespace, b.mount, b.agentlink], ["/tmp/env-store", "envns", "/tmp/env-mnt", "agentlink"]);
    b = new OffloadBackend({ store: "/tmp/flag", namespace: "flagns", mount: "/tmp/flagmnt", agentlink: "/x/agentlink" });
    assert.deepEqual([b.store, b.namespace, b.mount, b.agentlink], ["/tmp/flag", "flagns", "/tmp/flagmnt", "/x/agentlink"]);
    delete process.env.OFFLOADFS_STORE; delete process.env.OFFLOADFS_NAMESPACE; delete process.env.OFFLOADFS_MOUNT;
    b = new OffloadBackend();
    assert.deepEqual([b.store, b.namespace, b.mount], ["/var/lib/offloadfs", "default", "/large_tool_results"]);
    assert.throws(() => new OffloadBackend({ namespace: "a/b" }), /^Error: OffloadBackend: namespace 'a\/b' contains '\/'$/);
    assert.throws(() => new OffloadBackend({ namespace: ".x" }), /namespace '\.x' starts with '\.'/);
    assert.throws(() => new OffloadBackend({ mount: "rel/dir" }), /mount 'rel\/dir' is not an absolute path/);
  } finally {
    keys.forEach((k, i) => { if (saved[i] === undefined) delete process.env[k]; else process.env[k] = saved[i]; });
  }
});
