// shapes-data.mjs -- the tools of shapes-server.mjs and the exact results
// they return, shared with the tests (which rebuild a result to compare).
// Every value is a pure function of the tool's name and arguments.

// Short strings, about `bytes` bytes as a JSON array: the shape of a
// knowledge graph or a commit list, many small values and none large.
export function shortStrings(bytes, tag = 'item') {
    const out = [];
    let size = 2;
    for (let i = 1; size < bytes; i++) {
        const s = `${tag} ${String(i).padStart(6, '0')} ${'abcdefghij'.slice(0, i % 10)} ${(i * 7919) % 10007}`;
        out.push(s);
        size += s.length + 3;
    }
    return out;
}

// N bytes, the same every run, as base64.
export function base64Of(n, seed = 1) {
    const b = Buffer.alloc(n);
    let x = seed;
    for (let i = 0; i < n; i++) { x = (x * 1103515245 + 12345) >>> 0; b[i] = x >>> 24; }
    return b.toString('base64');
}

// One line of `bytes` bytes (no newline) mixing ASCII and two-byte
// characters, numbered so that any range is recognisable.
export function mixedLine(bytes) {
    let s = '', n = 0;
    while (Buffer.byteLength(s) < bytes) s += `αβγ ${String(++n).padStart(6, '0')} δεζ; `;
    const b = Buffer.from(s);
    let end = bytes;
    while (end > 0 && (b[end] & 0xc0) === 0x80) end--; // never split a character
    return b.subarray(0, end).toString();
}

const ITEMS = { type: 'array', items: { type: 'string', maxLength: 64 } };
const B64 = '^[A-Za-z0-9+/]*={0,2}$';
const LONG_ENUM = 'mode-' + 'x'.repeat(2000);

// name -> [outputSchema, structuredContent builder]. Each carries ~1 MB of
// short strings beside the constrained field(s).
const SHAPES = {
    shape_pattern: [
        { type: 'object', properties: { blob: { type: 'string', pattern: B64 }, items: ITEMS }, required: ['blob', 'items'] },
        () => ({ blob: base64Of(60_000, 2), items: shortStrings(1 << 20) }),
    ],
    shape_format: [
        {
            type: 'object',
            properties: {
                id: { type: 'string', format: 'uuid' },
                when: { type: 'string', format: 'date-time' },
                contact: { type: 'string', format: 'email' },
                link: { type: 'string', format: 'uri' },
                items: ITEMS,
            },
            required: ['id', 'when', 'contact', 'link', 'items'],
        },
        () => ({
            id: '3f2b8c1e-9d4a-4e5f-8a7b-1c2d3e4f5a6b',
            when: '2026-12-01T12:00:00Z',
            contact: 'someone@example.com',
            link: 'https://example.com/data?q=' + 'a'.repeat(80_000),
            items: shortStrings(1 << 20),
        }),
    ],
    shape_enum: [
        { type: 'object', properties: { mode: { type: 'string', enum: [LONG_ENUM, 'short'] }, items: ITEMS }, required: ['mode', 'items'] },
        () => ({ mode: LONG_ENUM, items: shortStrings(1 << 20) }),
    ],
    shape_maxLength: [
        { type: 'object', properties: { note: { type: 'string', minLength: 5000, maxLength: 5000 }, items: ITEMS }, required: ['note', 'items'] },
        () => ({ note: 'n'.repeat(5000), items: shortStrings(1 << 20) }),
    ],
    shape_contentEncoding: [
        {
            type: 'object',
            properties: { payload: { type: 'string', contentEncoding: 'base64', contentMediaType: 'application/octet-stream' }, items: ITEMS },
            required: ['payload', 'items'],
        },
        () => ({ payload: base64Of(60_000, 3), items: shortStrings(1 << 20) }),
    ],
    shape_nested: [
        {
            type: 'object',
            properties: {
                meta: {
                    type: 'object',
                    properties: {
                        level1: {
                            type: 'object',
                            properties: { level2: { type: 'object', properties: { text: { type: 'string', minLength: 3000 }, count: { type: 'integer' } }, required: ['text', 'count'], additionalProperties: false } },
                            required: ['level2'],
                            additionalProperties: false,
                        },
                    },
                    required: ['level1'],
                    additionalProperties: false,
                },
                items: ITEMS,
            },
            required: ['meta', 'items'],
            additionalProperties: false,
        },
        () => ({ meta: { level1: { level2: { text: 't'.repeat(3000), count: 3 } } }, items: shortStrings(1 << 20) }),
    ],
    // Small text, large structuredContent: the structure alone is over.
    shape_sc_only: [
        { type: 'object', properties: { items: ITEMS }, required: ['items'] },
        () => ({ items: shortStrings(1 << 20) }),
    ],
    // A commit log: 100 commits with 1.5 KB bodies (~160 KB).
    shape_git_log: [
        {
            type: 'object',
            properties: { commits: { type: 'array', items: { type: 'object', properties: { hash: { type: 'string', pattern: '^[0-9a-f]{40}$' }, subject: { type: 'string' }, body: { type: 'string' } }, required: ['hash', 'subject', 'body'] } } },
            required: ['commits'],
        },
        () => ({
            commits: Array.from({ length: 100 }, (_, i) => ({
                hash: (i * 2654435761 >>> 0).toString(16).padStart(8, '0').repeat(5),
                subject: `commit ${i}: change things`,
                body: `Body of commit ${i}. `.repeat(80).slice(0, 1500),
            })),
        }),
    ],
    // Media inside structuredContent: an image and an audio clip (266 KB of base64).
    shape_media: [
        {
            type: 'object',
            properties: {
                content: {
                    type: 'array',
                    items: {
                        type: 'object',
                        properties: { type: { enum: ['image', 'audio'] }, data: { type: 'string', contentEncoding: 'base64', pattern: B64 }, mimeType: { type: 'string' } },
                        required: ['type', 'data', 'mimeType'],
                    },
                },
            },
            required: ['content'],
        },
        () => ({
            content: [
                { type: 'image', data: base64Of(200_000, 4), mimeType: 'image/png' },
                { type: 'audio', data: base64Of(50_000, 5), mimeType: 'audio/wav' },
            ],
        }),
    ],
};

