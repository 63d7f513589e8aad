/* rewrite.c -- the proxy's rewriter: one message in, a verdict out.
 *
 * It remembers the id (by value) and tool of each tools/call and tools/list
 * the client sends, and rewrites only the answers to those; everything else
 * is MCP_PASS, which the relay sends on byte for byte. A rewrite is a list
 * of edits (byte ranges of the message and their new text) applied in one
 * splice, so every byte outside the edited values is the server's own. */
#include "agentlink/mcp/mcp.h"
#include "store/store.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

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
    char nonce[17];     /* 64 random bits, hex: this session's part of every key */
    unsigned long long seq; /* results stored so far in this session */
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
    char *w;            /* S, writable (messages from the server), else NULL */
    size_t n;
    /* A text token decoded in place (see mcp_json_string_decode_in_place): [ip_start,
     * ip_end) holds IP_DLEN decoded bytes until restored. */
    int ip_active;
    size_t ip_start, ip_end, ip_dlen;
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
            /* The range first: a cast out of it is undefined (fuzz_mcp). */
            if (d > -9e15 && d < 9e15 && d == (double)(long long)d)
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

/* 64 random bits as 16 hex digits: what makes this session's keys its own.
 * getrandom() never fails for 8 bytes once the pool is ready; should it,
 * the time in ns, the pid and an address still make a collision with
 * another session's nonce a matter of chance. */
static void session_nonce(char hex[17])
{
    uint64_t x = 0;
    if (getrandom(&x, sizeof x, 0) != (ssize_t)sizeof x) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        x ^= (uint64_t)getpid() << 40 ^ (uint64_t)(uintptr_t)hex;
    }
    snprintf(hex, 17, "%016llx", (unsigned long long)x);
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
    session_nonce(rw->nonce);
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
    char *raw = NULL, *key = NULL, *path = NULL, *out = NULL;
    al_buf b = {0};
    size_t outlen = 0;
    int rc;

    *ptr = NULL;
    if (!rw->h) {
        note_add(j, "no store: the result of '%s' (%zu bytes) passed unchanged", tool, len);
        return AL_ENOSTORE;
    }
    al_buf_addf(&b, "mcp-%s-%s-%llu", tool, rw->nonce, ++rw->seq);
    if (al_buf_detach(&b, &raw, NULL) || al_key_derive(raw, strlen(raw), &key) ||
        al_store_path_of(rw->h, key, &path)) {
        rc = ENOMEM;
        j->nomem = 1;
        goto cleanup;
    }
    rc = al_offload(rw->h, rw->always, al_tool_check(tool) ? NULL : tool, raw, strlen(raw),
                    data, len, &out, &outlen, NULL);
    if (rc == AL_EUPLOAD) { /* stored here, pending for the remote: the pointer works here */
        note_add(j, "store '%s': the result of '%s' is stored here but not yet on its remote (%s); "
                 "it is pending: agentlink sync sends it", al_store_dir(rw->h), tool,
                 al_store_remote_message(rw->h));
        rc = 0;
    }
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

/* The text already stored for this result, to give a string of
 * structuredContent that holds the same text the same pointer. */
typedef struct stored {
    const al_buf *text;   /* the stored text (decoded), NULL when decoded in place */
    mcp_json_span raw;    /* its token when it came from one text part, else {0,0} */
    const char *ptr;      /* its pointer text */
    size_t plen;
    const size_t *same;   /* decoded in place: the strings found equal to */
    size_t nsame;         /* its token beforehand (their starts) */
} stored;

/* Whether the string token at [vs, ve) holds the stored text: its bytes
 * equal to the text part's token (what servers send: one encoder, one
 * text), else decoded and compared. */
static int same_text(job *j, const stored *st, size_t vs, size_t ve, al_buf *dec)
{
    if (!st || !st->ptr)
        return 0;
    if (!st->text) { /* the token is decoded in place: compared before */
        for (size_t i = 0; i < st->nsame; i++)
            if (st->same[i] == vs)
                return 1;
        return 0;
    }
    if (st->raw.end && ve - vs == st->raw.end - st->raw.start &&
        memcmp(j->s + vs, j->s + st->raw.start, ve - vs) == 0)
        return 1;
    if (mcp_json_string_decode(j->s + vs, ve - vs, dec)) {
        j->nomem = dec->failed;
        return 0;
    }
    return dec->len == st->text->len && memcmp(dec->p, st->text->p, dec->len) == 0;
}

