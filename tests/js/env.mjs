// env.mjs -- what test_js.sh set up for the node tests (real stores, real
// offloadfs mounts), and small helpers over the real agentlink CLI.
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run these tests through tests/js/test_js.sh`);
  return v;
}

export const AGENTLINK = need("OFL_AGENTLINK");
/** A store mounted at MOUNT (64 MiB bound), namespace "default". */
export const STORE = need("OFL_STORE");
export const MOUNT = need("OFL_MOUNT");
/** The same store's namespace "ns", mounted with -o namespace=ns. */
export const NS_MOUNT = need("OFL_NS_MOUNT");
/** Another store, mounted at OTHER_MOUNT. */
export const OTHER_STORE = need("OFL_OTHER_STORE");
export const OTHER_MOUNT = need("OFL_OTHER_MOUNT");
/** A third store, mounted at FOO_MOUNT with -o fsname=foo (its source in mountinfo). */
export const FOO_STORE = need("OFL_FOO_STORE");
export const FOO_MOUNT = need("OFL_FOO_MOUNT");
/** A store with a small bound (BOUND bytes), mounted at BOUND_MOUNT. */
export const BOUND_STORE = need("OFL_BOUND_STORE");
export const BOUND_MOUNT = need("OFL_BOUND_MOUNT");
export const BOUND = Number(need("OFL_BOUND"));
/** A store mounted at DEAD_MOUNT by a daemon since killed (ENOTCONN there). */
export const DEAD_STORE = need("OFL_DEAD_STORE");
export const DEAD_MOUNT = need("OFL_DEAD_MOUNT");
/** A store mounted at STOP_MOUNT by the daemon STOP_PID, for tests to SIGSTOP. */
export const STOP_STORE = need("OFL_STOP_STORE");
export const STOP_MOUNT = need("OFL_STOP_MOUNT");
export const STOP_PID = Number(need("OFL_STOP_PID"));

/** A fresh empty directory (no mount there). */
export function scratch(prefix = "ofl-js-") {
  return mkdtempSync(path.join(process.env.OFL_TMP || os.tmpdir(), prefix));
}

/** Runs the CLI: { status, stdout (Buffer), stderr (string) }. */
export function cli(args, input) {
  const r = spawnSync(AGENTLINK, args, { input, maxBuffer: 256 << 20 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.toString() };
}

/** The stored bytes of KEY (agentlink get), or null with the exit status. */
export function storedBytes(store, key, namespace = "default") {
  const r = cli(["--store", store, "--namespace", namespace, "get", "--", key]);
  return r.status === 0 ? r.stdout : null;
}

/** agentlink stats --json of STORE. */
export function stats(store) {
  const r = cli(["--store", store, "--json", "stats"]);
  if (r.status !== 0) throw new Error(`agentlink stats: ${r.stderr}`);
  return JSON.parse(r.stdout.toString());
}

/** A text of about SIZE bytes in numbered lines; NEEDLE on every 1000th line from 7. */
export function bigText(size, tag = "") {
  const lines = [];
  let n = 0;
  for (let i = 0; n < size; i++) {
    // Pseudo-random hex so that compression (if any) cannot hide the size.
    let x = (i * 2654435761 + tag.length * 97) >>> 0;
    let hex = "";
    for (let j = 0; j < 8; j++) { x = (x * 1103515245 + 12345) >>> 0; hex += x.toString(16).padStart(8, "0"); }
    const l = `${tag}line ${i + 1} ${hex}${i % 1000 === 7 ? " NEEDLE" : ""}`;
    lines.push(l);
    n += Buffer.byteLength(l) + 1;
  }
  return `${lines.join("\n")}\n`;
}
