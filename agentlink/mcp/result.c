/* result.c -- fitting one tools/call (or tasks/result) answer into the
 * budget (job.h, mcp_result_rewrite()).
 *
 * The answer is judged as a whole: its text (the text parts and the texts
 * of embedded resources, joined with "\n") plus its structuredContent,
 * less the data of media, which is never replaced. The text goes first, as
 * today's agents read it: when it alone is over, it is stored as one entry
 * and one pointer text part takes the place of the text parts. Then, when
 * what is left is still over, the structuredContent is stored whole and
 * the object of mcp_sc_pointer() takes its place (structured.c). Every
 * entry written is named by the answer; nothing else is written. */
#include "agentlink/mcp/job.h"
#include "common/array.h"
#include "common/buf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- storing --------------------------------------------------------------- */
/* A fresh key of this session for a result of TOOL: *RAW its raw name,
 * *KEY and *PATH (all yours). Returns 0 or ENOMEM (NOMEM set). */
static int new_key(job *j, const char *tool, char **raw, char **key, char **path)
{
    mcp_rewriter *rw = j->rw;
    common_buf b = {0};
    *raw = *key = *path = NULL;
    common_buf_addf(&b, "mcp-%s-%s-%llu", tool, rw->nonce, ++rw->seq);
    if (common_buf_detach(&b, raw, NULL) || al_key_derive(*raw, strlen(*raw), key) ||
        al_store_path_of(rw->h, *key, path)) {
        free(*raw);
        al_free(*key);
        *raw = *key = NULL;
        j->nomem = 1;
        return ENOMEM;
    }
    return 0;
}

/* A write that went to the store but not to its remote (AL_EUPLOAD) still
 * serves the pointer here: a note says it is pending, and RC becomes 0. */
static int pending_ok(job *j, int rc, const char *tool)
{
    if (rc != AL_EUPLOAD)
        return rc;
    mcp_job_note(j, "store '%s': the result of '%s' is stored here but not yet on its remote "
                 "(%s); it is pending: agentlink sync sends it", al_store_dir(j->rw->h), tool,
                 al_store_remote_message(j->rw->h));
    return 0;
}

/* Stores LEN bytes at DATA, the text of TOOL's answer, and sets *PTR to the
 * pointer text (yours): the library's, EXTRA (may be NULL), and how to call
 * the read tool. Returns 0, or an error (a note says why). */
static int store_text(job *j, const char *tool, const char *data, size_t len,
                      const char *extra, char **ptr, size_t *plen)
{
    mcp_rewriter *rw = j->rw;
    char *raw = NULL, *key = NULL, *path = NULL, *out = NULL;
    common_buf b = {0};
    size_t outlen = 0;
    int rc;

    *ptr = NULL;
    if (!rw->h) {
        mcp_job_note(j, "no store: the result of '%s' (%zu bytes) passed unchanged", tool, len);
        return AL_ENOSTORE;
    }
    if ((rc = new_key(j, tool, &raw, &key, &path)))
        return rc;
    rc = al_offload(rw->h, rw->always, al_tool_check(tool) ? NULL : tool, raw, strlen(raw),
                    data, len, &out, &outlen, NULL);
    if ((rc = pending_ok(j, rc, tool))) {
        mcp_job_note(j, "store '%s': %s; the result of '%s' (%zu bytes) passed unchanged",
                     al_store_dir(rw->h), al_strerror(rc), tool, len);
        goto cleanup;
    }
    common_buf_add(&b, out, outlen);
    if (extra)
        common_buf_adds(&b, extra);
    if (rw->read_tool && !rw->server_read_tool) {
        common_buf_adds(&b, "\nOr call the tool " MCP_READ_TOOL " with {\"path\": ");
        mcp_json_string_encode(&b, path, strlen(path));
        common_buf_adds(&b, "} (add \"offset\" and \"limit\" to page through it, \"pattern\" to "
                        "keep only matching lines, \"byte_offset\" and \"byte_limit\" for a byte "
                        "range).\n");
    }
    if (common_buf_detach(&b, ptr, plen)) {
        rc = ENOMEM;
        j->nomem = 1;
    }
cleanup:
    common_buf_release(&b);
    al_free(out);
    al_free(path);
    al_free(key);
    free(raw);
    return rc;
}

/* Stores the structuredContent at [vs, ve) of TOOL's answer, its bytes as
 * the server sent them, and replaces it by the object that stands for it.
 * A failed store leaves it (a note says why). */
