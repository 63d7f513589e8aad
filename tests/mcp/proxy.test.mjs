// proxy.test.mjs -- the same SDK client, the same reference servers, once
// directly and once through `agentlink mcp-proxy --store S --mount M`; what
// the client receives is compared. Small results and everything that is not
// a tools/call result must be identical; a large text result must become a
// pointer whose path serves the exact bytes through the real mount (read by
// node and by cat); images pass unchanged; progress notifications and the
// server's own requests (sampling, elicitation, roots) get through; an
// outputSchema still validates; the proxy's read_offloaded_result tool reads
// ranges and patterns from the store and says when a path is evicted or
// unknown.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connect, until, EVERYTHING, filesystem, numberedLines, pointerPath } from './lib.mjs';

const STORE = process.env.MCP_STORE, MOUNT = process.env.MCP_MOUNT, SMALL = process.env.MCP_SMALL_STORE;
const AGENTLINK = join(process.env.OFFLOADFS_BUILD ?? '', 'agentlink');
if (!STORE || !MOUNT || !SMALL) throw new Error('run through tests/mcp/test_mcp_clients.sh (MCP_STORE, MCP_MOUNT, MCP_SMALL_STORE)');
const PROXY = { store: STORE, mount: MOUNT };
const BUDGET = 32768; // the default policy: offload over 32 KiB
const READ_TOOL = 'read_offloaded_result';