/* structuredContent at [vs, ve), over the policy: replace its longest
 * strings by pointers until it is not. ST (may be NULL) is the text
 * already stored and its pointer. */
static void rewrite_structured(job *j, const char *tool, size_t vs, size_t ve, const stored *st)
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
        if (same_text(j, st, v[i].vs, v[i].ve, &dec)) {
            p = (char *)st->ptr;
            pl = st->plen;
        } else if (!j->nomem && (dec.len || mcp_json_string_decode(j->s + v[i].vs,
                                                                      v[i].ve - v[i].vs, &dec) == 0) &&
                   store_text(j, tool, dec.p ? dec.p : "", dec.len, &own, &pl) == 0) {
            p = own;
        }
        if (dec.failed)
            j->nomem = 1;
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

/* ---- decoding a text in place ---------------------------------------------
 * A message that is one long text (a file, a log) would cost three times
 * its size while offloaded: the line, its decoded text and the store's copy
 * during the write. When the text's token is canonical (json.c), the text
 * is decoded over its own token instead, and, should the result pass after
 * all (not over the policy, the store failing), encoded back over it, byte
 * for byte as it was. */

/* Puts back a token decoded in place, if any. */
static void restore_in_place(job *j)
{
    if (!j->ip_active)
        return;
    mcp_json_string_encode_back(j->w + j->ip_start, j->ip_dlen, j->ip_end - j->ip_start);
    j->ip_active = 0;
}

/* Whether a text of at most RAW bytes can be over a rule of KIND and LIMIT
 * (no decoded text is longer than its token, nor has more characters than
 * bytes): when not, nothing needs decoding. */
static int maybe_over(int kind, uint64_t limit, uint64_t raw)
{
    switch (kind) {
    case AL_OFFLOAD_ALWAYS: return raw > 0;
    case AL_OFFLOAD_OVER_BYTES:
    case AL_OFFLOAD_OVER_CHARS: return raw > limit;
    case AL_OFFLOAD_OVER_TOKENS: return (raw + 3) / 4 > limit;
    default: return 0;
    }
}

/* One element of a result's "content". */
typedef struct part {
    mcp_json_span el;   /* the element */
    mcp_json_span text; /* its "text" string when it is a text part, else {0,0} */
} part;

/* Lists the elements of the content array at [cs, ce), in one pass over
 * each. Returns how many, or 0 (none, or out of memory: nomem set). */
static size_t content_parts(job *j, size_t cs, part **out)
{
    static const char *const names[] = {"type", "text"};
    const char *s = j->s;
    mcp_json_iter it;
    mcp_json_span sp[2];
    size_t ks, ke, es, ee, n = 0, cap = 0;
    part *v = NULL;

    *out = NULL;
    if (mcp_json_iter_begin(&it, s, j->n, cs))
        return 0;
    while (mcp_json_iter_next(&it, &ks, &ke, &es, &ee) == 1) {
        part pt = {{es, ee}, {0, 0}};
        if (s[es] == '{' && mcp_json_members(s, j->n, es, names, 2, sp, NULL) == 0 &&
            sp[0].end && mcp_json_string_is(s + sp[0].start, sp[0].end - sp[0].start, "text") &&
            sp[1].end && s[sp[1].start] == '"')
            pt.text = sp[1];
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 8;
            part *np = realloc(v, nc * sizeof *np);
            if (!np) {
                free(v);
                j->nomem = 1;
                return 0;
            }
            v = np;
            cap = nc;
        }
        v[n++] = pt;
    }
    *out = v;
    return n;
}

/* The new "content": the pointer, then every part that is not text. */
static void replace_content(job *j, size_t cs, size_t ce, const part *pt, size_t np,
                            const char *ptr, size_t plen)
{
    al_buf c = {0};
    char *ctext = NULL;
    size_t clen = 0;
    al_buf_adds(&c, "[{\"type\":\"text\",\"text\":");
    mcp_json_string_encode(&c, ptr, plen);
    al_buf_addc(&c, '}');
    for (size_t i = 0; i < np; i++) {
        if (pt[i].text.end)
            continue;
        al_buf_addc(&c, ',');
        al_buf_add(&c, j->s + pt[i].el.start, pt[i].el.end - pt[i].el.start);
    }
    al_buf_addc(&c, ']');
    if (al_buf_detach(&c, &ctext, &clen) == 0)
        edit_add(j, cs, ce, ctext, clen);
    else
        j->nomem = 1;
}

