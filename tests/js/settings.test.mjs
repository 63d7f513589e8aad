// settings.test.mjs -- OffloadBackend resolves no setting its caller did not
// give: the CLI does, as the daemon does (one resolution, flag > environment
// > policy file > default). So with $OFFLOADFS_CONFIG naming namespace
// "proj", the backend writes where `agentlink ls` and the mount read.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import test from "node:test";
import { OffloadBackend } from "../../agentlink/js/index.js";
import { AGENTLINK, PROJ_CONFIG, PROJ_MOUNT, PROJ_STORE, cli, storedBytes } from "./env.mjs";

test("with $OFFLOADFS_CONFIG naming namespace proj, write lands where agentlink ls and the daemon read", async () => {
  process.env.OFFLOADFS_CONFIG = PROJ_CONFIG;
  try {
    const b = new OffloadBackend({ store: PROJ_STORE, mount: PROJ_MOUNT, agentlink: AGENTLINK });
    assert.equal(b.namespace, null);
    const w = await b.write("/call_proj.txt", "proj bytes\n");
    assert.deepEqual(w, { path: "/call_proj.txt", filesUpdate: null, metadata: { offloadfs: `${PROJ_MOUNT}/call_proj.txt` } });
    // The CLI with the same environment, no --namespace: the policy's.
    const ls = cli(["--store", PROJ_STORE, "ls"]);
    assert.equal(ls.status, 0, ls.stderr);
    assert.deepEqual(ls.stdout.toString().split("\n").map((l) => l.split("\t")[0]), ["call_proj.txt", ""]);
    assert.ok(storedBytes(PROJ_STORE, "call_proj.txt", "proj").equals(Buffer.from("proj bytes\n")));
    assert.equal(storedBytes(PROJ_STORE, "call_proj.txt", "default"), null);
    // The daemon, started with the same $OFFLOADFS_CONFIG, shows namespace proj.
    assert.equal(readFileSync(`${PROJ_MOUNT}/call_proj.txt`, "utf8"), "proj bytes\n");
    assert.deepEqual((await b.ls("/")).files.map((f) => f.path), ["/call_proj.txt"]);
  } finally {
    delete process.env.OFFLOADFS_CONFIG;
  }
});

test("a namespace given to the backend still wins over the policy file's", async () => {
  process.env.OFFLOADFS_CONFIG = PROJ_CONFIG;
  try {
    const b = new OffloadBackend({ store: PROJ_STORE, namespace: "given", mount: PROJ_MOUNT, agentlink: AGENTLINK });
    assert.equal(b.namespace, "given");
    const w = await b.write("/call_given.txt", "given bytes\n");
    assert.equal(w.error, undefined);
    assert.ok(storedBytes(PROJ_STORE, "call_given.txt", "given").equals(Buffer.from("given bytes\n")));
    assert.equal(storedBytes(PROJ_STORE, "call_given.txt", "proj"), null);
  } finally {
    delete process.env.OFFLOADFS_CONFIG;
  }
});