const tmp = mkdtempSync(join(process.env.MCP_TMP ?? '/tmp', 'mcp-proxy.'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const figure = (line) => { if (process.env.MCP_FIGURES) appendFileSync(process.env.MCP_FIGURES, line + '\n'); };

// A file of numbered lines with one header line first, so that file line
// N + 1 holds "line N": a reader's line numbers are checkable against the text.
function numberedFile(name, bytes) {
    const data = 'header: numbered lines follow\n' + numberedLines(bytes);
    writeFileSync(join(tmp, name), data);
    return { path: join(tmp, name), data, lines: data.split('\n') };
}

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

// Runs fn(session) on a direct session and on a proxied one (same options),
// returns [direct, proxied] results.
async function both(server, fn, o = {}) {
    const out = [];
    for (const proxy of [null, o.proxy ?? PROXY]) {
        const s = await connect(server, { ...o, proxy });
        try { out.push(await fn(s)); } finally { await s.close(); }
    }
    return out;
}

// A call's outcome, result or JSON-RPC error, as data to compare.
async function outcome(p) {
    try { return { result: await p }; } catch (e) { return { error: { code: e.code, message: e.message } }; }
}

// The exact bytes at PATH through the mount, read by node and by cat.
function assertServes(path, want) {
    assert.ok(path.startsWith(MOUNT + '/'), `pointer path ${path} is under the mount ${MOUNT}`);
    const got = readFileSync(path);
    assert.equal(got.length, Buffer.byteLength(want), 'size of the file behind the pointer');
    assert.ok(got.equals(Buffer.from(want)), 'fs.readFileSync of the pointer path gives the exact bytes');
    const catted = execFileSync('cat', [path], { maxBuffer: 256 << 20 });
    assert.ok(catted.equals(Buffer.from(want)), 'cat of the pointer path gives the exact bytes');
}

// The path the pointer TEXT names under the mount; fails the test if none.
function mustPointer(text) {
    const path = pointerPath(text, MOUNT);
    assert.ok(path, `a pointer naming a path under ${MOUNT}, got: ${String(text).slice(0, 300)}`);
    return path;
}

function textOf(r) { return r.content.filter((c) => c.type === 'text').map((c) => c.text).join(''); }

// A tools/list through the proxy as the server's, with each outputSchema the
// proxy rewrote put back: it keeps the server's schema whole as the first
// branch of anyOf (its $schema, $id, $defs and definitions at the root), the
// second admitting the object that stands for a stored structuredContent.
function unrelaxed(list) {
    const hoisted = ['$schema', '$id', '$defs', 'definitions'];
    return {
        ...list,
        tools: list.tools.map((t) => {
            if (!t.outputSchema) return t;
            const o = t.outputSchema;
            assert.equal(o.type, 'object');
            assert.equal(o.anyOf?.length, 2, `${t.name}: outputSchema is {type, anyOf: [the server's, the pointer's]}`);
            assert.deepEqual(o.anyOf[1].required, ['offloaded']);
            const back = { ...o.anyOf[0] };
            for (const k of hoisted) if (k in o) back[k] = o[k];
            assert.deepEqual(Object.keys(o).filter((k) => !['type', 'anyOf', ...hoisted].includes(k)), []);
            return { ...t, outputSchema: back };
        }),
    };
}

test('tools/list through the proxy: the server\'s tools unchanged, plus read_offloaded_result', async () => {
    const seen = [], roots = () => seen.filter((m) => m === 'roots/list').length;
    const list = async (s) => { const n = roots(), r = await s.client.listTools(); await until(() => roots() > n); return r; };
    const [d, p] = await both(EVERYTHING, list, { capabilities: everyCaps, handlers: everyHandlers(seen) });
    const added = p.tools.filter((t) => t.name === READ_TOOL);
    assert.equal(added.length, 1, 'one read_offloaded_result tool');
    assert.ok(d.tools.some((t) => t.outputSchema), 'server-everything has a tool with an outputSchema');
    // Object key order aside (deepEqual ignores it), the server's list.
    assert.deepEqual(unrelaxed({ ...p, tools: p.tools.filter((t) => t.name !== READ_TOOL) }), d);
    const props = added[0].inputSchema?.properties ?? {};
    for (const k of ['path', 'offset', 'limit', 'pattern', 'byte_offset', 'byte_limit']) assert.ok(props[k], `input ${k} declared`);
    assert.deepEqual(added[0].inputSchema.required, ['path']);
});

test('--no-read-tool: tools/list and a call of read_offloaded_result as without the proxy; the pointer does not name it', async () => {
    const run = async (s) => ({
        list: await s.client.listTools(),
        read: await outcome(s.client.callTool({ name: READ_TOOL, arguments: { path: `${MOUNT}/x` } })),
    });
    const [d, p] = await both(EVERYTHING, run, { proxy: { ...PROXY, noReadTool: true } });
    // Output schemas admit the stored structure's object with the read tool
    // off too (the SDK validates against them); nothing else differs.
    assert.deepEqual({ ...p, list: unrelaxed(p.list) }, d);
    const msg = numberedLines(100_000).replaceAll('dog', 'cat');
    const s = await connect(EVERYTHING, { proxy: { ...PROXY, noReadTool: true } });
    try {
        const r = await s.client.callTool({ name: 'echo', arguments: { message: msg } });
        assert.doesNotMatch(r.content[0].text, new RegExp(READ_TOOL));
        assertServes(mustPointer(r.content[0].text), `Echo: ${msg}`);
    } finally { await s.close(); }
});

test('small results, prompts, resources, ping and errors: identical direct and through the proxy', async () => {
    const run = async (s) => {
        const c = s.client, out = {};
        await c.listTools();
        out.echo = await c.callTool({ name: 'echo', arguments: { message: 'hello, proxy' } });
        out.sum = await c.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } });
        out.structured = await c.callTool({ name: 'get-structured-content', arguments: { location: 'Chicago' } });
        out.annotated = await c.callTool({ name: 'get-annotated-message', arguments: { messageType: 'error', includeImage: true } });
        out.unicode = await c.callTool({ name: 'echo', arguments: { message: 'naïve café 日本語 🙂 "quotes" \\ back\nslash' } });
        out.justUnder = await c.callTool({ name: 'echo', arguments: { message: 'y'.repeat(BUDGET - 1000) } });
        out.prompts = await c.listPrompts();
        out.prompt = await outcome(c.getPrompt({ name: 'simple-prompt', arguments: {} }));
        out.resources = await c.listResources();
        out.templates = await c.listResourceTemplates();
        out.resource = await outcome(c.readResource({ uri: out.resources.resources[0].uri }));
        out.ping = await c.ping();
        out.unknownTool = await outcome(c.callTool({ name: 'no-such-tool', arguments: {} }));
        out.badArgs = await outcome(c.callTool({ name: 'get-sum', arguments: { a: 'two' } }));
        return out;
    };
    const [d, p] = await both(EVERYTHING, run);
    assert.equal(d.sum.content[0].text.includes('42'), true);
    assert.equal(d.justUnder.content[0].text.length, BUDGET - 1000 + 6);
    for (const k of Object.keys(d)) assert.deepEqual(p[k], d[k], `${k} differs through the proxy`);
});