/* The one text part at [ts, te) of a result without structuredContent,
 * canonical: decoded in place, offloaded or put back. */
static int offload_in_place(job *j, const char *tool, const mcp_json_span *content,
                            const part *pt, size_t np, size_t ts, size_t te, char **ptr,
                            size_t *plen)
{
    j->ip_active = 1;
    j->ip_start = ts;
    j->ip_end = te;
    j->ip_dlen = mcp_json_string_decode_in_place(j->w + ts, te - ts);
    if (al_policy_decide(j->rw->pol, tool, j->w + ts, j->ip_dlen, NULL, NULL)) {
        if (store_text(j, tool, j->w + ts, j->ip_dlen, ptr, plen)) {
            restore_in_place(j);
            return -1; /* the store failed: the whole result passes */
        }
        replace_content(j, content->start, content->end, pt, np, *ptr, *plen);
        if (!j->nomem)
            return 1; /* the token stays decoded: the content is replaced */
    }
    restore_in_place(j);
    return 0;
}

/* The starts of the long strings of structuredContent at [vs, ve) whose
 * bytes are those of the text token at [ts, te). Yours; NULL when none. */
static size_t *same_strings(job *j, size_t vs, size_t ve, size_t ts, size_t te, size_t *n)
{
    sval *v = NULL;
    size_t nv = 0, cap = 0, *out = NULL;
    *n = 0;
    collect_strings(j, vs, ve, &v, &nv, &cap, 0);
    for (size_t i = 0; i < nv; i++) {
        if (v[i].ve - v[i].vs != te - ts || memcmp(j->s + v[i].vs, j->s + ts, te - ts) != 0)
            continue;
        if (!out && !(out = malloc(nv * sizeof *out))) {
            j->nomem = 1;
            break;
        }
        out[(*n)++] = v[i].vs;
    }
    free(v);
    return out;
}

/* The result object at RS of a tools/call of TOOL. */
static void rewrite_call_result(job *j, const char *tool, size_t rs)
{
    static const char *const names[] = {"content", "structuredContent"};
    const char *s = j->s;
    mcp_json_span sp[2], one = {0, 0};
    part *pt = NULL;
    size_t np = 0, ntext = 0;
    uint64_t raw = 0, limit = 0;
    int kind = 0;
    al_buf text = {0};
    stored st = {&text, {0, 0}, NULL, 0, NULL, 0};
    char *ptr = NULL;

    if (mcp_json_members(s, j->n, rs, names, 2, sp, NULL))
        return;
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
    if (ntext && maybe_over(kind, limit, raw)) {
        if (ntext == 1 && j->w && !j->ip_active &&
            mcp_json_string_canonical(s + one.start, one.end - one.start)) {
            /* structuredContent's copies of the text are found by their
             * bytes before the token is decoded over them. */
            int sc = sp[1].end && (s[sp[1].start] == '{' || s[sp[1].start] == '[') &&
                     al_policy_decide(j->rw->pol, tool, s + sp[1].start,
                                      sp[1].end - sp[1].start, NULL, NULL);
            int r;
            if (sc)
                st.same = same_strings(j, sp[1].start, sp[1].end, one.start, one.end, &st.nsame);
            r = j->nomem ? -1 : offload_in_place(j, tool, &sp[0], pt, np, one.start, one.end,
                                                  &ptr, &st.plen);
            if (r == 1) {
                st.text = NULL;
                st.ptr = ptr;
            }
            if (r >= 0 && sc && !j->nomem)
                rewrite_structured(j, tool, sp[1].start, sp[1].end, &st);
            free((void *)st.same);
            goto cleanup;
        }
        for (size_t i = 0; i < np && !text.failed; i++) {
            if (!pt[i].text.end)
                continue;
            if (text.len || st.raw.end)
                al_buf_addc(&text, '\n');
            else
                st.raw = pt[i].text;
            mcp_json_string_decode(s + pt[i].text.start, pt[i].text.end - pt[i].text.start,
                                   &text);
        }
        if (ntext > 1)
            st.raw = (mcp_json_span){0, 0};
        if (text.failed)
            j->nomem = 1;
        if (!j->nomem && al_policy_decide(j->rw->pol, tool, text.p, text.len, NULL, NULL)) {
            if (store_text(j, tool, text.p ? text.p : "", text.len, &ptr, &st.plen))
                goto cleanup; /* the store failed: the whole result passes unchanged */
            st.ptr = ptr;
            replace_content(j, sp[0].start, sp[0].end, pt, np, ptr, st.plen);
        }
    }
    if (!j->nomem && sp[1].end && (s[sp[1].start] == '{' || s[sp[1].start] == '[') &&
        al_policy_decide(j->rw->pol, tool, s + sp[1].start, sp[1].end - sp[1].start, NULL, NULL))
        rewrite_structured(j, tool, sp[1].start, sp[1].end, &st);
cleanup:
    free(pt);
    free(ptr);
    al_buf_release(&text);
}

