// js_list.mjs -- OffloadBackend's ls, glob and grep over 2,000 results, most
// held only on the store's remote (set up by test_js_list.sh), through the
// backend and through deepagents' own tools (what the model sees).
// OFL_MODE "up": every name is listed, a marker held only on the remote is
// found, glob matches names held only on the remote. "down" (the remote at
// a closed port): the results held here are listed, and each answer says,
// where the model sees it, that it is incomplete. "mixed": the listing
// answers (the CLI reaches the remote), the mount's daemon does not (EIO).
import assert from "node:assert/strict";
import test from "node:test";
import { OffloadBackend } from "../../agentlink/js/index.js";
import { runAgent } from "../js/agentrun.mjs";

const AGENTLINK = process.env.OFL_AGENTLINK;
const STORE = process.env.OFL_STORE;
const MOUNT = process.env.OFL_MOUNT;
const UP = process.env.OFL_MODE === "up";
const N_REMOTE = Number(process.env.OFL_N_REMOTE);
const N_HERE = Number(process.env.OFL_N_HERE);
const backend = () => new OffloadBackend({ store: STORE, mount: MOUNT, agentlink: AGENTLINK });

const pad = (i) => String(i).padStart(4, "0");
const remoteNames = Array.from({ length: N_REMOTE }, (_, i) => `/call_r_${pad(i)}.txt`);
const hereNames = Array.from({ length: N_HERE }, (_, i) => `/call_b_${i}.txt`);
/** With the remote down the results held here: B's own, and the cached
 * copies of results B has read from the remote (OFL_HELD, B's names held
 * here as its CLI listed them just before: a read that went through the
 * CLI keeps a copy). */
const held = process.env.OFL_HELD ? process.env.OFL_HELD.split(",").map((k) => `/${k}`) : hereNames;
const heldSet = new Set(held);
/** Whether B holds a cached copy of the one result with the marker (a read
 * that fell back to the CLI while the mount was slow kept it): the mount
 * and the CLI then find it, remote down or not. */
const markerHeld = heldSet.has("/call_r_1234.txt");
/** What a complete answer lists; with the remote down, only the results held here. */
const expected = (UP ? [...hereNames, ...remoteNames] : held).sort((a, b) => a.localeCompare(b));
const NOTE = /^\/! INCOMPLETE ANSWER \(a note from offloadfs, not a file\): the store's remote could not be reached.*Cause: .*LIST s3:\/\/.*(connect|Connect)/s;