test('a 200 KB echo through the proxy: a pointer whose path serves the exact text through the mount', async () => {
    const msg = numberedLines(200_000);
    const [d, p] = await both(EVERYTHING, (s) => s.client.callTool({ name: 'echo', arguments: { message: msg } }));
    assert.deepEqual(d.content, [{ type: 'text', text: `Echo: ${msg}` }]);
    assert.equal(p.content.length, 1);
    assert.equal(p.content[0].type, 'text');
    const ptr = p.content[0].text;
    assert.ok(ptr.length < BUDGET, `pointer text of ${ptr.length} bytes is within the budget`);
    assert.match(ptr, new RegExp(READ_TOOL), 'the pointer says how to call the read tool');
    assertServes(mustPointer(ptr), `Echo: ${msg}`);
});

test('get-env with a 300 KB environment (text the server makes): offloaded, exact bytes through the mount', async () => {
    const big = 'x'.repeat(100_000);
    const env = { MCP_BIG_A: big, MCP_BIG_B: big, MCP_BIG_C: big };
    const s = await connect(EVERYTHING, { proxy: PROXY, env });
    const d = await connect(EVERYTHING, { env });
    try {
        const want = (await d.client.callTool({ name: 'get-env', arguments: {} })).content[0].text;
        const r = await s.client.callTool({ name: 'get-env', arguments: {} });
        const path = mustPointer(r.content[0].text);
        const got = readFileSync(path, 'utf8');
        // The proxy's child inherits the proxy's environment: the same big
        // values (a tool such as valgrind may add variables of its own), and
        // the file is the server's JSON text exactly as it printed it.
        const env = JSON.parse(got);
        for (const k of ['MCP_BIG_A', 'MCP_BIG_B', 'MCP_BIG_C']) assert.equal(env[k], big, k);
        assert.equal(got, JSON.stringify(env, null, 2));
        if (!process.env.OFFLOADFS_WRAP) assert.equal(got, want);
    } finally { await s.close(); await d.close(); }
});

test('get-tiny-image through the proxy: identical (text, image, text)', async () => {
    const [d, p] = await both(EVERYTHING, (s) => s.client.callTool({ name: 'get-tiny-image', arguments: {} }));
    assert.deepEqual(d.content.map((c) => c.type), ['text', 'image', 'text']);
    assert.deepEqual(p, d);
});

test('--config: a tool the policy always offloads keeps its image after the pointer; one it never offloads passes whole', async () => {
    const config = join(tmp, 'policy.json');
    writeFileSync(config, JSON.stringify({ rules: [
        { tools: ['get-tiny-image'], offload: 'always' },
        { tools: ['echo'], offload: 'never' },
        { tools: ['*'], offload: { over_bytes: BUDGET } },
    ] }));
    const msg = numberedLines(200_000);
    const run = async (s) => ({
        image: await s.client.callTool({ name: 'get-tiny-image', arguments: {} }),
        echo: await s.client.callTool({ name: 'echo', arguments: { message: msg } }),
    });
    const [d, p] = await both(EVERYTHING, run, { proxy: { ...PROXY, config } });
    assert.deepEqual(p.echo, d.echo, 'a tool the policy never offloads passes whole');
    assert.deepEqual(p.image.content.map((c) => c.type), ['text', 'image'], 'the pointer, then the image');
    assert.deepEqual(p.image.content[1], d.image.content[1], 'the image part unchanged');
    // The text parts, joined with a newline, are what is stored.
    const texts = d.image.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
    assertServes(mustPointer(p.image.content[0].text), texts);
});

