// direct.test.mjs -- the official SDK client against the reference servers,
// with no proxy: what the proxy tests take for granted about the pinned
// servers (the tools they call exist, a long echo comes back whole, the
// image, the progress notifications, the server's requests to the client,
// read_text_file's text twice and its outputSchema). If a new pin changes
// any of it, this fails first, naming what changed.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connect, until, EVERYTHING, filesystem, numberedLines } from './lib.mjs';

const tmp = mkdtempSync(join(process.env.MCP_TMP ?? '/tmp', 'mcp-direct.'));
after(() => rmSync(tmp, { recursive: true, force: true }));

// A client that offers sampling, elicitation and roots. server-everything
// asks for the roots 350 ms after initialising and waits for the answer:
// sessions with these capabilities wait for that request before closing, or
// the server would not exit when its stdin closes.
const everyCaps = { sampling: {}, elicitation: {}, roots: { listChanged: true } };
function everyHandlers(seen) {
    return [
        [CreateMessageRequestSchema, (req) => { seen.push(req.method); return { model: 'offloadfs-test-model', role: 'assistant', content: { type: 'text', text: 'sampled by the test client' } }; }],
        [ElicitRequestSchema, (req) => { seen.push(req.method); return { action: 'decline' }; }],
        [ListRootsRequestSchema, (req) => { seen.push(req.method); return { roots: [{ uri: 'file:///offloadfs-test-root', name: 'offloadfs test root' }] }; }],
    ];
}

test('server-everything: the tools the proxy tests call are listed', async () => {
    const seen = [];
    const s = await connect(EVERYTHING, { capabilities: everyCaps, handlers: everyHandlers(seen) });
    try {
        const names = (await s.client.listTools()).tools.map((t) => t.name);
        await until(() => seen.includes('roots/list'));
        for (const n of ['echo', 'get-env', 'get-sum', 'get-tiny-image', 'get-structured-content',
            'trigger-long-running-operation', 'trigger-sampling-request', 'trigger-elicitation-request', 'get-roots-list'])
            assert.ok(names.includes(n), `tool ${n} missing from ${names.join(', ')}`);
    } finally { await s.close(); }
});

test('server-everything: a 200 KB echo comes back whole, as one text part', async () => {
    const s = await connect(EVERYTHING);
    try {
        const msg = numberedLines(200_000);
        const r = await s.client.callTool({ name: 'echo', arguments: { message: msg } });
        assert.deepEqual(r.content, [{ type: 'text', text: `Echo: ${msg}` }]);
    } finally { await s.close(); }
});

test('server-everything: get-env returns the server environment (a 300 KB one here)', async () => {
    const big = 'x'.repeat(100_000);
    const s = await connect(EVERYTHING, { env: { MCP_BIG_A: big, MCP_BIG_B: big, MCP_BIG_C: big } });
    try {
        const r = await s.client.callTool({ name: 'get-env', arguments: {} });
        assert.equal(r.content.length, 1);
        assert.equal(JSON.parse(r.content[0].text).MCP_BIG_B, big);
        assert.ok(r.content[0].text.length > 300_000);
    } finally { await s.close(); }
});

test('server-everything: get-tiny-image returns text, a PNG image, text', async () => {
    const s = await connect(EVERYTHING);
    try {
        const r = await s.client.callTool({ name: 'get-tiny-image', arguments: {} });
        assert.deepEqual(r.content.map((c) => c.type), ['text', 'image', 'text']);
        assert.equal(r.content[1].mimeType, 'image/png');
        assert.equal(Buffer.from(r.content[1].data, 'base64').subarray(1, 4).toString(), 'PNG');
    } finally { await s.close(); }
});

test('server-everything: progress notifications arrive before the result and reach onprogress', async () => {
    const s = await connect(EVERYTHING);
    try {
        const seen = [];
        const r = await s.client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
            undefined, { onprogress: (p) => seen.push(p) });
        const progress = s.wire.filter((m) => m.method === 'notifications/progress').map((m) => [m.params.progress, m.params.total]);
        assert.deepEqual(progress, [[1, 3], [2, 3], [3, 3]]);
        assert.ok(s.wire.findIndex((m) => m.result?.content) > s.wire.findLastIndex((m) => m.method === 'notifications/progress'));
        // The SDK may drop the last one (its handler runs a tick after the
        // response is settled); the ones before it reach onprogress.
        assert.deepEqual(seen.slice(0, 2), [1, 2].map((i) => ({ progress: i, total: 3 })));
        assert.match(r.content[0].text, /completed/);
    } finally { await s.close(); }
});

test('server-everything: sampling, elicitation and roots requests reach the client', async () => {
    const seen = [];
    const s = await connect(EVERYTHING, { capabilities: everyCaps, handlers: everyHandlers(seen) });
    try {
        const sm = await s.client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hello' } });
        assert.match(sm.content[0].text, /sampled by the test client/);
        await s.client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
        const rl = await s.client.callTool({ name: 'get-roots-list', arguments: {} });
        assert.match(rl.content[0].text, /file:\/\/\/offloadfs-test-root/);
        for (const m of ['sampling/createMessage', 'elicitation/create', 'roots/list'])
            assert.ok(seen.includes(m), `${m} not seen: ${seen}`);
    } finally { await s.close(); }
});

test('server-filesystem: read_text_file of 1 MB returns it twice (text and structuredContent) and validates', async () => {
    const data = numberedLines(1 << 20);
    writeFileSync(join(tmp, 'big.txt'), data);
    const s = await connect(filesystem(tmp));
    try {
        const tools = (await s.client.listTools()).tools;
        const rt = tools.find((t) => t.name === 'read_text_file');
        assert.equal(rt.outputSchema?.properties?.content?.type, 'string');
        const r = await s.client.callTool({ name: 'read_text_file', arguments: { path: join(tmp, 'big.txt') } });
        assert.deepEqual(r.content, [{ type: 'text', text: data }]);
        assert.deepEqual(r.structuredContent, { content: data });
    } finally { await s.close(); }
});
