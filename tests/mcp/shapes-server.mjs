#!/usr/bin/env node
// shapes-server.mjs -- a stdio MCP server on the official SDK's low-level
// Server, whose tools return every result shape the proxy must fit: large
// structuredContent of short strings under output schemas using each
// constraint keyword, media inside structuredContent, an embedded resource,
// one long line, progress notifications. The schemas are plain JSON Schema
// (the SDK client validates structuredContent against them with Ajv), so a
// keyword such as contentEncoding is exactly as declared. Everything is
// deterministic: tests/mcp/shapes.test.mjs rebuilds the same values from
// shapes-data.mjs to compare.
//
//   node shapes-server.mjs [--linger]
// --linger: the process does not exit when its stdin closes (a timer keeps
// it alive), as many real servers do; a client then has to stop it.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { TOOLS, callShape } from './shapes-data.mjs';

if (process.argv.includes('--linger')) setInterval(() => {}, 1 << 30);

const server = new Server({ name: 'offloadfs-shapes', version: '1.0.0' }, { capabilities: { tools: {} } });

server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));

server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const { name, arguments: args = {} } = req.params;
    if (name === 'shape_progress') {
        // steps progress notifications, interval ms apart, then the result.
        const token = req.params._meta?.progressToken;
        const steps = args.steps ?? 8, interval = args.interval ?? 150;
        for (let i = 1; i <= steps; i++) {
            await new Promise((r) => setTimeout(r, interval));
            if (token !== undefined)
                await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } });
        }
        // The result a step later: the SDK runs progress handlers a tick after
        // it settles a response, so a notification right before it is lost.
        await new Promise((r) => setTimeout(r, interval));
        return { content: [{ type: 'text', text: `done after ${steps} steps` }] };
    }
    if (name === 'shape_group') {
        // This process's pid and process group, and a `sleep` it started
        // in that group (a server's own helper process).
        const stat = readFileSync('/proc/self/stat', 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const sleeper = spawn('sleep', ['300'], { stdio: 'ignore' });
        sleeper.unref();
        return { content: [{ type: 'text', text: JSON.stringify({ pid: process.pid, pgrp: Number(f[2]), sleeper: sleeper.pid }) }] };
    }
    const r = callShape(name, args);
    if (!r) return { content: [{ type: 'text', text: `unknown tool ${name}` }], isError: true };
    return r;
});

await server.connect(new StdioServerTransport());