static void store_structured(job *j, const char *tool, size_t vs, size_t ve,
                             const mcp_sc_scan *sc)
{
    mcp_rewriter *rw = j->rw;
    char *raw = NULL, *key = NULL, *path = NULL, *text = NULL;
    common_buf b = {0};
    size_t len = 0;
    int rc;
    if (!rw->h) {
        mcp_job_note(j, "no store: the structuredContent of '%s' (%zu bytes) passed unchanged",
                     tool, ve - vs);
        return;
    }
    if (new_key(j, tool, &raw, &key, &path))
        return;
    rc = al_store_put(rw->h, key, j->s + vs, ve - vs, al_tool_check(tool) ? NULL : tool, NULL,
                      NULL);
    if ((rc = pending_ok(j, rc, tool))) {
        mcp_job_note(j, "store '%s': %s; the structuredContent of '%s' (%zu bytes) passed "
                     "unchanged", al_store_dir(rw->h), al_strerror(rc), tool, ve - vs);
    } else {
        mcp_sc_pointer(&b, path, ve - vs, rw->read_tool && !rw->server_read_tool, j->s, sc);
        if (common_buf_detach(&b, &text, &len) == 0)
            mcp_job_edit(j, vs, ve, text, len);
        else
            j->nomem = 1;
    }
    common_buf_release(&b);
    al_free(path);
    al_free(key);
    free(raw);
}

/* ---- measures ---------------------------------------------------------------- */
static uint64_t chars_of(const char *s, size_t n)
{
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xc0) != 0x80;
    return c;
}

/* What a rule of KIND counts of a text of BYTES bytes and CHARS characters. */
static uint64_t measure(int kind, uint64_t bytes, uint64_t chars)
{
    switch (kind) {
    case AL_OFFLOAD_OVER_CHARS: return chars;
    case AL_OFFLOAD_OVER_TOKENS: return (chars + 3) / 4;
    default: return bytes;
    }
}

/* Whether a measure M is over a rule of KIND and LIMIT. */
static int over(int kind, uint64_t limit, uint64_t m)
{
    switch (kind) {
    case AL_OFFLOAD_ALWAYS: return m > 0;
    case AL_OFFLOAD_OVER_BYTES:
    case AL_OFFLOAD_OVER_CHARS:
    case AL_OFFLOAD_OVER_TOKENS: return m > limit;
    default: return 0;
    }
}

/* ---- the parts of "content" ---------------------------------------------------- */
typedef struct part {
    mcp_json_span el;   /* the element */
    mcp_json_span text; /* its text: a text part's, or an embedded resource's; else {0,0} */
    mcp_json_span uri;  /* an embedded resource's uri, else {0,0} */
} part;

/* Lists the elements of the content array at CS, in one pass over each.
 * Returns how many, or 0 (none, or out of memory: nomem set). */
static size_t content_parts(job *j, size_t cs, part **out)
{
    static const char *const names[] = {"type", "text", "resource"};
    static const char *const rnames[] = {"text", "uri"};
    const char *s = j->s;
    mcp_json_iter it;
    mcp_json_span sp[3], rp[2];
    size_t ks, ke, es, ee, n = 0, cap = 0;
    part *v = NULL;

    *out = NULL;
    if (mcp_json_iter_begin(&it, s, j->n, cs))
        return 0;
    while (mcp_json_iter_next(&it, &ks, &ke, &es, &ee) == 1) {
        part pt = {{es, ee}, {0, 0}, {0, 0}};
        if (s[es] == '{' && mcp_json_members(s, j->n, es, names, 3, sp, NULL) == 0 &&
            sp[0].end && s[sp[0].start] == '"') {
            const char *t = s + sp[0].start;
            size_t tl = sp[0].end - sp[0].start;
            if (mcp_json_string_is(t, tl, "text") && sp[1].end && s[sp[1].start] == '"')
                pt.text = sp[1];
            else if (mcp_json_string_is(t, tl, "resource") && sp[2].end &&
                     s[sp[2].start] == '{' &&
                     mcp_json_members(s, j->n, sp[2].start, rnames, 2, rp, NULL) == 0 &&
                     rp[0].end && s[rp[0].start] == '"') {
                pt.text = rp[0];
                if (rp[1].end && s[rp[1].start] == '"')
                    pt.uri = rp[1];
            }
        }
        part *np = common_array_grow(v, n, &cap, sizeof *np, 8);
        if (!np) {
            free(v);
            j->nomem = 1;
            return 0;
        }
        v = np;
        v[n++] = pt;
    }
    *out = v;
    return n;
}

