// deepagents.mjs -- the cost of one write and one read through OffloadBackend
// against deepagents' own FilesystemBackend on plain directories (make bench,
// case "deepagents"; scripts/bench.sh mounts the store and makes the dirs).
//
//   node deepagents.mjs STORE MOUNT TMPFS_DIR DISK_DIR AGENTLINK ITERATIONS
//
// What is timed is what deepagents does: write() of a 200 KB result (its
// eviction of a large tool result), and read(path, 1000, 100) (read_file with
// an offset and its default limit of 100 lines). The three backends run
// interleaved, ITERATIONS times each, every write to a new name. Prints one
// line per measure: NAME OFFLOADFS TMPFS DISK (medians, seconds; "-" when
// not measured). "spawn" is starting `agentlink --version` from node, the
// part of a write that is process start. deepagents comes from tests/js's pinned packages
// (scripts/npm-deps.sh tests/js).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const top = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const require = createRequire(path.join(top, "tests/js/package.json"));
const { FilesystemBackend } = await import(pathToFileURL(require.resolve("deepagents")).href);
const { OffloadBackend } = await import(pathToFileURL(path.join(top, "agentlink/js/index.js")).href);

const [store, mount, tmpfsDir, diskDir, agentlink, iterArg] = process.argv.slice(2);
const N = Number(iterArg) || 30;

function text(size) {
  const lines = [];
  let n = 0;
  for (let i = 0; n < size; i++) {
    const l = `line ${i + 1} ${(i * 2654435761 >>> 0).toString(16).repeat(8)}`;
    lines.push(l);
    n += l.length + 1;
  }
  return `${lines.join("\n")}\n`;
}

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function timed(fn) {
  const t = process.hrtime.bigint();
  const r = await fn();
  const dt = Number(process.hrtime.bigint() - t) / 1e9;
  if (r?.error) throw new Error(r.error);
  return dt;
}

const content = text(200_000);
const backends = {
  offloadfs: new OffloadBackend({ store, mount, agentlink }),
  tmpfs: new FilesystemBackend({ rootDir: tmpfsDir, virtualMode: true }),
  disk: new FilesystemBackend({ rootDir: diskDir, virtualMode: true }),
  // The same store read without its mount: OffloadBackend's CLI fallback.
  cli: new OffloadBackend({ store, mount: path.join(tmpfsDir, "no-mount-here"), agentlink }),
};
const times = { write: {}, read: {}, readcli: {}, spawn: {} };
for (const k of Object.keys(backends)) for (const m of Object.keys(times)) times[m][k] = [];

// Warm-up: the store exists, the modules and caches are loaded.
for (const k of ["offloadfs", "tmpfs", "disk"]) await backends[k].write("/warm.txt", content);
for (let i = 0; i < N; i++) {
  for (const k of ["offloadfs", "tmpfs", "disk"]) {
    const name = `/call_bench_${i}.txt`;
    times.write[k].push(await timed(() => backends[k].write(name, content)));
    times.read[k].push(await timed(() => backends[k].read(name, 1000, 100)));
  }
  times.readcli.offloadfs.push(await timed(() => backends.cli.read(`/call_bench_${i}.txt`, 1000, 100)));
  // What a write pays before the store sees a byte: starting agentlink.
  times.spawn.offloadfs.push(await timed(() => new Promise((resolve) => {
    const c = spawn(agentlink, ["--version"], { stdio: "ignore" });
    c.on("close", resolve);
  })));
}
const fmt = (a) => (a.length ? median(a).toFixed(6) : "-");
for (const m of ["write", "read", "readcli", "spawn"]) {
  console.log(`${m} ${fmt(times[m].offloadfs)} ${fmt(times[m].tmpfs)} ${fmt(times[m].disk)}`);
}
