// bench.mjs -- the mcp-proxy benchmark's driver (scripts/bench_mcp.sh runs it;
// make bench). Not a test: it asserts nothing and prints one JSON object.
//
//   node tests/mcp/bench.mjs STORE MOUNT WORKDIR [CALLS] [SIZES_MB]
//
// small:  CALLS (default 1000) echo calls to server-everything on a direct
//         session and on a proxied one, interleaved call by call; the
//         median latency of each and their ratio; the proxy's CPU time
//         per call (both messages).
// large:  read_text_file of a file of SIZES_MB (default "1,50") megabytes
//         from server-filesystem, directly and through the proxy: the wall
//         time of the call on each side; the proxy's own CPU time for the
//         call (its threads' schedstat run time, the cost of parsing, storing and
//         rewriting the message); the client's JSON.parse of the same
//         message as the server sends it (what a client pays without the
//         proxy) and the SDK's check of the result's schema after it; no
//         direct call for a message over the SDK's 10 MiB bound (it closes
//         the session);
//         the bytes the client receives either way.
// rss:    the proxy's peak resident memory (VmHWM, which counts the store's
//         pages it maps too) after the largest call, and its peak RssAnon
//         sampled during the calls (its own memory), against the largest
//         message it relayed.
import { writeFileSync } from 'node:fs';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { connect, EVERYTHING, filesystem, numberedLines } from './lib.mjs';

const [STORE, MOUNT, WORK, CALLS = '1000', SIZES = '1,50'] = process.argv.slice(2);
if (!STORE || !MOUNT || !WORK) { console.error('usage: bench.mjs STORE MOUNT WORKDIR [CALLS] [SIZES_MB]'); process.exit(2); }
const PROXY = { store: STORE, mount: MOUNT };

const now = () => Number(process.hrtime.bigint()) / 1e6; // ms
const median = (a) => { const s = [...a].sort((x, y) => x - y), m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
// CPU time PID has run so far, all its threads (schedstat: nanoseconds on a CPU).
function cpuMs(pid) {
    let ns = 0;
    for (const t of readdirSync(`/proc/${pid}/task`))
        ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
    return ns / 1e6;
}
const statusKiB = (pid, field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
const hwmKiB = (pid) => statusKiB(pid, 'VmHWM');
// The largest RssAnon of PID seen while fn() runs (sampled every 2 ms): the
// proxy's own memory, without the store's file pages it maps (VmHWM counts
// those too).
let anonPeak = 0;
async function sampling(pid, fn) {
    const t = setInterval(() => { try { anonPeak = Math.max(anonPeak, statusKiB(pid, 'RssAnon')); } catch { /* gone */ } }, 2);
    try { return await fn(); } finally { clearInterval(t); }
}
// The proxy's pid: the transport's child, unless it was wrapped (valgrind).
const proxyPid = (s) => s.transport.pid;

async function small(n) {
    const d = await connect(EVERYTHING), p = await connect(EVERYTHING, { proxy: PROXY });
    try {
        const args = { name: 'echo', arguments: { message: 'a small call' } };
        for (let i = 0; i < 50; i++) { await d.client.callTool(args); await p.client.callTool(args); } // warm
        const td = [], tp = [];
        const c0 = cpuMs(proxyPid(p));
        for (let i = 0; i < n; i++) {
            for (const [s, t] of i % 2 ? [[d, td], [p, tp]] : [[p, tp], [d, td]]) {
                const t0 = now();
                await s.client.callTool(args);
                t.push(now() - t0);
            }
        }
        const cpu = (cpuMs(proxyPid(p)) - c0) / n;
        return { calls: n, direct_ms: median(td), proxy_ms: median(tp), ratio: median(tp) / median(td), proxy_cpu_ms_per_call: cpu };
    } finally { await d.close().catch(() => {}); await p.close().catch(() => {}); }
}

// The message server-filesystem sends for read_text_file of DATA (the text
// twice), as it serialises it: what a client parses without the proxy.
const message = (data, id) => JSON.stringify({ result: { content: [{ type: 'text', text: data }], structuredContent: { content: data } }, jsonrpc: '2.0', id });
const SDK_MAX = 10 * 1024 * 1024; // the SDK stdio transport's default bound on one message

async function large(mb, runs, s, d) {
    const path = join(WORK, `large-${mb}.txt`);
    const data = numberedLines(mb * 1e6);
    writeFileSync(path, data);
    const args = { name: 'read_text_file', arguments: { path } };
    const line = message(data, 7);
    const msgBytes = Buffer.byteLength(line);
    // Over the SDK's bound a direct session is closed (and raising the bound
    // does not help: its read buffer concatenates every chunk, quadratic in
    // the message, past the 60 s request timeout at 100 MB): no direct call.
    const direct = msgBytes <= SDK_MAX;
    const wd = [], wp = [], cpu = [], parse = [], sdk = [];
    let gotBytes = 0;
    for (let r = 0; r < runs; r++) {
        let t0;
        if (direct) {
            t0 = now();
            await d.client.callTool(args);
            wd.push(now() - t0);
            d.wire.length = 0;
        }
        t0 = now(); const msg = JSON.parse(line); parse.push(now() - t0);
        t0 = now(); CallToolResultSchema.parse(msg.result); sdk.push(now() - t0);
        const c0 = cpuMs(proxyPid(s));
        t0 = now();
        await sampling(proxyPid(s), () => s.client.callTool(args));
        wp.push(now() - t0);
        cpu.push(cpuMs(proxyPid(s)) - c0);
        gotBytes = Buffer.byteLength(JSON.stringify(s.wire.at(-1)));
        s.wire.length = 0;
        console.error(`bench.mjs: ${mb} MB run ${r + 1}: direct ${direct ? wd.at(-1).toFixed(1) + ' ms' : '-'}, proxy ${wp.at(-1).toFixed(1)} ms (proxy CPU ${cpu.at(-1).toFixed(1)} ms)`);
    }
    return {
        mb, file_bytes: data.length, message_bytes: msgBytes, received_bytes: gotBytes, runs,
        direct_wall_ms: direct ? median(wd) : null, proxy_wall_ms: median(wp), proxy_cpu_ms: median(cpu),
        client_json_parse_ms: median(parse), client_sdk_schema_ms: median(sdk),
        cpu_over_parse: median(cpu) / median(parse),
    };
}

const out = { small: await small(Number(CALLS)), large: [] };
const d = await connect(filesystem(WORK)), s = await connect(filesystem(WORK), { proxy: PROXY });
process.on('exit', (code) => { if (code) console.error(`bench.mjs: the proxy's stderr:\n${s.stderr()}\nthe direct server's:\n${d.stderr()}`); });
try {
    await d.client.listTools(); await s.client.listTools();
    let biggest = 0;
    for (const mb of SIZES.split(',').map(Number)) {
        const r = await large(mb, mb >= 10 ? 3 : 15, s, d);
        out.large.push(r);
        biggest = Math.max(biggest, r.message_bytes);
    }
    const hwm = hwmKiB(proxyPid(s)) * 1024;
    out.rss = { proxy_peak_bytes: hwm, largest_message_bytes: biggest, ratio: hwm / biggest,
        proxy_peak_anon_bytes: anonPeak * 1024, anon_ratio: anonPeak * 1024 / biggest };
} finally { await d.close().catch(() => {}); await s.close().catch(() => {}); } // a bench asserts nothing
console.log(JSON.stringify(out, null, 1));