/* The new "content": the pointer, then every part without text. */
static void replace_content(job *j, size_t cs, size_t ce, const part *pt, size_t np,
                            const char *ptr, size_t plen)
{
    common_buf c = {0};
    char *ctext = NULL;
    size_t clen = 0;
    common_buf_adds(&c, "[{\"type\":\"text\",\"text\":");
    mcp_json_string_encode(&c, ptr, plen);
    common_buf_addc(&c, '}');
    for (size_t i = 0; i < np; i++) {
        if (pt[i].text.end)
            continue;
        common_buf_addc(&c, ',');
        common_buf_add(&c, j->s + pt[i].el.start, pt[i].el.end - pt[i].el.start);
    }
    common_buf_addc(&c, ']');
    if (common_buf_detach(&c, &ctext, &clen) == 0)
        mcp_job_edit(j, cs, ce, ctext, clen);
    else
        j->nomem = 1;
}

/* What the pointer adds when embedded resources' texts are in the stored
 * text: their URIs (yours, NULL when none). */
static char *resources_said(job *j, const part *pt, size_t np)
{
    common_buf b = {0};
    char *out = NULL;
    size_t k = 0;
    for (size_t i = 0; i < np; i++) {
        common_buf u = {0};
        if (!pt[i].text.end || !pt[i].uri.end)
            continue;
        common_buf_adds(&b, k++ ? ", " : "\nThe stored text holds, in their places among the text "
                                     "parts, the text of the embedded resource(s) ");
        mcp_json_string_decode(j->s + pt[i].uri.start, pt[i].uri.end - pt[i].uri.start, &u);
        common_buf_add_printable(&b, u.p ? u.p : "", u.len);
        common_buf_release(&u);
    }
    if (k)
        common_buf_adds(&b, ".");
    if (k && common_buf_detach(&b, &out, NULL))
        j->nomem = 1;
    common_buf_release(&b);
    return out;
}

/* ---- the answer ------------------------------------------------------------------ */
/* The text of an answer: decoded in place (one canonical token) or into BUF. */
typedef struct text {
    const char *p;
    size_t len;
    common_buf buf;
} text;

/* Decodes the text parts of PT (NTEXT of them; ONE the only one when
 * NTEXT is 1) into T. */
static void text_decode(job *j, const part *pt, size_t np, size_t ntext, mcp_json_span one,
                        text *t)
{
    const char *s = j->s;
    if (ntext == 1 && j->w && !j->ip_active &&
        mcp_json_string_canonical(s + one.start, one.end - one.start)) {
        j->ip_active = 1;
        j->ip_start = one.start;
        j->ip_end = one.end;
        j->ip_dlen = mcp_json_string_decode_in_place(j->w + one.start, one.end - one.start);
        t->p = j->w + one.start;
        t->len = j->ip_dlen;
        return;
    }
    for (size_t i = 0, k = 0; i < np && !t->buf.failed; i++) {
        if (!pt[i].text.end)
            continue;
        if (k++)
            common_buf_addc(&t->buf, '\n');
        mcp_json_string_decode(s + pt[i].text.start, pt[i].text.end - pt[i].text.start,
                               &t->buf);
    }
    if (t->buf.failed)
        j->nomem = 1;
    t->p = t->buf.p ? t->buf.p : "";
    t->len = t->buf.len;
}

/* The taskId of a CreateTaskResult's "task" at TS (yours), or NULL. */
static char *task_id(job *j, size_t ts)
{
    size_t a, b;
    if (j->s[ts] != '{' || mcp_json_member(j->s, j->n, ts, "taskId", &a, &b))
        return NULL;
    return mcp_job_dup_string(j, a, b);
}

/* The size of the object that stands for a structuredContent, less its media. */
#define SC_POINTER_BYTES 600u