test('a store that cannot be opened or is damaged never breaks a call: the large result passes unchanged', async () => {
    const msg = numberedLines(100_000);
    writeFileSync(join(tmp, 'not-a-store'), 'a file where the store directory should be\n');
    mkdirSync(join(tmp, 'damaged'));
    writeFileSync(join(tmp, 'damaged', 'data.mdb'), Buffer.alloc(1 << 16, 0x5a));
    const run = async (s) => ({
        big: await s.client.callTool({ name: 'echo', arguments: { message: msg } }),
        small: await s.client.callTool({ name: 'echo', arguments: { message: 'still here' } }),
    });
    for (const store of [join(tmp, 'not-a-store'), join(tmp, 'damaged')]) {
        let log = '';
        const [d, p] = await both(EVERYTHING, async (s) => { const r = await run(s); log = s.stderr(); return r; },
            { proxy: { store, mount: MOUNT } });
        assert.equal(d.big.content[0].text.length, msg.length + 6);
        assert.deepEqual(p, d, `store ${store}`);
        assert.ok(log.includes(store), `the proxy says on stderr which store failed: ${log}`);
    }
});

test('logging: setLevel and the server\'s log notifications pass through the proxy', async () => {
    const run = async (s) => {
        const level = await s.client.setLoggingLevel('debug');
        const on = await s.client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
        await until(() => s.wire.some((m) => m.method === 'notifications/message'));
        const off = await s.client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
        const log = s.wire.find((m) => m.method === 'notifications/message');
        return { level, on, off, log: { method: log.method, logger: log.params.logger, isLevel: /^(debug|info|notice|warning|error|critical|alert|emergency)$/.test(log.params.level) } };
    };
    const [d, p] = await both(EVERYTHING, run);
    assert.equal(d.log.isLevel, true);
    assert.deepEqual(p, d);
});

test('twenty calls in flight at once, large and small: each answer matches its own call', async () => {
    const s = await connect(EVERYTHING, { proxy: PROXY });
    try {
        const msgs = Array.from({ length: 20 }, (_, i) => (i % 3 === 0 ? numberedLines(40_000 + i * 1000).replaceAll('fox', `fox${i}`) : `small ${i}`));
        const rs = await Promise.all(msgs.map((message) => s.client.callTool({ name: 'echo', arguments: { message } })));
        rs.forEach((r, i) => {
            if (i % 3 === 0) assertServes(mustPointer(r.content[0].text), `Echo: ${msgs[i]}`);
            else assert.deepEqual(r.content, [{ type: 'text', text: `Echo: ${msgs[i]}` }]);
        });
    } finally { await s.close(); }
});

test('progress notifications through the proxy: all of them, in order, before the result', async () => {
    const run = async (s) => {
        const seen = [];
        const r = await s.client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.4, steps: 4 } },
            undefined, { onprogress: (x) => seen.push(x) });
        const wire = s.wire.filter((m) => m.method === 'notifications/progress' || m.result?.content)
            .map((m) => (m.method ? `progress ${m.params.progress}/${m.params.total}` : 'result'));
        return { r, wire, seen: seen.slice(0, 3) };
    };
    const [d, p] = await both(EVERYTHING, run);
    assert.deepEqual(d.wire, ['progress 1/4', 'progress 2/4', 'progress 3/4', 'progress 4/4', 'result']);
    assert.deepEqual(p, d);
});

test('sampling, elicitation and roots requests from the server reach the client through the proxy', async () => {
    const run = async (s) => {
        const out = {};
        out.sampling = await s.client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hello' } });
        out.elicitation = await s.client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
        out.roots = await s.client.callTool({ name: 'get-roots-list', arguments: {} });
        return out;
    };
    const seenD = [], seenP = [];
    const d = await (async () => { const s = await connect(EVERYTHING, { capabilities: everyCaps, handlers: everyHandlers(seenD) }); try { return await run(s); } finally { await s.close(); } })();
    const p = await (async () => { const s = await connect(EVERYTHING, { proxy: PROXY, capabilities: everyCaps, handlers: everyHandlers(seenP) }); try { return await run(s); } finally { await s.close(); } })();
    assert.match(d.sampling.content[0].text, /sampled by the test client/);
    assert.deepEqual(p, d);
    for (const m of ['sampling/createMessage', 'elicitation/create', 'roots/list'])
        assert.ok(seenP.includes(m), `${m} reached the client through the proxy (seen: ${seenP})`);
});

