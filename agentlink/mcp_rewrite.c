/* mcp_rewrite.c -- the proxy's rewriter: one message in, a verdict out.
 *
 * It remembers the id (by value) and tool of each tools/call and tools/list
 * the client sends, and rewrites only the answers to those; everything else
 * is MCP_PASS, which the relay sends on byte for byte. A rewrite is a list
 * of edits (byte ranges of the message and their new text) applied in one
 * splice, so every byte outside the edited values is the server's own. */
#include "agentlink/mcp.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { REQ_CALL = 1, REQ_LIST = 2 };

typedef struct pending {
    char *id;   /* the id by value: "s" + string, or "n" + number text */
    int kind;   /* REQ_* */
    char *tool; /* REQ_CALL: the tool's name */
} pending;

struct mcp_rewriter {
    al_store *h;
    const al_policy *pol;
    al_policy *always;  /* "offload everything", with POL's preview */
    int read_tool;
    int server_read_tool; /* the server has a tool of that name itself */
    char *tool_def;     /* the read tool, as a JSON object */
    pending *pend;
    size_t npend, cappend;
};

/* One replacement of the byte range [start, end) by TEXT. */
typedef struct edit {
    size_t start, end;
    char *text;
    size_t len;
} edit;

/* What one message's rewrite collects. */
typedef struct job {
    mcp_rewriter *rw;
    const char *s;
    size_t n;
    edit *ed;
    size_t ned, caped;
    al_buf note;
    int nomem;
} job;

