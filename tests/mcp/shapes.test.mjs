// shapes.test.mjs -- every result shape through `agentlink mcp-proxy`, with
// the official SDK client validating each result against its tool's
// outputSchema (shapes-server.mjs): structuredContent of ~1 MB of
// short strings under schemas using pattern, format, enum, maxLength,
// contentEncoding, required and nested objects reaches the client within the
// budget, valid, with nothing stored that the answer does not reference;
// media inside structuredContent stays media; an embedded resource and a
// task result are fitted like text; a read-tool search never stops the relay;
// byte ranges read a 200 KB line exactly; the start warns about a --mount
// that is not this store's; a normal shutdown is logged as one; the server
// runs in its own process group, stopped as a group.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { connect, until, EVERYTHING, pointerPath } from './lib.mjs';
import { callShape, mixedLine, reportText } from './shapes-data.mjs';

const STORE = process.env.MCP_STORE, MOUNT = process.env.MCP_MOUNT, SMALL = process.env.MCP_SMALL_STORE;
const AGENTLINK = join(process.env.OFFLOADFS_BUILD ?? '', 'agentlink');
if (!STORE || !MOUNT || !SMALL) throw new Error('run through tests/mcp/test_mcp_clients.sh (MCP_STORE, MCP_MOUNT, MCP_SMALL_STORE)');
const PROXY = { store: STORE, mount: MOUNT };
const BUDGET = 32768; // the default policy: offload over 32 KiB
const READ_TOOL = 'read_offloaded_result';
const SLOW = process.env.OFFLOADFS_WRAP ? 5 : 1; // valgrind: everything slower
const SHAPES = [join(dirname(fileURLToPath(import.meta.url)), 'shapes-server.mjs')];

const tmp = mkdtempSync(join(process.env.MCP_TMP ?? '/tmp', 'mcp-shapes.'));
after(() => rmSync(tmp, { recursive: true, force: true }));

async function session(server, o, fn) {
    const s = await connect(server, o);
    try { return await fn(s); } finally { await s.close(); }
}

// As session(), but closed as the SDK closes (stdin, 2 s, SIGTERM): for a
// server that does not exit when its stdin closes (server-everything with a
// task kept for its time to live).
async function sdkSession(server, o, fn) {
    const s = await connect(server, o);
    const proc = s.transport._process;
    const exited = new Promise((r) => proc.once('close', r));
    try { return await fn(s); } finally { await s.client.close(); await exited; }
}

// The keys the store holds for TOOL (the proxy records the tool's name).
function keysOf(tool) {
    const all = JSON.parse(execFileSync(AGENTLINK, ['--store', STORE, 'ls', '--json']).toString());
    return new Set(all.filter((e) => e.tool === tool).map((e) => e.key));
}

// Every path under the mount the text T names.
function pathsIn(t) {
    const esc = MOUNT.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return new Set([...t.matchAll(new RegExp(esc + '/[^\\s\'"`\\\\]+', 'g'))].map((m) => m[0].replace(/[.:,;)\]]+$/, '')));
}

// The last tools/call result message the client received, and its size.
function lastResult(s) {
    const m = s.wire.filter((x) => x.result && (x.result.content || x.result.structuredContent)).at(-1);
    return { msg: m, bytes: Buffer.byteLength(JSON.stringify(m)) };
}

function textOf(r) { return r.content.filter((c) => c.type === 'text').map((c) => c.text).join(''); }

// Calls TOOL directly and through the proxy (both validated by the SDK
// against the tool's outputSchema: a mismatch throws); returns what the
// proxied client got, its size, and the store entries the call wrote.
async function throughProxy(tool, args = {}) {
    const direct = await session(SHAPES, {}, async (s) => {
        await s.client.listTools();
        return s.client.callTool({ name: tool, arguments: args });
    });
    assert.deepEqual(direct.structuredContent, callShape(tool, args).structuredContent, 'the server returns what shapes-data says');
    const before = keysOf(tool);
    const got = await session(SHAPES, { proxy: PROXY }, async (s) => {
        await s.client.listTools(); // the SDK caches the output schemas it will validate against
        const r = await s.client.callTool({ name: tool, arguments: args });
        return { r, ...lastResult(s) };
    });
    const written = [...keysOf(tool)].filter((k) => !before.has(k)).map((k) => `${MOUNT}/${k}`);
    return { direct, ...got, written };
}