/* The result object at [rs, re) of a tools/list: add the read tool to its
 * last page. */
static void rewrite_list_result(job *j, size_t rs)
{
    static const char *const names[] = {"tools", "nextCursor"};
    const char *s = j->s;
    mcp_rewriter *rw = j->rw;
    size_t ts, te, a, b, ks, ke, es, ee;
    mcp_json_span sp[2];
    mcp_json_iter it;
    al_buf t = {0};
    char *text = NULL;
    size_t len = 0;
    int empty;

    if (mcp_json_members(s, j->n, rs, names, 2, sp, NULL) || !sp[0].end || s[sp[0].start] != '[')
        return;
    ts = sp[0].start;
    te = sp[0].end;
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
    if (sp[1].end && s[sp[1].start] == '"')
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
/* The members of a message the rewriter looks at, found in one pass. */
enum { M_METHOD, M_ID, M_RESULT, M_PARAMS, M_COUNT };
static const char *const msg_names[M_COUNT] = {"method", "id", "result", "params"};

/* One message object from the server, its members in SP. */
static void server_object(job *j, const mcp_json_span *sp)
{
    const char *s = j->s;
    mcp_rewriter *rw = j->rw;
    pending *p;
    char *id;

    if (rw->npend == 0 || sp[M_METHOD].end || !sp[M_ID].end)
        return; /* a request or notification of the server's own */
    if (!(id = id_key(j, sp[M_ID].start, sp[M_ID].end)))
        return;
    p = pend_find(rw, id);
    free(id);
    if (!p)
        return;
    if (sp[M_RESULT].end && s[sp[M_RESULT].start] == '{') {
        if (p->kind == REQ_CALL)
            rewrite_call_result(j, p->tool, sp[M_RESULT].start);
        else if (p->kind == REQ_LIST && rw->read_tool)
            rewrite_list_result(j, sp[M_RESULT].start);
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

/* One message object from the client, its members in SP; BATCH when
 * inside an array. Returns 1 when the message is a read tool call
 * answered into *OUT. */
static int client_object(job *j, const mcp_json_span *sp, int batch, char **out,
                         size_t *outlen)
{
    static const char *const cancel_names[] = {"requestId"};
    static const char *const call_names[] = {"name", "arguments"};
    const char *s = j->s;
    mcp_rewriter *rw = j->rw;
    size_t ms = sp[M_METHOD].start, me = sp[M_METHOD].end;
    size_t is = sp[M_ID].start, ie = sp[M_ID].end;
    size_t ps = sp[M_PARAMS].start, pe = sp[M_PARAMS].end;
    mcp_json_span ap[2];
    char *id, *tool;

    if (!me || s[ms] != '"')
        return 0;
    if (mcp_json_string_is(s + ms, me - ms, "notifications/cancelled")) {
        pending *p;
        if (pe && s[ps] == '{' && mcp_json_members(s, j->n, ps, cancel_names, 1, ap, NULL) == 0 &&
            ap[0].end && (id = id_key(j, ap[0].start, ap[0].end))) {
            if ((p = pend_find(rw, id)))
                pend_drop(rw, p);
            free(id);
        }
        return 0;
    }
    if (!ie)
        return 0; /* another notification */
    if (mcp_json_string_is(s + ms, me - ms, "tools/list")) {
        if (rw->read_tool && (id = id_key(j, is, ie)))
            pend_add(j, id, REQ_LIST, NULL);
        return 0;
    }
    if (!mcp_json_string_is(s + ms, me - ms, "tools/call") || !pe || s[ps] != '{' ||
        mcp_json_members(s, j->n, ps, call_names, 2, ap, NULL) || !ap[0].end ||
        !(tool = dup_string(j, ap[0].start, ap[0].end)))
        return 0;
    if (rw->read_tool && !rw->server_read_tool && !batch && strcmp(tool, MCP_READ_TOOL) == 0) {
        free(tool);
        answer_read(j, is, ie, ap[1].start, ap[1].end, out, outlen);
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
        restore_in_place(j); /* the line passes: as it came */
        mcp_verdict_release(v);
        job_release(j);
        return ENOMEM;
    }
    if (j->ned) {
        al_buf b = {0};
        qsort(j->ed, j->ned, sizeof *j->ed, edit_cmp);
        splice(j, 0, 0, j->n, &b);
        if (al_buf_detach(&b, &v->text, &v->len)) {
            restore_in_place(j);
            job_release(j);
            return ENOMEM;
        }
        v->action = MCP_REPLACE;
    } else {
        restore_in_place(j);
    }
    if (j->note.len)
        al_buf_detach(&j->note, &v->note, NULL);
    job_release(j);
    return 0;
}

/* Notes a line that is not JSON. */
static void malformed(job *j, const char *who, mcp_verdict *v)
{
    size_t first = mcp_json_ws(j->s, j->n, 0);
    size_t k = j->n - first < 40 ? j->n - first : 40;
    al_buf b = {0};
    al_buf_addf(&b, "malformed JSON from the %s (%zu bytes, starting '", who, j->n);
    al_buf_add_printable(&b, j->s + first, k);
    al_buf_adds(&b, "'): passed through unchanged");
    al_buf_detach(&b, &v->note, NULL);
}

/* Hands each message object of the line (the line itself, or the elements
 * of a batch) to FN with its members; notes a line that is not JSON. One
 * pass over an object checks it and finds its members. Returns 1 when FN
 * answered (a lone object only). */
static int each_object(job *j, const char *who, mcp_verdict *v,
                       int (*fn)(job *, const mcp_json_span *, int, char **, size_t *),
                       char **out, size_t *outlen)
{
    const char *s = j->s;
    size_t pos = mcp_json_ws(s, j->n, 0), end = 0;
    mcp_json_span sp[M_COUNT];
    if (pos == j->n)
        return 0; /* an empty line: nothing to say */
    if (s[pos] == '{') {
        if (mcp_json_members(s, j->n, pos, msg_names, M_COUNT, sp, &end) ||
            mcp_json_ws(s, j->n, end) != j->n) {
            malformed(j, who, v);
            return 0;
        }
        return fn(j, sp, 0, out, outlen);
    }
    if (!mcp_json_valid(s, j->n)) {
        malformed(j, who, v);
        return 0;
    }
    if (s[pos] == '[') {
        mcp_json_iter it;
        size_t ks, ke, es, ee;
        mcp_json_iter_begin(&it, s, j->n, pos);
        while (mcp_json_iter_next(&it, &ks, &ke, &es, &ee) == 1)
            if (s[es] == '{' && mcp_json_members(s, j->n, es, msg_names, M_COUNT, sp, NULL) == 0)
                fn(j, sp, 1, NULL, NULL);
    }
    return 0;
}

static int server_fn(job *j, const mcp_json_span *sp, int batch, char **out, size_t *outlen)
{
    (void)batch;
    (void)out;
    (void)outlen;
    server_object(j, sp);
    return 0;
}

int mcp_rewriter_client(mcp_rewriter *rw, const char *line, size_t len, mcp_verdict *v)
{
    job j = {.rw = rw, .s = line, .n = len};
    char *out = NULL;
    size_t outlen = 0;
    memset(v, 0, sizeof *v);
    if (each_object(&j, "client", v, client_object, &out, &outlen)) {
        v->action = MCP_ANSWER;
        v->text = out;
        v->len = outlen;
    }
    return finish(&j, v);
}

int mcp_rewriter_server(mcp_rewriter *rw, char *line, size_t len, mcp_verdict *v)
{
    job j = {.rw = rw, .s = line, .w = line, .n = len};
    memset(v, 0, sizeof *v);
    each_object(&j, "server", v, server_fn, NULL, NULL);
    return finish(&j, v);
}
