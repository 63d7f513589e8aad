// js_pending.mjs -- OffloadBackend on a store whose remote cannot be
// reached (set up by test_js.sh): the CLI stores the result here and exits
// 5 (pending); the backend answers a successful write that carries the
// path and a note of the pending state, and the result reads back.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { OffloadBackend } from "../../agentlink/js/index.js";

const AGENTLINK = process.env.OFL_AGENTLINK;
const STORE = process.env.OFL_STORE;
/** No mount there: reads go through the CLI. */
const MOUNT = mkdtempSync(path.join(process.env.OFL_TMP, "nomount-"));
const backend = () => new OffloadBackend({ store: STORE, mount: MOUNT, agentlink: AGENTLINK });

test("the CLI itself exits 5 for a put on this store (the remote is unreachable)", () => {
  const r = spawnSync(AGENTLINK, ["--store", STORE, "put", "cli_probe"], { input: "probe\n" });
  assert.equal(r.status, 5, r.stderr.toString());
  assert.match(r.stderr.toString(), /stored here but not yet on the remote/);
});

test("write of a pending result succeeds: the path, metadata.offloadfs, and metadata.pending", async () => {
  const w = await backend().write("/call_p1.txt", "a result kept here");
  assert.equal(w.error, undefined, w.error);
  assert.equal(w.path, "/call_p1.txt");
  assert.equal(w.filesUpdate, null);
  assert.equal(w.metadata.offloadfs, `${MOUNT}/call_p1.txt`);
  assert.match(w.metadata.pending, /'call_p1\.txt' is stored here but not yet on the remote .*pending/);
});

test("the pending result reads back here", async () => {
  const r = await backend().readRaw("/call_p1.txt");
  assert.equal(r.error, undefined, r.error);
  assert.equal(r.data.content, "a result kept here");
});

test("uploadFiles of a pending result is no error", async () => {
  const out = await backend().uploadFiles([["/call_p2.txt", Buffer.from("uploaded bytes")]]);
  assert.deepEqual(out, [{ path: "/call_p2.txt", error: null }]);
});

test("stats counts the three writes pending", () => {
  const r = spawnSync(AGENTLINK, ["--store", STORE, "--json", "stats"]);
  assert.equal(r.status, 0, r.stderr.toString());
  assert.equal(JSON.parse(r.stdout.toString()).pending, 3);
});