// What a proxied structured result must be: within the budget, every entry
// written named by the answer, every path named serving its bytes: the text
// and the structuredContent JSON recoverable exactly.
function assertFitted(tool, p) {
    const want = callShape(tool);
    assert.ok(p.bytes < BUDGET, `${tool}: the client received ${p.bytes} bytes, not within the ${BUDGET}-byte budget`);
    const named = pathsIn(JSON.stringify(p.msg));
    for (const w of p.written) assert.ok(named.has(w), `${tool}: entry ${w} was written but the answer does not name it (${[...named]})`);
    assert.ok(p.written.length >= 1 && p.written.length <= 2, `${tool}: ${p.written.length} entries written (${p.written})`);
    const served = [...named].map((path) => readFileSync(path, 'utf8'));
    const text = want.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
    if (Buffer.byteLength(text) > BUDGET) assert.ok(served.includes(text), `${tool}: the text is served exactly at one of ${[...named]}`);
    assert.ok(served.some((b) => { try { return JSON.stringify(JSON.parse(b)) === JSON.stringify(want.structuredContent); } catch { return false; } }),
        `${tool}: the structuredContent JSON is served at one of ${[...named]}`);
}

for (const tool of ['shape_pattern', 'shape_format', 'shape_enum', 'shape_maxLength', 'shape_contentEncoding', 'shape_nested', 'shape_sc_only']) {
    test(`${tool}: ~1 MB structuredContent of short strings, SDK-validated, within the budget, nothing stored unreferenced`, async () => {
        assertFitted(tool, await throughProxy(tool));
    });
}

test('shape_git_log: a structured commit log is fitted as a whole; no field gets a whole-result pointer', async () => {
    const p = await throughProxy('shape_git_log');
    assertFitted('shape_git_log', p);
    const sc = JSON.stringify(p.r.structuredContent);
    assert.ok(sc.length < 1024, `structuredContent of ${sc.length} bytes: a short pointer`);
    assert.match(sc, /structuredContent/, 'the pointer says it stands for the structuredContent');
    assert.doesNotMatch(sc, /The result of tool/, 'not the whole-result pointer text');
});

test('shape_media: image and audio data inside structuredContent reach the client unchanged, nothing stored', async () => {
    const p = await throughProxy('shape_media');
    assert.deepEqual(p.r.structuredContent, p.direct.structuredContent);
    assert.deepEqual(p.r.content.filter((c) => c.type === 'image'), p.direct.content.filter((c) => c.type === 'image'));
    assert.deepEqual(p.written, []);
});

test('an embedded resource of 200 KB text is fitted like text: a pointer serving the joined text', async () => {
    const p = await throughProxy('shape_resource');
    assert.ok(p.bytes < BUDGET, `the client received ${p.bytes} bytes`);
    assert.equal(p.written.length, 1);
    const ptr = textOf(p.r);
    assert.equal(pointerPath(ptr, MOUNT), p.written[0]);
    assert.match(ptr, /file:\/\/\/shapes\/report\.txt/, 'the pointer names the resource it holds');
    assert.equal(readFileSync(p.written[0], 'utf8'), `The report follows as an embedded resource.\n${reportText(200_000)}`);
    assert.ok(!p.r.content.some((c) => c.type === 'resource' && c.resource.text?.length > 1000), 'no large resource text reaches the client');
});

test('a task-augmented tools/call (simulate-research-query) fetched with tasks/result: the 120 KB report becomes a pointer', async () => {
    const topic = 'offloading '.repeat(5500); // the report holds it twice: ~121 KB
    const run = async (o) => sdkSession(EVERYTHING, o, async (s) => {
        await s.client.listTools();
        let result;
        for await (const m of s.client.experimental.tasks.callToolStream({ name: 'simulate-research-query', arguments: { topic } }, CallToolResultSchema, { task: { ttl: 60000 } })) {
            if (m.type === 'error') throw m.error;
            if (m.type === 'result') result = m.result;
        }
        const last = s.wire.filter((x) => x.result?.content).at(-1);
        return { result, bytes: Buffer.byteLength(JSON.stringify(last)) };
    });
    const [d, p] = await Promise.all([run({}), run({ proxy: PROXY })]);
    const report = textOf(d.result);
    assert.ok(Buffer.byteLength(report) > 120_000, `direct report of ${report.length} bytes`);
    assert.ok(p.bytes < BUDGET, `the client received ${p.bytes} bytes through the proxy`);
    assert.equal(readFileSync(pointerPath(textOf(p.result), MOUNT), 'utf8'), report);
});

