// bench.mjs -- the mcp-proxy benchmark's driver (scripts/bench_mcp.sh runs it;
// make bench). Not a test: it asserts nothing and prints one JSON object.
//
//   node tests/mcp/bench.mjs STORE MOUNT WORKDIR [CALLS] [SIZES_MB]
//
// small:  CALLS (default 1000) echo calls to server-everything on a direct
//         session and on a proxied one, interleaved call by call; the
//         median latency of each and their ratio.
// large:  read_text_file of a file of SIZES_MB (default "1,50") megabytes
//         from server-filesystem, directly and through the proxy: the wall
//         time of the call on each side; the proxy's own CPU time for the
//         call (its threads' schedstat run time, the cost of parsing, storing and
//         rewriting the message); the client's JSON.parse of the same
//         message as the server sends it (what a client pays without the
//         proxy) and the SDK's check of the result's schema after it;
//         the bytes the client receives either way.
// rss:    the proxy's peak resident memory (VmHWM) after the largest call,
//         against the largest message it relayed.
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
const hwmKiB = (pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
// The proxy's pid: the transport's child, unless it was wrapped (valgrind).
const proxyPid = (s) => s.transport.pid;

async function small(n) {
    const d = await connect(EVERYTHING), p = await connect(EVERYTHING, { proxy: PROXY });
    try {
        const args = { name: 'echo', arguments: { message: 'a small call' } };
        for (let i = 0; i < 50; i++) { await d.client.callTool(args); await p.client.callTool(args); } // warm
        const td = [], tp = [];
        for (let i = 0; i < n; i++) {
            for (const [s, t] of i % 2 ? [[d, td], [p, tp]] : [[p, tp], [d, td]]) {
                const t0 = now();
                await s.client.callTool(args);
                t.push(now() - t0);
            }
        }
        return { calls: n, direct_ms: median(td), proxy_ms: median(tp), ratio: median(tp) / median(td) };
    } finally { await d.close(); await p.close(); }
}

async function large(mb, runs, s, d) {
    const path = join(WORK, `large-${mb}.txt`);
    const data = numberedLines(mb * 1e6);
    writeFileSync(path, data);
    const args = { name: 'read_text_file', arguments: { path } };
    const wd = [], wp = [], cpu = [], parse = [], sdk = [];
    let msgBytes = 0, gotBytes = 0;
    for (let r = 0; r < runs; r++) {
        let t0 = now();
        await d.client.callTool(args);
        wd.push(now() - t0);
        const line = JSON.stringify(d.wire.at(-1)); // the message as the server sent it
        d.wire.length = 0;
        msgBytes = Buffer.byteLength(line);
        t0 = now(); const msg = JSON.parse(line); parse.push(now() - t0);
        t0 = now(); CallToolResultSchema.parse(msg.result); sdk.push(now() - t0);
        const c0 = cpuMs(proxyPid(s));
        t0 = now();
        await s.client.callTool(args);
        wp.push(now() - t0);
        cpu.push(cpuMs(proxyPid(s)) - c0);
        gotBytes = Buffer.byteLength(JSON.stringify(s.wire.at(-1)));
        s.wire.length = 0;
    }
    return {
        mb, file_bytes: data.length, message_bytes: msgBytes, received_bytes: gotBytes, runs,
        direct_wall_ms: median(wd), proxy_wall_ms: median(wp), proxy_cpu_ms: median(cpu),
        client_json_parse_ms: median(parse), client_sdk_schema_ms: median(sdk), cpu_over_parse: median(cpu) / median(parse),
    };
}

const out = { small: await small(Number(CALLS)), large: [] };
// The direct client must take a 100 MB message: the SDK's transport closes
// the session on one over 10 MiB unless told otherwise (the proxied client
// keeps the default: it never sees a big one).
const d = await connect(filesystem(WORK), { maxBufferSize: 1 << 30 }), s = await connect(filesystem(WORK), { proxy: PROXY });
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
    out.rss = { proxy_peak_bytes: hwm, largest_message_bytes: biggest, ratio: hwm / biggest };
} finally { await d.close(); await s.close(); }
console.log(JSON.stringify(out, null, 1));
