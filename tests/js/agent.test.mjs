// agent.test.mjs -- deepagents' createDeepAgent end to end with a scripted
// chat model (no network, no LLM): a tool returns several hundred KB,
// deepagents' FilesystemMiddleware evicts it through OffloadBackend (the
// /large_tool_results/ route of a CompositeBackend over StateBackend), and
// the model reads it back with read_file (offset, limit) and grep. The test
// checks what the model was given, the bytes in the store and the mount, the
// store's bound over many runs, and an evicted path read back.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import test from "node:test";
import { tool } from "@langchain/core/tools";
import { OffloadBackend } from "../../agentlink/js/index.js";
import { runAgent } from "./agentrun.mjs";
import {
  AGENTLINK, BOUND, BOUND_MOUNT, BOUND_STORE, MOUNT, STORE, bigText, scratch, stats, storedBytes,
} from "./env.mjs";

/** A tool returning TEXT, whatever it is asked. */
const textTool = (name, text) => tool(async () => text, {
  name, description: `returns ${text.length} characters`, schema: { type: "object", properties: {} },
});

const offload = (store, mount) => new OffloadBackend({ store, mount, agentlink: AGENTLINK });

test("a large result is evicted through OffloadBackend; read_file and grep read it back exactly", async () => {
  const big = bigText(400_000, "e2e ");
  const lines = big.split("\n").slice(0, -1);
  const { model, state } = await runAgent(offload(STORE, MOUNT), [textTool("big_tool", big)], [
    { toolCalls: [{ name: "big_tool", args: {}, id: "call_e2e.1/x" }] },
    { toolCalls: [{ name: "read_file", args: { file_path: "/large_tool_results/call_e2e_1_x.txt", offset: 1000, limit: 5 }, id: "r1" }] },
    { toolCalls: [{ name: "grep", args: { pattern: "NEEDLE", path: "/large_tool_results/" }, id: "g1" }] },
    { toolCalls: [{ name: "ls", args: { path: "/large_tool_results/" }, id: "l1" }] },
    { text: "done" },
  ]);
  assert.equal(model.calls.length, 5);
  assert.ok(["read_file", "grep", "ls", "glob", "big_tool"].every((t) => model.boundTools.includes(t)));

  // The model was given the pointer, not the 400 KB.
  const pointer = model.toolResult("call_e2e.1/x").content;
  assert.ok(pointer.startsWith("Tool result too large, the result of this tool call call_e2e.1/x was saved " +
    "in the filesystem at this path: /large_tool_results/call_e2e_1_x.txt\n"), pointer.slice(0, 300));
  assert.ok(pointer.length < 4000, `pointer is ${pointer.length} characters`);
  assert.ok(pointer.includes(lines[0].slice(0, 100)) && pointer.includes(lines.at(-1).slice(0, 100)));

  // The bytes in the store and under the mount are the tool's, exactly.
  assert.ok(storedBytes(STORE, "call_e2e_1_x.txt").equals(Buffer.from(big)));
  assert.ok(readFileSync(path.join(MOUNT, "call_e2e_1_x.txt")).equals(Buffer.from(big)));
  // ... and not in the agent's state.
  assert.ok(!Object.keys(state.files ?? {}).some((k) => k.startsWith("/large_tool_results/")));

  // read_file with offset and limit.
  assert.equal(model.toolResult("r1").content,
    `@@ lines 1001-1005 of ${lines.length} | next offset 1005 @@\n${lines.slice(1000, 1005).join("\n")}`);
  // grep: every NEEDLE line, with its line number.
  const needles = lines.map((l, i) => [i + 1, l]).filter(([, l]) => l.includes("NEEDLE"));
  assert.ok(needles.length >= 5);
  assert.equal(model.toolResult("g1").content,
    ["/large_tool_results/call_e2e_1_x.txt:", ...needles.map(([n, l]) => `  ${n}: ${l}`)].join("\n"));
  // ls shows it with its size.
  assert.ok(model.toolResult("l1").content.split("\n")
    .includes(`/large_tool_results/call_e2e_1_x.txt (${Buffer.byteLength(big)} bytes)`));
});