// A result that is one line of 200 KB of 'a': "a+b" over it takes glibc's
// regexec seconds (quadratic), so the search runs to its deadline.
async function slowSearchSession(fn) {
    return session(SHAPES, { proxy: PROXY }, async (s) => {
        await s.client.listTools();
        const r = await s.client.callTool({ name: 'shape_line', arguments: { kind: 'a' } });
        const path = pointerPath(textOf(r), MOUNT);
        assert.ok(path, `a pointer: ${textOf(r).slice(0, 200)}`);
        return fn(s, path);
    });
}

test('a ping sent during a slow read-tool search is answered while it runs; the search answer comes after', async () => {
    await slowSearchSession(async (s, path) => {
        const t0 = Date.now();
        let searchDone = 0;
        const search = s.client.callTool({ name: READ_TOOL, arguments: { path, pattern: 'a+b' } }, undefined, { timeout: 60000 })
            .then((r) => { searchDone = Date.now(); return r; });
        await new Promise((r) => setTimeout(r, 300));
        await s.client.ping();
        assert.equal(searchDone, 0, 'the search was still running when the ping was answered');
        const r = await search;
        assert.match(textOf(r), /stopped/, `the search ran to its deadline: ${textOf(r).slice(0, 300)}`);
        assert.ok(searchDone - t0 > 2000, 'the search took seconds');
    });
});

test('progress notifications of another call arrive as sent while a search runs, and fire every callback', async () => {
    await slowSearchSession(async (s, path) => {
        const seen = [];
        const progress = s.client.callTool({ name: 'shape_progress', arguments: { steps: 8, interval: 150 } }, undefined,
            { onprogress: (x) => seen.push([Date.now(), x.progress]) });
        await new Promise((r) => setTimeout(r, 20));
        let searchDone = 0, progressDone = 0;
        const search = s.client.callTool({ name: READ_TOOL, arguments: { path, pattern: 'a+b' } }, undefined, { timeout: 60000 })
            .then(() => { searchDone = Date.now(); });
        await progress.then(() => { progressDone = Date.now(); });
        await search;
        assert.deepEqual(seen.map((x) => x[1]), [1, 2, 3, 4, 5, 6, 7, 8], 'all 8 progress callbacks fired');
        assert.ok(progressDone < searchDone, 'the other call\'s result came before the search answer');
        assert.ok(seen[7][0] - seen[0][0] > 600, `progress spread over ${seen[7][0] - seen[0][0]} ms, not held and sent in a burst`);
    });
});

// The bytes an answer of the read tool shows: between its header line and
// its last line (in brackets).
function body(t) {
    return t.slice(t.indexOf('\n') + 1, t.lastIndexOf('\n['));
}

test('read_offloaded_result byte ranges: exact bytes of a 200 KB line, U+FFFD for a split character, the line in pieces', async () => {
    const line = mixedLine(200_000), bytes = Buffer.from(line);
    await session(SHAPES, { proxy: PROXY }, async (s) => {
        const tools = (await s.client.listTools()).tools;
        const props = tools.find((t) => t.name === READ_TOOL).inputSchema.properties;
        for (const k of ['byte_offset', 'byte_limit']) assert.equal(props[k]?.type, 'integer', `${k} in the inputSchema`);
        const r = await s.client.callTool({ name: 'shape_line', arguments: { kind: 'mixed' } });
        const path = pointerPath(textOf(r), MOUNT);

        // A range starting and ending on character boundaries: exactly those bytes.
        let a = 100_000;
        while ((bytes[a] & 0xc0) === 0x80) a++;
        let b = a + 3000;
        while ((bytes[b] & 0xc0) === 0x80) b++;
        const exact = await s.client.callTool({ name: READ_TOOL, arguments: { path, byte_offset: a, byte_limit: b - a } });
        assert.notEqual(exact.isError, true, textOf(exact));
        assert.equal(body(textOf(exact)), bytes.subarray(a, b).toString());
        assert.doesNotMatch(textOf(exact), /U\+FFFD/);

        // A range starting inside a two-byte character: its half shown as U+FFFD, and said so.
        let m = 50_000;
        while ((bytes[m] & 0xc0) !== 0x80) m++;
        const split = await s.client.callTool({ name: READ_TOOL, arguments: { path, byte_offset: m, byte_limit: 200 } });
        assert.equal(body(textOf(split)), bytes.subarray(m, m + 200).toString());
        assert.ok(body(textOf(split)).startsWith('\ufffd'));
        assert.match(textOf(split), /U\+FFFD/, 'the answer says invalid UTF-8 is shown as U+FFFD');

        // The line read by lines: answered in pieces, each naming the
        // byte_offset call that continues it; the pieces make the line.
        let t = textOf(await s.client.callTool({ name: READ_TOOL, arguments: { path } }));
        let joined = '';
        for (let i = 0; i < 40; i++) {
            assert.ok(Buffer.byteLength(t) <= BUDGET + 1024, `a piece of ${Buffer.byteLength(t)} bytes is within the budget`);
            const next = /"byte_offset": ?(\d+)[^}]*\}/.exec(t);
            joined += i === 0 ? t.split('\n')[1].replace(/^1\t/, '') : body(t);
            if (!next) break;
            const args = JSON.parse(/\{"path"[^}]*\}/.exec(t)[0]);
            assert.equal(args.byte_offset, Buffer.byteLength(joined), 'the next call starts where this piece ended');
            t = textOf(await s.client.callTool({ name: READ_TOOL, arguments: args }));
        }
        assert.equal(joined, line, 'the pieces make the whole line');
    });
});

