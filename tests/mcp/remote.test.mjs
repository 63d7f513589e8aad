// remote.test.mjs -- a remote (Streamable HTTP) server behind the proxy,
// reached through the stdio bridge mcp-remote (pinned in package.json):
// `agentlink mcp-proxy -- npx mcp-remote URL`, as doc/mcp-proxy.md says.
// server-everything runs in its streamableHttp mode on a free loopback
// port; the official SDK client talks to the proxy.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, until, numberedLines, pointerPath } from './lib.mjs';

const STORE = process.env.MCP_STORE, MOUNT = process.env.MCP_MOUNT;
if (!STORE || !MOUNT) throw new Error('run through tests/mcp/test_mcp_clients.sh (MCP_STORE, MCP_MOUNT)');
const here = dirname(fileURLToPath(import.meta.url));
const EVERYTHING_JS = join(here, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const MCP_REMOTE = join(here, 'node_modules', 'mcp-remote', 'dist', 'proxy.js');
const tmp = mkdtempSync(join(process.env.MCP_TMP ?? '/tmp', 'mcp-remote.'));

// A port nothing listens on now (the kernel's pick for port 0).
function freePort() {
    return new Promise((resolve, reject) => {
        const s = createServer();
        s.once('error', reject);
        s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
    });
}

let http = null, url = '', log = '';
before(async () => {
    const port = await freePort();
    http = spawn(process.execPath, [EVERYTHING_JS, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    http.stdout.on('data', (b) => { log += b; });
    http.stderr.on('data', (b) => { log += b; });
    await until(() => log.includes(`listening on port ${port}`) || http.exitCode !== null, 15000);
    assert.equal(http.exitCode, null, `server-everything streamableHttp on port ${port} failed: ${log}`);
    url = `http://127.0.0.1:${port}/mcp`;
});
after(() => { http?.kill('SIGTERM'); rmSync(tmp, { recursive: true, force: true }); });

// mcp-remote keeps its state under MCP_REMOTE_CONFIG_DIR (else ~/.mcp-auth).
const env = () => ({ ...process.env, MCP_REMOTE_CONFIG_DIR: join(tmp, 'mcp-auth') });

test('a Streamable HTTP server through mcp-remote behind the proxy: small calls identical, a 200 KB echo becomes a pointer serving its bytes', async () => {
    const bridge = [MCP_REMOTE, url];
    const run = async (proxy) => {
        const s = await connect(bridge, { proxy, env: env() });
        const proc = s.transport._process;
        const exited = new Promise((r) => proc.once('close', r));
        try {
            const tools = (await s.client.listTools()).tools.map((t) => t.name);
            const small = await s.client.callTool({ name: 'echo', arguments: { message: 'over http' } });
            const big = await s.client.callTool({ name: 'echo', arguments: { message: numberedLines(200_000) } });
            return { tools, small, big };
        } finally { await s.client.close(); await exited; }
    };
    const d = await run(null);
    const p = await run({ store: STORE, mount: MOUNT });
    assert.deepEqual(p.tools, [...d.tools, 'read_offloaded_result']);
    assert.deepEqual(p.small, d.small);
    const want = d.big.content[0].text;
    assert.equal(want, `Echo: ${numberedLines(200_000)}`);
    const path = pointerPath(p.big.content[0].text, MOUNT);
    assert.ok(path, `a pointer: ${p.big.content[0].text.slice(0, 200)}`);
    assert.equal(readFileSync(path, 'utf8'), want);
});