test('server-filesystem read_text_file of 1 MB: the text and the structuredContent stored, outputSchema validates, exact bytes through the mount', async () => {
    const f = numberedFile('big.txt', 1 << 20);
    const run = async (s) => {
        const tools = (await s.client.listTools()).tools;
        assert.ok(tools.find((t) => t.name === 'read_text_file').outputSchema, 'read_text_file declares an outputSchema');
        // The SDK client validates structuredContent against it: no throw.
        const r = await s.client.callTool({ name: 'read_text_file', arguments: { path: f.path } });
        const last = s.wire.filter((m) => m.result?.content).at(-1);
        return { r, bytes: Buffer.byteLength(JSON.stringify(last)) };
    };
    const [d, p] = await both(filesystem(tmp), run);
    assert.deepEqual(d.r.structuredContent, { content: f.data });
    const ptr = p.r.content[0].text;
    const path = mustPointer(ptr);
    assert.equal(p.r.content.length, 1);
    // The structuredContent ({content: the text again}) is over the budget
    // as well: stored whole, as the server sent it, and named by an object.
    const sc = p.r.structuredContent?.offloaded;
    assert.equal(sc?.what, 'structuredContent', `the object that names the stored structure: ${JSON.stringify(p.r.structuredContent).slice(0, 300)}`);
    assert.deepEqual(JSON.parse(readFileSync(sc.path, 'utf8')), { content: f.data });
    assert.ok(p.bytes < 3 * BUDGET, `what reaches the client (${p.bytes} bytes) is within the budget plus the pointer`);
    assertServes(path, f.data);
    figure(`read_text_file of a ${f.data.length}-byte file: the client receives ${d.bytes} bytes directly, ${p.bytes} bytes through the proxy; the pointer text:`);
    figure(ptr.trimEnd().split('\n').map((l) => '    ' + l).join('\n'));
});

test('a 6 MB read_text_file: the SDK client\'s default 10 MiB message bound closes a direct session; through the proxy it arrives', async () => {
    const f = numberedFile('six.txt', 6 << 20); // sent twice, escaped: a 12 MiB message
    const d = await connect(filesystem(tmp));
    try {
        await assert.rejects(d.client.callTool({ name: 'read_text_file', arguments: { path: f.path } }), /Connection closed/,
            'the pinned SDK refuses the direct message (if a new pin stops doing so, drop this half)');
    } finally { await d.close().catch(() => {}); }
    const p = await connect(filesystem(tmp), { proxy: PROXY });
    try {
        await p.client.listTools();
        const r = await p.client.callTool({ name: 'read_text_file', arguments: { path: f.path } });
        assertServes(mustPointer(r.content[0].text), f.data);
    } finally { await p.close(); }
});

test('small read_text_file and other filesystem calls: identical through the proxy', async () => {
    writeFileSync(join(tmp, 'small.txt'), 'one\ntwo\nthree\n');
    const run = async (s) => {
        await s.client.listTools();
        return {
            read: await s.client.callTool({ name: 'read_text_file', arguments: { path: join(tmp, 'small.txt') } }),
            head: await s.client.callTool({ name: 'read_text_file', arguments: { path: join(tmp, 'small.txt'), head: 2 } }),
            dirs: await s.client.callTool({ name: 'list_allowed_directories', arguments: {} }),
            denied: await s.client.callTool({ name: 'read_text_file', arguments: { path: '/etc/hostname' } }),
        };
    };
    const [d, p] = await both(filesystem(tmp), run);
    assert.deepEqual(d.read.structuredContent, { content: 'one\ntwo\nthree\n' });
    assert.equal(d.denied.isError, true);
    assert.deepEqual(p, d);
});

test('the same call in two sessions (ids restart) gets two paths, each serving its own bytes', async () => {
    const paths = [];
    for (const want of [numberedLines(100_000).replaceAll('fox', 'cat'), numberedLines(100_000)]) {
        writeFileSync(join(tmp, 'same.txt'), want);
        const s = await connect(filesystem(tmp), { proxy: PROXY });
        try {
            const r = await s.client.callTool({ name: 'read_text_file', arguments: { path: join(tmp, 'same.txt') } });
            paths.push([mustPointer(r.content[0].text), want]);
        } finally { await s.close(); }
    }
    assert.notEqual(paths[0][0], paths[1][0], 'a second session does not reuse the first one\'s path');
    for (const [path, want] of paths) assertServes(path, want);
});