test('--mount that is not a mount of this store and namespace: one warning at start naming it; a right one: none', async () => {
    const warn = async (proxy) => session(SHAPES, { proxy }, async (s) => {
        await s.client.listTools();
        await new Promise((r) => setTimeout(r, 100));
        return s.stderr();
    });
    const none = join(tmp, 'no-such-mount'), plain = tmp;
    const cases = [[{ store: STORE, mount: none }, none], [{ store: STORE, mount: plain }, plain],
        [{ store: SMALL, mount: MOUNT }, MOUNT], [{ store: STORE, mount: MOUNT, namespace: 'other' }, MOUNT]];
    for (const [proxy, named] of cases) {
        const log = await warn(proxy);
        const lines = log.split('\n').filter((l) => l.includes(named) && /mount/.test(l));
        assert.equal(lines.length, 1, `one warning naming ${named} for ${JSON.stringify(proxy)}: ${log}`);
    }
    assert.doesNotMatch(await warn(PROXY), /mount/, 'no warning for the store\'s own mount');
});

test('a normal shutdown (a server that does not exit when its stdin closes, stopped by the SDK) is logged as one', async () => {
    const s = await connect([...SHAPES, '--linger'], { proxy: PROXY });
    const proc = s.transport._process;
    const exited = new Promise((r) => proc.once('close', (code, signal) => r({ code, signal })));
    try {
        await s.client.listTools();
    } finally {
        await s.client.close(); // as the SDK does: stdin closed, 2 s, then SIGTERM
        await exited;
    }
    assert.doesNotMatch(s.stderr(), /killed by signal/, `stderr: ${s.stderr()}`);
    assert.match(s.stderr(), /stopped|exited/, `the proxy says how the server ended: ${s.stderr()}`);
});

test('the server runs in its own process group; stopping it stops the group: a helper process it started goes too', async () => {
    const s = await connect([...SHAPES, '--linger'], { proxy: PROXY });
    const proc = s.transport._process;
    const exited = new Promise((r) => proc.once('close', (code, signal) => r({ code, signal })));
    let g = null, leader = null;
    // /proc/PID/stat: "pid (comm) state ppid pgrp ..."
    const stat = (pid) => readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    try {
        g = JSON.parse(textOf(await s.client.callTool({ name: 'shape_group', arguments: {} })));
        leader = stat(g.pgrp);
    } finally {
        await s.client.close();
        await exited;
    }
    // The group's leader is the proxy's supervisor (its child), the server in it.
    assert.equal(Number(leader[1]), proc.pid, 'the server runs in a group led by a child of the proxy');
    assert.notEqual(Number(stat(process.pid)[2]), g.pgrp, 'a group of its own, not the client\'s');
    const alive = () => { try { process.kill(g.sleeper, 0); return true; } catch { return false; } };
    try {
        await until(() => !alive(), 30000);
    } finally {
        if (alive()) process.kill(g.sleeper, 'SIGKILL');
    }
});