if (UP) {
  test("ls lists every result, here and only on the remote, with its size, and no note", async () => {
    const r = await backend().ls("/");
    assert.equal(r.error, undefined, r.error);
    assert.equal(r.partial, undefined);
    assert.equal(r.files.length, expected.length);
    assert.deepEqual(r.files.map((f) => f.path), expected);
    const one = r.files.find((f) => f.path === "/call_r_0007.txt");
    assert.equal(one.size, "result 0007\n".length);
    assert.equal(one.is_dir, false);
  });

  test("glob matches names held only on the remote", async () => {
    const r = await backend().glob("call_r_12*.txt");
    assert.equal(r.error, undefined, r.error);
    assert.equal(r.partial, undefined);
    assert.deepEqual(r.files.map((f) => f.path), remoteNames.filter((n) => n.startsWith("/call_r_12")));
  });

  // Without a mount each read is one `agentlink get` process: narrower
  // searches, still over results held only on the remote.
  const WIDE = process.env.OFL_GREP_ALL === "1";
  test(`grep over ${WIDE ? "all 2,000" : "10"} finds the marker held only on the remote`, async () => {
    const r = await backend().grep("MARKER-remote-only", "/", WIDE ? null : "call_r_123*.txt");
    assert.equal(r.error, undefined, r.error);
    assert.deepEqual(r, { matches: [{ path: "/call_r_1234.txt", line: 2, text: "MARKER-remote-only end" }] });
  });

  test("grep reads results held here and on the remote alike", async () => {
    const r = await backend().grep("result", "/", WIDE ? "call_*4.txt" : "call_{b_4,r_00[0-4]4}.txt");
    assert.equal(r.error, undefined, r.error);
    const want = WIDE ? expected.filter((n) => /4\.txt$/.test(n) && n !== "/call_r_1234.txt")
      : ["/call_b_4.txt", "/call_r_0004.txt", "/call_r_0014.txt", "/call_r_0024.txt", "/call_r_0034.txt",
        "/call_r_0044.txt"];
    assert.deepEqual(r.matches.map((m) => m.path), want);
  });

  test("deepagents' glob and grep tools give the model the names held only on the remote", async () => {
    const { model } = await runAgent(backend(), [], [
      { toolCalls: [{ name: "glob", args: { pattern: "call_r_19*.txt", path: "/large_tool_results/" }, id: "g1" }] },
      { toolCalls: [{ name: "grep", args: { pattern: "MARKER-remote-only", path: "/large_tool_results/", glob: "call_r_123*" }, id: "g2" }] },
      { toolCalls: [{ name: "ls", args: { path: "/large_tool_results/" }, id: "l1" }] },
      { text: "done" },
    ]);
    assert.equal(model.toolResult("g1").content,
      remoteNames.filter((n) => n.startsWith("/call_r_19")).map((n) => `/large_tool_results${n}`).join("\n"));
    assert.equal(model.toolResult("g2").content,
      "/large_tool_results/call_r_1234.txt:\n  2: MARKER-remote-only end");
    // deepagents cuts a tool answer past 80,000 characters; the first lines are the store's.
    const ls = model.toolResult("l1").content.split("\n");
    assert.equal(ls[0], "/large_tool_results/call_b_0.txt (14 bytes)");
    assert.ok(ls.includes("/large_tool_results/call_r_0999.txt (12 bytes)"), ls.slice(0, 3).join("\n"));
  });
} else if (process.env.OFL_MODE === "mixed") {
  test("grep whose reads of results held only on the remote fail (EIO): the note, not an error", async () => {
    const r = await backend().grep("MARKER-remote-only", "/", "call_r_123*.txt");
    assert.equal(r.error, undefined, r.error);
    const unread = Array.from({ length: 10 }, (_, i) => `/call_r_123${i}.txt`).some((n) => !heldSet.has(n));
    assert.equal(r.matches.length, (unread ? 1 : 0) + (markerHeld ? 1 : 0), JSON.stringify(r.matches));
    if (unread) {
      assert.match(r.matches[0].path, /^\/! INCOMPLETE ANSWER .*were searched.*Cause: .*call_r_123\d\.txt.*EIO/s);
      assert.equal(r.matches[0].path, `/${r.partial}`);
    }
    if (markerHeld) assert.equal(r.matches.at(-1).path, "/call_r_1234.txt");
  });
} else {
  test("ls with the remote down: a first entry says the answer is incomplete, then the results held here", async () => {
    const r = await backend().ls("/");
    assert.equal(r.error, undefined, r.error);
    assert.match(r.files[0].path, NOTE);
    assert.equal(r.files[0].path, `/${r.partial}`);
    assert.deepEqual(r.files.slice(1).map((f) => f.path), expected);
  });

  test("glob with the remote down: the note, the matches held here, truncated", async () => {
    const r = await backend().glob("call_*.txt");
    assert.equal(r.error, undefined, r.error);
    assert.match(r.files[0].path, NOTE);
    assert.equal(r.truncated, true);
    assert.deepEqual(r.files.slice(1).map((f) => f.path), expected);
  });

  test("grep with the remote down: the note first, then the matches held here", async () => {
    const none = await backend().grep("MARKER-remote-only", "/");
    assert.equal(none.error, undefined, none.error);
    assert.equal(none.matches.length, markerHeld ? 2 : 1, JSON.stringify(none.matches));
    assert.match(none.matches[0].path, NOTE);
    assert.equal(none.matches[0].path, `/${none.partial}`);
    const some = await backend().grep("result here", "/");
    assert.deepEqual(some.matches.slice(1).map((m) => [m.path, m.line, m.text]),
      hereNames.map((n, i) => [n, 1, `result here ${i}`]));
  });

  test("deepagents' ls, glob and grep tools show the model that the answer is incomplete", async () => {
    const { model } = await runAgent(backend(), [], [
      { toolCalls: [{ name: "ls", args: { path: "/large_tool_results/" }, id: "l1" }] },
      { toolCalls: [{ name: "glob", args: { pattern: "call_*.txt", path: "/large_tool_results/" }, id: "g1" }] },
      { toolCalls: [{ name: "glob", args: { pattern: "**/call_*.txt", path: "/" }, id: "g2" }] },
      { toolCalls: [{ name: "grep", args: { pattern: "MARKER-remote-only", path: "/large_tool_results/" }, id: "g3" }] },
      { toolCalls: [{ name: "grep", args: { pattern: "result here", path: "/", output_mode: "files_with_matches" }, id: "g4" }] },
      { text: "done" },
    ]);
    const lines = (id) => model.toolResult(id).content.split("\n");
    const here = hereNames.map((n) => `/large_tool_results${n}`);
    const heldHere = expected.map((n) => `/large_tool_results${n}`);
    const ls = lines("l1");
    assert.match(ls[0], /^\/large_tool_results\/! INCOMPLETE ANSWER .*could not be reached/);
    assert.deepEqual(ls.slice(1).map((l) => l.replace(/ \(\d+ bytes\)$/, "")), heldHere);
    assert.ok(ls.includes(`${here[0]} (${"result here 0\n".length} bytes)`), ls.join("\n"));
    for (const id of ["g1", "g2"]) {
      const g = lines(id);
      assert.ok(g.some((l) => l.startsWith("/large_tool_results/! INCOMPLETE ANSWER")), `${id}: ${g.join("\n")}`);
      assert.deepEqual(g.filter((l) => !l.includes("INCOMPLETE")), heldHere);
    }
    const g3 = lines("g3");
    assert.match(g3[0], /^\/large_tool_results\/! INCOMPLETE ANSWER .*searched/);
    assert.equal(g3.length, markerHeld ? 4 : 2, g3.join("\n")); // a path line and a match line each
    const g4 = lines("g4");
    assert.match(g4[0], /^\/large_tool_results\/! INCOMPLETE ANSWER/);
    assert.deepEqual(g4.slice(1), here);
  });
}
