// lib.mjs -- shared by the MCP client tests and the benchmark: the official
// SDK client (@modelcontextprotocol/sdk) on a stdio transport, talking to an
// official reference server either directly or through
// `agentlink mcp-proxy`. The servers run with node from the installed
// node_modules (scripts/npm-deps.sh tests/mcp), never through npx.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const modules = join(here, 'node_modules', '@modelcontextprotocol');

// The reference servers' entry points, as `node` arguments.
export const EVERYTHING = [join(modules, 'server-everything', 'dist', 'index.js'), 'stdio'];
export const filesystem = (...dirs) => [join(modules, 'server-filesystem', 'dist', 'index.js'), ...dirs];

// The proxy's command line: OFFLOADFS_WRAP (valgrind under make
// test-valgrind) runs it under a tool, as tests/lib.sh does.
export function proxyCommand(opts, server) {
    const build = process.env.OFFLOADFS_BUILD;
    if (!build) throw new Error('OFFLOADFS_BUILD is not set (run through tests/mcp/test_mcp_clients.sh)');
    const wrap = (process.env.OFFLOADFS_WRAP ?? '').split(/\s+/).filter(Boolean);
    const args = ['mcp-proxy'];
    if (opts.store) args.push('--store', opts.store);
    if (opts.namespace) args.push('--namespace', opts.namespace);
    if (opts.mount) args.push('--mount', opts.mount);
    if (opts.config) args.push('--config', opts.config);
    if (opts.noReadTool) args.push('--no-read-tool');
    args.push('--', process.execPath, ...server);
    const argv = [...wrap, join(build, 'agentlink'), ...args];
    return { command: argv[0], args: argv.slice(1) };
}

// connect(server, {proxy, capabilities, handlers, env, maxBufferSize}) -> {client,
// transport, wire, stderr(), close()}. `server` is the node argument list of a reference
// server; `proxy` (the proxy's options: store, mount, ...) puts
// `agentlink mcp-proxy` between the client and the server. `handlers` maps
// request schemas (sampling, elicitation, roots) to the client's answers.
// maxBufferSize: the SDK transport's bound on one incoming message (its
// default, 10 MiB, closes the session on a bigger one).
export async function connect(server, o = {}) {
    const params = o.proxy ? proxyCommand(o.proxy, server) : { command: process.execPath, args: server };
    const stderr = [];
    const transport = new StdioClientTransport({ ...params, env: o.env, stderr: 'pipe', maxBufferSize: o.maxBufferSize });
    transport.stderr?.on('data', (b) => { stderr.push(b); });
    const client = new Client({ name: 'offloadfs-mcp-tests', version: '1.0.0' },
        { capabilities: o.capabilities ?? {} });
    for (const [schema, fn] of o.handlers ?? []) client.setRequestHandler(schema, fn);
    await client.connect(transport);
    // Every message the client receives, in order, as it came off the wire
    // (the SDK runs notification handlers a tick later than it settles
    // responses, so onprogress can miss a notification sent just before the
    // result: the wire shows what was delivered).
    const wire = [];
    const onmessage = transport.onmessage;
    transport.onmessage = (m, extra) => { wire.push(m); onmessage?.(m, extra); };
    const proc = transport._process; // the SDK keeps its child here; close() needs its status
    const exited = new Promise((resolve) => proc.once('close', (code, signal) => resolve({ code, signal })));
    return {
        client, transport, wire,
        stderr: () => Buffer.concat(stderr).toString(),
        // Closes stdin as a client does when it is done and waits for the
        // server (or the proxy, which closes its child's stdin and exits with
        // the child's status) to exit on its own: 5 s, 30 s under
        // OFFLOADFS_WRAP (valgrind). A proxy that does not, or exits with a
        // status other than 0 (a sanitizer's or valgrind's report is a
        // non-zero status), fails the test, with its stderr.
        close: async () => {
            proc.stdin.end();
            const limit = process.env.OFFLOADFS_WRAP ? 30000 : 5000;
            const st = await Promise.race([exited, new Promise((r) => setTimeout(r, limit, null).unref())]);
            if (st) transport._process = undefined; // gone already: the SDK need not wait or kill
            await client.close();
            const err = () => Buffer.concat(stderr).toString().slice(-3000);
            if (!st) throw new Error(`${o.proxy ? 'proxy' : 'server'} still running ${limit / 1000} s after its stdin closed; stderr: ${err()}`);
            if (o.proxy && (st.code !== 0 || st.signal))
                throw new Error(`proxy exited with status ${st.code} signal ${st.signal} after its stdin closed; stderr: ${err()}`);
            return st;
        },
    };
}

// Waits (DEADLINE ms) until fn() is true.
export async function until(fn, deadline = 5000) {
    const end = Date.now() + deadline;
    while (!fn()) {
        if (Date.now() > end) throw new Error(`not within ${deadline} ms: ${fn}`);
        await new Promise((r) => setTimeout(r, 20));
    }
}

// The path a pointer text names under MOUNT, or null.
export function pointerPath(text, mount) {
    const esc = mount.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const m = new RegExp(esc + '/[^\\s\'"`]+').exec(text ?? '');
    return m ? m[0] : null;
}

// Lines "line NNNNNN: ..." of about `bytes` bytes, the same every run, as a
// tool result an agent gets (numbered, so a range or a pattern is checkable).
export function numberedLines(bytes) {
    const out = [];
    let n = 0, size = 0;
    while (size < bytes) {
        n++;
        const l = `line ${String(n).padStart(6, '0')}: the quick brown fox jumps over the lazy dog ${(n * 7919) % 10007}\n`;
        out.push(l); size += l.length;
    }
    return out.join("");
}