test('read_offloaded_result: line ranges, patterns with line numbers, a bounded answer that says how to go on', async () => {
    const f = numberedFile('ranges.txt', 1 << 20);
    const s = await connect(filesystem(tmp), { proxy: PROXY });
    try {
        const r = await s.client.callTool({ name: 'read_text_file', arguments: { path: f.path } });
        const path = mustPointer(r.content[0].text);
        const key = path.slice(MOUNT.length + 1);

        // Lines 101..105 of the file are "line 000100" .. "line 000104".
        const range = await s.client.callTool({ name: READ_TOOL, arguments: { path, offset: 101, limit: 5 } });
        assert.notEqual(range.isError, true, textOf(range));
        const t = textOf(range);
        for (let n = 101; n <= 105; n++) assert.ok(t.includes(f.lines[n - 1]), `line ${n} (${f.lines[n - 1]}) in the answer: ${t}`);
        for (const n of [100, 106]) assert.ok(!t.includes(f.lines[n - 1]), `line ${n} is not in the answer`);

        // By key instead of path: the same answer.
        const byKey = await s.client.callTool({ name: READ_TOOL, arguments: { path: key, offset: 101, limit: 5 } });
        assert.deepEqual(byKey, range);

        // A pattern: only the matching lines, each with its line number.
        const pat = await s.client.callTool({ name: READ_TOOL, arguments: { path, pattern: 'line 0042[0-9]7:' } });
        assert.notEqual(pat.isError, true, textOf(pat));
        const want = f.lines.map((l, i) => [i + 1, l]).filter(([, l]) => /line 0042[0-9]7:/.test(l));
        assert.equal(want.length, 10);
        const got = textOf(pat).split('\n').filter((l) => /line \d{6}:/.test(l));
        assert.equal(got.length, want.length, `matching lines only: ${textOf(pat)}`);
        for (const [n, l] of want) assert.ok(got.some((g) => g.includes(l) && new RegExp(`(^|\\D)${n}(\\D|$)`).test(g.replace(l, ''))),
            `line ${n} with its number: ${got}`);

        // The default (2000 lines of ~80 bytes) is more than the budget: the
        // answer stays within it and says how to continue.
        const whole = await s.client.callTool({ name: READ_TOOL, arguments: { path } });
        const wt = textOf(whole);
        assert.ok(Buffer.byteLength(wt) <= BUDGET + 4096, `answer of ${Buffer.byteLength(wt)} bytes is bounded`);
        assert.ok(wt.includes(f.lines[0]) && wt.includes(f.lines[1]), 'it starts at line 1');
        assert.match(wt, /offset/, 'it says how to continue (offset)');
    } finally { await s.close(); }
});

test('read_offloaded_result: unknown paths and evicted results are isError results that say so', async () => {
    const f = numberedFile('evict.txt', 100_000);
    const small = { store: SMALL, mount: MOUNT };
    const s = await connect(filesystem(tmp), { proxy: small });
    try {
        const r = await s.client.callTool({ name: 'read_text_file', arguments: { path: f.path } });
        const path = mustPointer(r.content[0].text);
        const before = await s.client.callTool({ name: READ_TOOL, arguments: { path, offset: 1, limit: 2 } });
        assert.notEqual(before.isError, true, textOf(before));
        assert.ok(textOf(before).includes(f.lines[1]));

        // Three 1 MiB puts into a 2 MiB bound evict the result (random
        // bytes: the store compresses, and a repeated byte would take no room).
        for (let i = 0; i < 3; i++)
            execFileSync(AGENTLINK, ['--store', SMALL, 'put', `filler${i}`], { input: randomBytes(1 << 20) });
        const ev = await s.client.callTool({ name: READ_TOOL, arguments: { path } });
        assert.equal(ev.isError, true, `evicted: ${textOf(ev)}`);
        assert.match(textOf(ev), /evicted/i);
        assert.match(textOf(ev), /again/i, 'says to run the tool again');

        for (const bad of [`${MOUNT}/no-such-result-anywhere`, 'no-such-key', '/etc/passwd']) {
            const u = await s.client.callTool({ name: READ_TOOL, arguments: { path: bad } });
            assert.equal(u.isError, true, `${bad}: ${textOf(u)}`);
            assert.ok(textOf(u).length > 0, 'says why');
        }
    } finally { await s.close(); }
});