void mcp_result_rewrite(job *j, const char *tool, size_t rs, char **task)
{
    static const char *const names[] = {"content", "structuredContent", "task"};
    const char *s = j->s;
    mcp_json_span sp[3], one = {0, 0};
    mcp_sc_scan sc = {0};
    part *pt = NULL;
    text t = {0};
    size_t np = 0, ntext = 0;
    uint64_t raw = 0, limit = 0, tm = 0, sm = 0;
    int kind = 0, has_sc, tover = 0, sfit = 0;
    char *ptr = NULL, *extra = NULL;

    *task = NULL;
    if (mcp_json_members(s, j->n, rs, names, 3, sp, NULL))
        return;
    if (!sp[0].end && sp[2].end) { /* a task was created: its result comes later */
        *task = task_id(j, sp[2].start);
        return;
    }
    al_policy_decide(j->rw->pol, tool, "", 0, &kind, &limit); /* the rule only */
    if (kind == AL_OFFLOAD_NEVER)
        return;
    if (sp[0].end && s[sp[0].start] == '[')
        np = content_parts(j, sp[0].start, &pt);
    for (size_t i = 0; i < np; i++)
        if (pt[i].text.end) {
            raw += pt[i].text.end - pt[i].text.start - 2 + (ntext ? 1 : 0);
            one = pt[i].text;
            ntext++;
        }
    has_sc = sp[1].end && (s[sp[1].start] == '{' || s[sp[1].start] == '[');
    if (has_sc && mcp_sc_scan_value(s, j->n, sp[1].start, sp[1].end, &sc))
        j->nomem = 1;
    /* No decoded text is longer than its token: when even the tokens are
     * within the rule, nothing needs decoding. */
    if (j->nomem || !over(kind, limit, raw + (has_sc ? sc.bytes : 0)))
        goto cleanup;
    if (ntext) {
        text_decode(j, pt, np, ntext, one, &t);
        tm = measure(kind, t.len, kind == AL_OFFLOAD_OVER_BYTES ? 0 : chars_of(t.p, t.len));
        tover = over(kind, limit, tm);
    }
    if (has_sc) {
        sm = measure(kind, sc.bytes, sc.chars);
        sfit = over(kind, limit, (tover ? 0 : tm) + sm);
        /* A text just within the rule, over it beside the pointer that
         * replaces the structure: the text goes too. */
        if (sfit && ntext && !tover && over(kind, limit, tm + SC_POINTER_BYTES))
            tover = 1;
    }
    if (tover && !j->nomem) {
        extra = resources_said(j, pt, np);
        size_t plen = 0;
        if (store_text(j, tool, t.p, t.len, extra, &ptr, &plen) == 0)
            replace_content(j, sp[0].start, sp[0].end, pt, np, ptr, plen);
        else
            tover = 0;
    }
    if (!tover)
        mcp_job_restore(j); /* the text passes: its token as it came */
    if (sfit && !j->nomem)
        store_structured(j, tool, sp[1].start, sp[1].end, &sc);
cleanup:
    mcp_sc_scan_release(&sc);
    common_buf_release(&t.buf);
    free(pt);
    free(ptr);
    free(extra);
}

int mcp_result_unparsed(job *j, const char *tool, size_t is, size_t ie, const char *why)
{
    uint64_t limit = 0;
    int kind = 0;
    char *ptr = NULL, *msg = NULL, *extra = NULL;
    size_t plen = 0, len = 0;
    common_buf b = {0};

    al_policy_decide(j->rw->pol, tool, "", 0, &kind, &limit);
    if (kind == AL_OFFLOAD_NEVER ||
        !over(kind, limit, measure(kind, j->n, kind == AL_OFFLOAD_OVER_BYTES
                                                   ? 0 : chars_of(j->s, j->n))))
        return 0;
    common_buf_addf(&b, "\nThe server's answer to this call of '%s' could not be read: %s (%zu "
                    "bytes). It is stored above whole, as the server sent it (a JSON-RPC message), "
                    "in place of the result.", tool, why, j->n);
    if (common_buf_detach(&b, &extra, NULL)) {
        j->nomem = 1;
        return 0;
    }
    if (store_text(j, tool, j->s, j->n, extra, &ptr, &plen)) {
        free(extra);
        return 0;
    }
    common_buf_adds(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
    common_buf_add(&b, j->s + is, ie - is);
    common_buf_adds(&b, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
    mcp_json_string_encode(&b, ptr, plen);
    common_buf_adds(&b, "}],\"isError\":true}}");
    if (common_buf_detach(&b, &msg, &len) == 0)
        mcp_job_edit(j, 0, j->n, msg, len);
    else
        j->nomem = 1;
    mcp_job_note(j, "the answer to a call of '%s' could not be read (%s, %zu bytes): stored "
                 "whole as text, the client gets an isError result naming it", tool, why, j->n);
    free(ptr);
    free(extra);
    return !j->nomem;
}