/* ---- small helpers ---------------------------------------------------------- */
static void note_add(job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_add(job *j, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (j->note.len)
        al_buf_adds(&j->note, "; ");
    al_buf_adds(&j->note, line);
}

/* Adds an edit; TEXT (LEN bytes) becomes the job's. */
static void edit_add(job *j, size_t start, size_t end, char *text, size_t len)
{
    if (!text) {
        j->nomem = 1;
        return;
    }
    if (j->ned == j->caped) {
        size_t cap = j->caped ? j->caped * 2 : 8;
        edit *e = realloc(j->ed, cap * sizeof *e);
        if (!e) {
            free(text);
            j->nomem = 1;
            return;
        }
        j->ed = e;
        j->caped = cap;
    }
    j->ed[j->ned++] = (edit){start, end, text, len};
}

static int edit_cmp(const void *a, const void *b)
{
    const edit *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Applies the edits from FIRST on that lie in [FROM, TO) to that range of
 * the message, into B. Edits never overlap. */
static void splice(const job *j, size_t first, size_t from, size_t to, al_buf *b)
{
    size_t at = from;
    for (size_t i = first; i < j->ned; i++) {
        const edit *e = &j->ed[i];
        if (e->start < from || e->end > to)
            continue;
        al_buf_add(b, j->s + at, e->start - at);
        al_buf_add(b, e->text, e->len);
        at = e->end;
    }
    al_buf_add(b, j->s + at, to - at);
}

static void job_release(job *j)
{
    for (size_t i = 0; i < j->ned; i++)
        free(j->ed[i].text);
    free(j->ed);
    al_buf_release(&j->note);
}

/* The string token at [vs, ve) decoded into a NUL-terminated copy, or NULL
 * (not a string, or no memory: sets nomem). */
static char *dup_string(job *j, size_t vs, size_t ve)
{
    al_buf b = {0};
    char *out = NULL;
    if (ve - vs < 2 || j->s[vs] != '"')
        return NULL;
    if (mcp_json_string_decode(j->s + vs, ve - vs, &b) || al_buf_detach(&b, &out, NULL)) {
        j->nomem = b.failed;
        al_buf_release(&b);
        return NULL;
    }
    return out;
}

/* ---- ids and pending requests -------------------------------------------- */
/* The id at [vs, ve) by value, or NULL (null, object, array: not tracked). */
static char *id_key(job *j, size_t vs, size_t ve)
{
    const char *s = j->s;
    al_buf b = {0};
    char *out = NULL;
    if (s[vs] == '"') {
        al_buf_addc(&b, 's');
        if (mcp_json_string_decode(s + vs, ve - vs, &b))
            b.failed = 1;
    } else if (s[vs] == '-' || (s[vs] >= '0' && s[vs] <= '9')) {
        /* Integers compare as written (any length: no rounding); others by
         * their double value, so 1.0 and 1 and 1e0 meet. */
        size_t k = vs + (s[vs] == '-');
        while (k < ve && s[k] >= '0' && s[k] <= '9')
            k++;
        al_buf_addc(&b, 'n');
        if (k == ve) {
            al_buf_add(&b, s + vs, ve - vs);
        } else {
            char tmp[64];
            size_t len = ve - vs < sizeof tmp - 1 ? ve - vs : sizeof tmp - 1;
            memcpy(tmp, s + vs, len);
            tmp[len] = '\0';
            double d = strtod(tmp, NULL);
            if (d == (double)(long long)d && d > -9e15 && d < 9e15)
                al_buf_addf(&b, "%lld", (long long)d);
            else
                al_buf_addf(&b, "%.17g", d);
        }
    } else {
        return NULL;
    }
    if (al_buf_detach(&b, &out, NULL))
        j->nomem = 1;
    return out;
}

static pending *pend_find(mcp_rewriter *rw, const char *id)
{
    for (size_t i = 0; i < rw->npend; i++)
        if (strcmp(rw->pend[i].id, id) == 0)
            return &rw->pend[i];
    return NULL;
}

static void pend_drop(mcp_rewriter *rw, pending *p)
{
    free(p->id);
    free(p->tool);
    *p = rw->pend[--rw->npend];
}

/* Remembers request ID (taken) of KIND for TOOL (taken, may be NULL). */
static void pend_add(job *j, char *id, int kind, char *tool)
{
    mcp_rewriter *rw = j->rw;
    pending *p = pend_find(rw, id);
    if (p) /* an id used again: the newer request is the one answered */
        pend_drop(rw, p);
    if (rw->npend == rw->cappend) {
        size_t cap = rw->cappend ? rw->cappend * 2 : 16;
        pending *np = realloc(rw->pend, cap * sizeof *np);
        if (!np) {
            free(id);
            free(tool);
            j->nomem = 1;
            return;
        }
        rw->pend = np;
        rw->cappend = cap;
    }
    rw->pend[rw->npend++] = (pending){id, kind, tool};
}

size_t mcp_rewriter_pending(const mcp_rewriter *rw)
{
    return rw ? rw->npend : 0;
}

/* ---- the rewriter's life ------------------------------------------------- */
static char *make_tool_def(const al_store *h)
{
    const char *mount = h ? al_store_mount(h) : "/large_tool_results";
    al_buf b = {0}, d = {0};
    char *out = NULL;
    al_buf_addf(&d, "Read a tool result that was too large for the conversation and was "
                "stored under %s (the text that replaced it names its path). Returns "
                "numbered lines: page with offset and limit, or keep only the lines "
                "matching pattern (a POSIX extended regular expression). A result that "
                "was evicted must be produced again by running its tool again.", mount);
    al_buf_adds(&b, "{\"name\":\"" MCP_READ_TOOL "\",\"description\":");
    mcp_json_string_encode(&b, d.p ? d.p : "", d.len);
    al_buf_adds(&b, ",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
                "\"path\":{\"type\":\"string\",\"description\":\"The path the pointer "
                "names (");
    al_buf_add_printable(&b, mount, strlen(mount));
    al_buf_adds(&b, "/KEY), or the bare key.\"},"
                "\"offset\":{\"type\":\"integer\",\"minimum\":1,\"description\":"
                "\"First line to read, 1-based (default 1).\"},"
                "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"description\":"
                "\"How many lines to return (default 2000); with pattern, how many "
                "matching lines.\"},"
                "\"pattern\":{\"type\":\"string\",\"description\":\"Optional POSIX "
                "extended regular expression: only the lines matching it are "
                "returned, with their line numbers.\"}},"
                "\"required\":[\"path\"]}}");
    al_buf_release(&d);
    if (al_buf_detach(&b, &out, NULL))
        return NULL;
    return out;
}

int mcp_rewriter_new(mcp_rewriter **out, al_store *h, const al_policy *pol,
                     int read_tool)
{
    mcp_rewriter *rw = calloc(1, sizeof *rw);
    al_preview pv;
    char json[256];
    int rc;
    *out = NULL;
    if (!rw)
        return ENOMEM;
    rw->h = h;
    rw->pol = pol;
    rw->read_tool = read_tool;
    al_policy_preview(pol, &pv);
    snprintf(json, sizeof json,
             "{\"preview\":{\"head_lines\":%u,\"tail_lines\":%u,\"max_line_chars\":%u},"
             "\"rules\":[{\"tools\":[\"*\"],\"offload\":\"always\"}]}",
             pv.head_lines, pv.tail_lines, pv.max_line_chars);
    rc = al_policy_parse(&rw->always, json, strlen(json), "mcp-proxy", NULL);
    if (rc == 0 && !(rw->tool_def = make_tool_def(h)))
        rc = ENOMEM;
    if (rc) {
        mcp_rewriter_free(rw);
        return rc;
    }
    *out = rw;
    return 0;
}

void mcp_rewriter_free(mcp_rewriter *rw)
{
    if (!rw)
        return;
    while (rw->npend)
        pend_drop(rw, &rw->pend[rw->npend - 1]);
    free(rw->pend);
    free(rw->tool_def);
    al_policy_free(rw->always);
    free(rw);
}

void mcp_verdict_release(mcp_verdict *v)
{
    if (!v)
        return;
    free(v->text);
    free(v->note);
    memset(v, 0, sizeof *v);
}

/* ---- offloading ------------------------------------------------------------ */
/* Stores LEN bytes at DATA, the output of TOOL, and sets *PTR to the
 * pointer text (yours). Returns 0, or an error (a note says why). */
static int store_text(job *j, const char *tool, const char *data, size_t len, char **ptr,
                      size_t *plen)
{
    mcp_rewriter *rw = j->rw;
    char hex[65], *raw = NULL, *key = NULL, *path = NULL, *out = NULL;
    al_buf b = {0};
    size_t outlen = 0;
    int rc;

    *ptr = NULL;
    if (!rw->h) {
        note_add(j, "no store: the result of '%s' (%zu bytes) passed unchanged", tool, len);
        return AL_ENOSTORE;
    }
    al_sha256_hex(data, len, hex);
    al_buf_addf(&b, "mcp-%s-%.16s", tool, hex);
    if (al_buf_detach(&b, &raw, NULL) || al_key_derive(raw, strlen(raw), &key) ||
        al_store_path_of(rw->h, key, &path)) {
        rc = ENOMEM;
        j->nomem = 1;
        goto cleanup;
    }
    rc = al_offload(rw->h, rw->always, al_tool_check(tool) ? NULL : tool, raw, strlen(raw),
                    data, len, &out, &outlen, NULL);
    if (rc) {
        note_add(j, "store '%s': %s; the result of '%s' (%zu bytes) passed unchanged",
                 al_store_dir(rw->h), al_strerror(rc), tool, len);
        goto cleanup;
    }
    al_buf_add(&b, out, outlen);
    if (rw->read_tool && !rw->server_read_tool) {
        al_buf_adds(&b, "\nOr call the tool " MCP_READ_TOOL " with {\"path\": ");
        mcp_json_string_encode(&b, path, strlen(path));
        al_buf_adds(&b, "} (add \"offset\" and \"limit\" to page through it, \"pattern\" to "
                    "keep only matching lines).\n");
    }
    if (al_buf_detach(&b, ptr, plen)) {
        rc = ENOMEM;
        j->nomem = 1;
    }
cleanup:
    al_buf_release(&b);
    al_free(out);
    al_free(path);
    al_free(key);
    free(raw);
    return rc;
}

/* A string value of structuredContent worth replacing. */
typedef struct sval {
    size_t vs, ve;
} sval;

static int sval_cmp(const void *a, const void *b)
{
    const sval *x = a, *y = b;
    size_t lx = x->ve - x->vs, ly = y->ve - y->vs;
    return lx > ly ? -1 : lx < ly;
}

/* Shorter strings are never replaced: a pointer is about this long. */
#define SC_MIN_STRING 256u

/* Collects the string values (not keys) of the value at [vs, ve) longer
 * than SC_MIN_STRING. DEPTH bounds the recursion (the value was checked
 * by mcp_json_skip, which bounds nesting the same way). */
static void collect_strings(job *j, size_t vs, size_t ve, sval **v, size_t *nv, size_t *cap,
                            unsigned depth)
{
    mcp_json_iter it;
    size_t ks, ke, a, b;
    if (j->s[vs] == '"') {
        if (ve - vs <= SC_MIN_STRING)
            return;
        if (*nv == *cap) {
            size_t nc = *cap ? *cap * 2 : 16;
            sval *nvp = realloc(*v, nc * sizeof *nvp);
            if (!nvp) {
                j->nomem = 1;
                return;
            }
            *v = nvp;
            *cap = nc;
        }
        (*v)[(*nv)++] = (sval){vs, ve};
        return;
    }
    if (depth > MCP_JSON_DEPTH || mcp_json_iter_begin(&it, j->s, j->n, vs))
        return;
    while (mcp_json_iter_next(&it, &ks, &ke, &a, &b) == 1)
        collect_strings(j, a, b, v, nv, cap, depth + 1);
}

/* Whether the value at [vs, ve), with the edits from FIRST applied, is
 * still over the policy for TOOL. */
static int still_over(job *j, size_t first, const char *tool, size_t vs, size_t ve)
{
    al_buf b = {0};
    int over;
    splice(j, first, vs, ve, &b);
    if (b.failed) {
        al_buf_release(&b);
        j->nomem = 1;
        return 0;
    }
    over = al_policy_decide(j->rw->pol, tool, b.p, b.len, NULL, NULL);
    al_buf_release(&b);
    return over;
}

/* structuredContent at [vs, ve), over the policy: replace its longest
 * strings by pointers until it is not. TEXT (may be NULL) is the text
 * already stored, PTR its pointer. */
static void rewrite_structured(job *j, const char *tool, size_t vs, size_t ve,
                               const al_buf *text, const char *ptr, size_t plen)
{
    sval *v = NULL;
    size_t nv = 0, cap = 0, first = j->ned, done = 0;
    int over = 1;

    collect_strings(j, vs, ve, &v, &nv, &cap, 0);
    if (nv > 1)
        qsort(v, nv, sizeof *v, sval_cmp);
    for (size_t i = 0; i < nv && over && !j->nomem; i++) {
        al_buf dec = {0}, enc = {0};
        char *p = NULL, *own = NULL;
        size_t pl = 0;
        if (mcp_json_string_decode(j->s + v[i].vs, v[i].ve - v[i].vs, &dec)) {
            j->nomem = dec.failed;
            al_buf_release(&dec);
            break;
        }
        if (text && ptr && dec.len == text->len && memcmp(dec.p, text->p, dec.len) == 0) {
            p = (char *)ptr;
            pl = plen;
        } else if (store_text(j, tool, dec.p ? dec.p : "", dec.len, &own, &pl) == 0) {
            p = own;
        }
        al_buf_release(&dec);
        if (!p)
            break; /* the store failed: the note says why */
        mcp_json_string_encode(&enc, p, pl);
        free(own);
        if (enc.failed) {
            j->nomem = 1;
            al_buf_release(&enc);
            break;
        }
        if (enc.len < v[i].ve - v[i].vs) {
            edit_add(j, v[i].vs, v[i].ve, enc.p, enc.len);
            enc.p = NULL;
            done++;
            /* Edits must be in order for splice(): keep the new ones sorted. */
            qsort(j->ed + first, j->ned - first, sizeof *j->ed, edit_cmp);
            over = still_over(j, first, tool, vs, ve);
        }
        al_buf_release(&enc);
    }
    if (over && !j->nomem)
        note_add(j, "structuredContent of '%s' is still over the offload policy after %zu of "
                 "its strings were replaced (its other values are kept so that its shape "
                 "holds)", tool, done);
    free(v);
}

/* The result object at [rs, re) of a tools/call of TOOL. */
static void rewrite_call_result(job *j, const char *tool, size_t rs, size_t re)
{
    const char *s = j->s;
    size_t cs, ce, ss, se, ks, ke, es, ee, a, b;
    size_t nparts = 0;
    al_buf text = {0};
    char *ptr = NULL;
    size_t plen = 0;
    mcp_json_iter it;
    int have_content, offloaded = 0;
    (void)re;

    have_content = mcp_json_member(s, j->n, rs, "content", &cs, &ce) == 0 && s[cs] == '[';
    if (have_content && mcp_json_iter_begin(&it, s, j->n, cs) == 0) {
        while (mcp_json_iter_next(&it, &ks, &ke, &es, &ee) == 1) {
            if (s[es] != '{' || mcp_json_member(s, j->n, es, "type", &a, &b) ||
                !mcp_json_string_is(s + a, b - a, "text") ||
                mcp_json_member(s, j->n, es, "text", &a, &b) || s[a] != '"')
                continue;
            if (nparts++)
                al_buf_addc(&text, '\n');
            if (mcp_json_string_decode(s + a, b - a, &text))
                break;
        }
        if (text.failed)
            j->nomem = 1;
    }
    if (nparts && !j->nomem && al_policy_decide(j->rw->pol, tool, text.p, text.len, NULL, NULL)) {
        if (store_text(j, tool, text.p, text.len, &ptr, &plen) == 0) {
            al_buf c = {0};
            char *ctext = NULL;
            size_t clen = 0;
            al_buf_adds(&c, "[{\"type\":\"text\",\"text\":");
            mcp_json_string_encode(&c, ptr, plen);
            al_buf_addc(&c, '}');
            mcp_json_iter_begin(&it, s, j->n, cs);
            while (mcp_json_iter_next(&it, &ks, &ke, &es, &ee) == 1) {
                if (s[es] == '{' && mcp_json_member(s, j->n, es, "type", &a, &b) == 0 &&
                    mcp_json_string_is(s + a, b - a, "text") &&
                    mcp_json_member(s, j->n, es, "text", &a, &b) == 0 && s[a] == '"')
                    continue;
                al_buf_addc(&c, ',');
                al_buf_add(&c, s + es, ee - es);
            }
            al_buf_addc(&c, ']');
            if (al_buf_detach(&c, &ctext, &clen) == 0)
                edit_add(j, cs, ce, ctext, clen);
            else
                j->nomem = 1;
            offloaded = 1;
        } else {
            /* The store failed: the whole result passes unchanged. */
            goto cleanup;
        }
    }
    if (!j->nomem && mcp_json_member(s, j->n, rs, "structuredContent", &ss, &se) == 0 &&
        (s[ss] == '{' || s[ss] == '[') &&
        al_policy_decide(j->rw->pol, tool, s + ss, se - ss, NULL, NULL))
        rewrite_structured(j, tool, ss, se, offloaded ? &text : NULL, ptr, plen);
cleanup:
    free(ptr);
    al_buf_release(&text);
}

/* The result object at [rs, re) of a tools/list: add the read tool to its
 * last page. */
static void rewrite_list_result(job *j, size_t rs, size_t re)
{
    const char *s = j->s;
    mcp_rewriter *rw = j->rw;
    size_t ts, te, a, b, ks, ke, es, ee, nc, nce;
    mcp_json_iter it;
    al_buf t = {0};
    char *text = NULL;
    size_t len = 0;
    int empty;
    (void)re;

    if (mcp_json_member(s, j->n, rs, "tools", &ts, &te) || s[ts] != '[')
        return;
    mcp_json_iter_begin(&it, s, j->n, ts);
    empty = it.done;
    while (mcp_json_iter_next(&it, &ks, &ke, &es, &ee) == 1)
        if (s[es] == '{' && mcp_json_member(s, j->n, es, "name", &a, &b) == 0 &&
            mcp_json_string_is(s + a, b - a, MCP_READ_TOOL)) {
            if (!rw->server_read_tool)
                note_add(j, "the server has a tool named '" MCP_READ_TOOL "' itself: its "
                         "calls go to the server, the proxy does not answer them");
            rw->server_read_tool = 1;
            return;
        }
    if (mcp_json_member(s, j->n, rs, "nextCursor", &nc, &nce) == 0 && s[nc] == '"')
        return; /* not the last page */
    if (empty) {
        al_buf_addc(&t, '[');
        al_buf_adds(&t, rw->tool_def);
        al_buf_addc(&t, ']');
        if (al_buf_detach(&t, &text, &len) == 0)
            edit_add(j, ts, te, text, len);
        else
            j->nomem = 1;
        return;
    }
    al_buf_addc(&t, ',');
    al_buf_adds(&t, rw->tool_def);
    if (al_buf_detach(&t, &text, &len) == 0)
        edit_add(j, te - 1, te - 1, text, len); /* before the closing ']' */
    else
        j->nomem = 1;
}

/* ---- messages ---------------------------------------------------------------- */
/* One message object from the server at [os, oe). */
static void server_object(job *j, size_t os, size_t oe)
{
    const char *s = j->s;
    mcp_rewriter *rw = j->rw;
    size_t a, b, rs, re;
    pending *p;
    char *id;
    (void)oe;

    if (rw->npend == 0 || mcp_json_member(s, j->n, os, "method", &a, &b) == 0 ||
        mcp_json_member(s, j->n, os, "id", &a, &b))
        return; /* a request or notification of the server's own */
    if (!(id = id_key(j, a, b)))
        return;
    p = pend_find(rw, id);
    free(id);
    if (!p)
        return;
    if (mcp_json_member(s, j->n, os, "result", &rs, &re) == 0 && s[rs] == '{') {
        if (p->kind == REQ_CALL)
            rewrite_call_result(j, p->tool, rs, re);
        else if (p->kind == REQ_LIST && rw->read_tool)
            rewrite_list_result(j, rs, re);
    }
    pend_drop(rw, p);
}

/* The answer to a read tool call with id [is, ie) and arguments
 * [as, ae) (as == ae: none). */
static void answer_read(job *j, size_t is, size_t ie, size_t as, size_t ae, char **out,
                        size_t *outlen)
{
    mcp_rewriter *rw = j->rw;
    char *text = NULL;
    int is_error = 0, kind = 0;
    uint64_t limit = 0;
    size_t budget = MCP_READ_BUDGET, tlen = 0;
    al_buf b = {0};

    al_policy_decide(rw->pol, MCP_READ_TOOL, "x", 1, &kind, &limit);
    if (kind == AL_OFFLOAD_OVER_BYTES || kind == AL_OFFLOAD_OVER_CHARS)
        budget = limit > SIZE_MAX ? SIZE_MAX : (size_t)limit;
    else if (kind == AL_OFFLOAD_OVER_TOKENS)
        budget = limit > SIZE_MAX / 4 ? SIZE_MAX : (size_t)limit * 4;
    if (mcp_read_answer(rw->h, as < ae ? j->s + as : NULL, ae - as, budget, &text, &tlen,
                        &is_error)) {
        j->nomem = 1;
        return;
    }
    al_buf_adds(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
    al_buf_add(&b, j->s + is, ie - is);
    al_buf_adds(&b, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
    mcp_json_string_encode(&b, text, tlen);
    al_buf_addf(&b, "}],\"isError\":%s}}", is_error ? "true" : "false");
    free(text);
    if (al_buf_detach(&b, out, outlen))
        j->nomem = 1;
}

/* One message object from the client at [os, oe); BATCH when inside an
 * array. Returns 1 when the message is a read tool call answered into
 * *OUT. */
static int client_object(job *j, size_t os, int batch, char **out, size_t *outlen)
{
    const char *s = j->s;
    mcp_rewriter *rw = j->rw;
    size_t ms, me, is, ie, ps, pe, a, b;
    char *id, *tool;

    if (mcp_json_member(s, j->n, os, "method", &ms, &me) || s[ms] != '"')
        return 0;
    if (mcp_json_string_is(s + ms, me - ms, "notifications/cancelled")) {
        pending *p;
        if (mcp_json_member(s, j->n, os, "params", &ps, &pe) == 0 && s[ps] == '{' &&
            mcp_json_member(s, j->n, ps, "requestId", &a, &b) == 0 && (id = id_key(j, a, b))) {
            if ((p = pend_find(rw, id)))
                pend_drop(rw, p);
            free(id);
        }
        return 0;
    }
    if (mcp_json_member(s, j->n, os, "id", &is, &ie))
        return 0; /* another notification */
    if (mcp_json_string_is(s + ms, me - ms, "tools/list")) {
        if (rw->read_tool && (id = id_key(j, is, ie)))
            pend_add(j, id, REQ_LIST, NULL);
        return 0;
    }
    if (!mcp_json_string_is(s + ms, me - ms, "tools/call") ||
        mcp_json_member(s, j->n, os, "params", &ps, &pe) || s[ps] != '{' ||
        mcp_json_member(s, j->n, ps, "name", &a, &b) || !(tool = dup_string(j, a, b)))
        return 0;
    if (rw->read_tool && !rw->server_read_tool && !batch && strcmp(tool, MCP_READ_TOOL) == 0) {
        free(tool);
        if (mcp_json_member(s, j->n, ps, "arguments", &a, &b))
            a = b = 0;
        answer_read(j, is, ie, a, b, out, outlen);
        return *out != NULL;
    }
    if ((id = id_key(j, is, ie)))
        pend_add(j, id, REQ_CALL, tool);
    else
        free(tool);
    return 0;
}

/* Finishes a verdict from the job: the note, and REPLACE when edits. */
static int finish(job *j, mcp_verdict *v)
{
    if (j->nomem) {
        mcp_verdict_release(v);
        job_release(j);
        return ENOMEM;
    }
    if (j->ned) {
        al_buf b = {0};
        qsort(j->ed, j->ned, sizeof *j->ed, edit_cmp);
        splice(j, 0, 0, j->n, &b);
        if (al_buf_detach(&b, &v->text, &v->len)) {
            job_release(j);
            return ENOMEM;
        }
        v->action = MCP_REPLACE;
    }
    if (j->note.len)
        al_buf_detach(&j->note, &v->note, NULL);
    job_release(j);
    return 0;
}

static int check_line(job *j, const char *who, mcp_verdict *v)
{
    size_t first = mcp_json_ws(j->s, j->n, 0);
    if (first == j->n)
        return 1; /* an empty line: nothing to say */
    if (!mcp_json_valid(j->s, j->n)) {
        char head[41];
        al_buf b = {0};
        size_t k = j->n - first < 40 ? j->n - first : 40;
        memcpy(head, j->s + first, k);
        head[k] = '\0';
        al_buf_addf(&b, "malformed JSON from the %s (%zu bytes, starting '", who, j->n);
        al_buf_add_printable(&b, head, k);
        al_buf_adds(&b, "'): passed through unchanged");
        al_buf_detach(&b, &v->note, NULL);
        return 1;
    }
    return 0;
}

int mcp_rewriter_client(mcp_rewriter *rw, const char *line, size_t len, mcp_verdict *v)
{
    job j = {.rw = rw, .s = line, .n = len};
    size_t pos;
    memset(v, 0, sizeof *v);
    if (check_line(&j, "client", v))
        return 0;
    pos = mcp_json_ws(line, len, 0);
    if (line[pos] == '{') {
        char *out = NULL;
        size_t outlen = 0;
        if (client_object(&j, pos, 0, &out, &outlen)) {
            v->action = MCP_ANSWER;
            v->text = out;
            v->len = outlen;
        }
    } else if (line[pos] == '[') {
        mcp_json_iter it;
        size_t ks, ke, es, ee;
        mcp_json_iter_begin(&it, line, len, pos);
        while (mcp_json_iter_next(&it, &ks, &ke, &es, &ee) == 1)
            if (line[es] == '{')
                client_object(&j, es, 1, NULL, NULL);
    }
    return finish(&j, v);
}

int mcp_rewriter_server(mcp_rewriter *rw, const char *line, size_t len, mcp_verdict *v)
{
    job j = {.rw = rw, .s = line, .n = len};
    size_t pos;
    memset(v, 0, sizeof *v);
    if (check_line(&j, "server", v))
        return 0;
    pos = mcp_json_ws(line, len, 0);
    if (line[pos] == '{') {
        server_object(&j, pos, len);
    } else if (line[pos] == '[') {
        mcp_json_iter it;
        size_t ks, ke, es, ee;
        mcp_json_iter_begin(&it, line, len, pos);
        while (mcp_json_iter_next(&it, &ks, &ke, &es, &ee) == 1)
            if (line[es] == '{')
                server_object(&j, es, ee);
    }
    return finish(&j, v);
}