// Text only tools (no outputSchema).
const TEXT_TOOLS = {
    // An embedded resource of 200 KB text beside a short text part.
    shape_resource: () => ({
        content: [
            { type: 'text', text: 'The report follows as an embedded resource.' },
            { type: 'resource', resource: { uri: 'file:///shapes/report.txt', mimeType: 'text/plain', text: reportText(200_000) } },
        ],
    }),
    // Numbered text lines, args.bytes of them (default 1 MiB): a plain large text result.
    shape_text: (args) => ({ content: [{ type: 'text', text: reportText(args.bytes ?? 1 << 20) }] }),
    // One line: args.kind 'a' (200 KB of 'a', slow for the pattern a+b) or 'mixed'.
    shape_line: (args) => ({ content: [{ type: 'text', text: args.kind === 'a' ? 'a'.repeat(args.bytes ?? 200_000) : mixedLine(args.bytes ?? 200_000) }] }),
};

export function reportText(bytes) {
    const out = [];
    let size = 0;
    for (let n = 1; size < bytes; n++) {
        const l = `report line ${String(n).padStart(6, '0')}: figures ${(n * 31337) % 100003}\n`;
        out.push(l);
        size += l.length;
    }
    return out.join('');
}

export const TOOLS = [
    ...Object.entries(SHAPES).map(([name, [outputSchema]]) => ({
        name, description: `returns a structured result (${name.slice(6)})`, inputSchema: { type: 'object', properties: {} }, outputSchema,
    })),
    ...Object.keys(TEXT_TOOLS).map((name) => ({
        name, description: `returns a text result (${name.slice(6)})`,
        inputSchema: { type: 'object', properties: { kind: { type: 'string' }, bytes: { type: 'integer' } } },
    })),
    { name: 'shape_group', description: 'says its pid and process group, and starts a sleep in that group', inputSchema: { type: 'object', properties: {} } },
    {
        name: 'shape_progress', description: 'sends progress notifications, then answers',
        inputSchema: { type: 'object', properties: { steps: { type: 'integer' }, interval: { type: 'integer' } } },
    },
];

// The result of tool NAME with ARGS, or null.
export function callShape(name, args = {}) {
    if (SHAPES[name]) {
        const sc = SHAPES[name][1]();
        const text = name === 'shape_sc_only' || name === 'shape_media'
            ? `${name}: structured result follows` : JSON.stringify(sc, null, 2);
        const content = [{ type: 'text', text }];
        if (name === 'shape_media') content.push({ type: 'image', data: sc.content[0].data, mimeType: 'image/png' });
        return { content, structuredContent: sc };
    }
    if (TEXT_TOOLS[name]) return TEXT_TOOLS[name](args);
    return null;
}
