// reporter.mjs -- a node:test reporter printing what tests/run.sh counts:
// one "ok - NAME" or "not ok - NAME" line per test, the failure's message
// and stack indented under it, and the tests' own diagnostics as "# ...".
// A skipped or todo test is reported as "not ok": these suites never skip.
function indent(s) {
    return String(s).split('\n').map((l) => '    ' + l).join('\n') + '\n';
}

function failure(err) {
    if (!err) return '';
    const cause = err.cause ?? err;
    let s = cause.stack || cause.message || String(cause);
    if (cause.actual !== undefined && cause.expected !== undefined && cause.code === 'ERR_ASSERTION') {
        const clip = (v) => { const t = typeof v === 'string' ? v : JSON.stringify(v); return t && t.length > 600 ? t.slice(0, 600) + '...' : t; };
        s = `${cause.message.split('\n')[0]}\nactual:   ${clip(cause.actual)}\nexpected: ${clip(cause.expected)}\n${cause.stack ?? ''}`;
    }
    return indent(s.length > 4000 ? s.slice(0, 4000) + '...' : s);
}

export default async function* reporter(source) {
    for await (const ev of source) {
        const d = ev.data ?? {};
        switch (ev.type) {
        case 'test:pass':
            if (d.details?.type === 'suite') break;
            if (d.skip !== undefined || d.todo !== undefined) yield `not ok - ${d.name} (skipped: these tests never skip)\n`;
            else yield `ok - ${d.name} (${Math.round(d.details?.duration_ms ?? 0)} ms)\n`;
            break;
        case 'test:fail':
            if (d.details?.type === 'suite') break;
            yield `not ok - ${d.name}\n` + failure(d.details?.error);
            break;
        case 'test:diagnostic':
            yield `# ${d.message}\n`;
            break;
        case 'test:stderr':
        case 'test:stdout':
            yield d.message;
            break;
        default:
            break;
        }
    }
}