test("a write the store refuses: deepagents tells the model the result could not be saved", async () => {
  const notDir = path.join(scratch(), "file");
  await import("node:fs").then((fs) => fs.writeFileSync(notDir, "x"));
  const big = bigText(200_000);
  const { model } = await runAgent(offload(path.join(notDir, "store"), scratch()), [textTool("big_tool", big)], [
    { toolCalls: [{ name: "big_tool", args: {}, id: "call_fail" }] },
    { text: "done" },
  ]);
  const msg = model.toolResult("call_fail").content;
  assert.equal(msg, "Tool result too large, but the result could not be saved to the filesystem: " +
    `Error writing file '/call_fail.txt': the offloadfs store is unavailable: agentlink: store '${notDir}/store': Not a directory`);
});

test("many runs over a small bound: the bound holds, and an evicted path reads back as evicted", async () => {
  const runs = 14;
  const size = 300_000;
  const backend = offload(BOUND_STORE, BOUND_MOUNT);
  for (let i = 0; i < runs; i++) {
    const big = bigText(size, `run ${i} `);
    const { model } = await runAgent(backend, [textTool("big_tool", big)], [
      { toolCalls: [{ name: "big_tool", args: {}, id: `call_run_${i}` }] },
      { toolCalls: [{ name: "read_file", args: { file_path: `/large_tool_results/call_run_${i}.txt`, offset: 0, limit: 2 }, id: `r${i}` }] },
      { text: "done" },
    ]);
    assert.ok(model.toolResult(`call_run_${i}`).content.includes(`/large_tool_results/call_run_${i}.txt`));
    assert.ok(model.toolResult(`r${i}`).content.endsWith(big.split("\n").slice(0, 2).join("\n")));
    assert.ok(storedBytes(BOUND_STORE, `call_run_${i}.txt`).equals(Buffer.from(big)), `run ${i} in the store`);
    assert.ok(readFileSync(path.join(BOUND_MOUNT, `call_run_${i}.txt`)).equals(Buffer.from(big)), `run ${i} in the mount`);
    const st = stats(BOUND_STORE);
    assert.ok((st.stored_bytes ?? st.bytes) <= BOUND, `after run ${i}: ${JSON.stringify(st)}`);
  }
  assert.ok(stats(BOUND_STORE).evictions > 0);
  // A later run reads the first run's result: evicted, and the model is told so.
  const { model } = await runAgent(backend, [], [
    { toolCalls: [{ name: "read_file", args: { file_path: "/large_tool_results/call_run_0.txt" }, id: "old" },
      { name: "grep", args: { pattern: "NEEDLE", path: "/large_tool_results/call_run_0.txt" }, id: "oldgrep" }] },
    { text: "done" },
  ]);
  const msg = model.toolResult("old").content;
  assert.match(msg, new RegExp(`^Error: File '/call_run_0\\.txt' \\(${BOUND_MOUNT}/call_run_0\\.txt\\) was evicted ` +
    "from the offloadfs store at \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ \\(to keep the store under its size bound, " +
    "max_total_bytes\\): its content is gone\\. Run the tool that produced it again to get the result\\.$"));
  assert.match(model.toolResult("oldgrep").content, /^File '\/call_run_0\.txt' .* was evicted from the offloadfs store/);
});

test("parallel tool calls: both large results are evicted at once, each exact under its own name", async () => {
  const a = bigText(250_000, "alpha ");
  const b = bigText(300_000, "beta ");
  const { model } = await runAgent(offload(STORE, MOUNT), [textTool("tool_a", a), textTool("tool_b", b)], [
    { toolCalls: [{ name: "tool_a", args: {}, id: "call_par_a" }, { name: "tool_b", args: {}, id: "call_par_b" }] },
    { toolCalls: [{ name: "read_file", args: { file_path: "/large_tool_results/call_par_b.txt", offset: 3, limit: 1 }, id: "rb" }] },
    { text: "done" },
  ]);
  for (const [id, text] of [["call_par_a", a], ["call_par_b", b]]) {
    assert.match(model.toolResult(id).content, new RegExp(`saved in the filesystem at this path: /large_tool_results/${id}\\.txt\n`));
    assert.ok(storedBytes(STORE, `${id}.txt`).equals(Buffer.from(text)), id);
    assert.ok(readFileSync(path.join(MOUNT, `${id}.txt`)).equals(Buffer.from(text)), id);
  }
  assert.ok(model.toolResult("rb").content.endsWith(`\n${b.split("\n")[3]}`));
});
