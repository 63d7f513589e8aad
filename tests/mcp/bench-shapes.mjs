// bench-shapes.mjs -- what the proxy costs and saves for three answer shapes
// of about 1 MB (shapes-server.mjs), the figures of doc/mcp-proxy.md. Not a
// test: it asserts nothing and prints one JSON object.
//
//   OFFLOADFS_BUILD=build node tests/mcp/bench-shapes.mjs STORE MOUNT [CALLS]
//
// For each shape, CALLS (default 20) calls on a direct session and on a
// proxied one, interleaved call by call, each through the official SDK
// client (which checks structuredContent against the tool's outputSchema):
// the median wall time of a call either way and their difference, the bytes
// of the answer the client receives either way, and the store entries the
// proxy wrote per call.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from './lib.mjs';

const [STORE, MOUNT, CALLS = '20'] = process.argv.slice(2);
if (!STORE || !MOUNT) { console.error('usage: bench-shapes.mjs STORE MOUNT [CALLS]'); process.exit(2); }
const AGENTLINK = join(process.env.OFFLOADFS_BUILD ?? 'build', 'agentlink');
const SHAPES = [join(dirname(fileURLToPath(import.meta.url)), 'shapes-server.mjs')];
const now = () => Number(process.hrtime.bigint()) / 1e6;
const median = (a) => { const s = [...a].sort((x, y) => x - y), m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const entries = () => JSON.parse(execFileSync(AGENTLINK, ['--store', STORE, 'ls', '--json'], { maxBuffer: 64 << 20 }).toString()).length;
const lastBytes = (s) => Buffer.byteLength(JSON.stringify(s.wire.filter((m) => m.result?.content).at(-1)));

const cases = {
    'structuredContent of 1 MB of short strings, a short text': 'shape_sc_only',
    'text of 1 MB (numbered lines), no structuredContent': 'shape_text',
    'text of 1.1 MB (the JSON) and the same structure as structuredContent': 'shape_enum',
};
const out = {};
const d = await connect(SHAPES), p = await connect(SHAPES, { proxy: { store: STORE, mount: MOUNT } });
try {
    await d.client.listTools();
    await p.client.listTools();
    for (const [what, tool] of Object.entries(cases)) {
        const td = [], tp = [];
        const args = { name: tool, arguments: {} };
        await d.client.callTool(args); await p.client.callTool(args); // warm
        const before = entries();
        for (let i = 0; i < Number(CALLS); i++) {
            let t = now(); await d.client.callTool(args); td.push(now() - t);
            t = now(); await p.client.callTool(args); tp.push(now() - t);
        }
        const written = (entries() - before) / Number(CALLS);
        out[what] = {
            tool, calls: Number(CALLS),
            direct_ms: +median(td).toFixed(2), proxy_ms: +median(tp).toFixed(2),
            added_ms: +(median(tp) - median(td)).toFixed(2),
            direct_bytes: lastBytes(d), proxy_bytes: lastBytes(p), entries_per_call: written,
        };
    }
} finally { await d.close(); await p.close(); }
console.log(JSON.stringify(out, null, 2));
