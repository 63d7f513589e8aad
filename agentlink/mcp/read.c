/* read.c -- the answers of read_offloaded_result, from the store.
 *
 * The answer is text for a model: a header line naming the path and the
 * lines shown, the lines as "N<TAB>TEXT", and a last line saying how to go
 * on (the exact arguments of the next call) or that the result ends there.
 * Its lines never take more than the budget, so the answer itself never
 * needs offloading; a line longer than the budget is clipped and names the
 * byte_offset call that reads on (minified JSON and base64 are one line).
 * A byte range answers exactly its bytes, the same way framed. A pattern
 * search runs in a child (search.c): mcp_read_begin() returns while it
 * runs, so the relay serves other messages meanwhile. */
#include "agentlink/mcp/mcp.h"

#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "common/buf.h"

/* Room kept outside the budget for the header and the last line. */
#define READ_FRAME 512u
/* The smallest budget of lines, whatever the policy says. */
#define READ_MIN 256u

typedef struct rq {
    const char *path;    /* as the call gave it */
    uint64_t offset;     /* first line, 1-based */
    uint64_t limit;      /* lines (matching lines with a pattern) */
    const char *pattern; /* NULL: every line */
    int bytes;           /* byte_offset or byte_limit given: a byte range */
    uint64_t byte_offset, byte_limit; /* byte_limit 0: as many as fit */
} rq;

/* An answer whose pattern search runs in a child (mcp_read_begin). */
struct mcp_read_op {
    cJSON *args;          /* holds R's strings */
    rq r;
    void *data;           /* the stored text, DLEN bytes */
    size_t dlen, budget;
    al_entry e;
    uint64_t lines;
    char *path;           /* its path under the mount */
    regex_t re;
    mcp_search_job *job;
};

static int answer(common_buf *b, char **text, size_t *tlen, int *is_error, int err)
{
    *is_error = err;
    return common_buf_detach(b, text, tlen);
}

/* An integer argument: absent (DEF; *GIVEN 0), else a whole number >= MIN. */
static int int_arg(const cJSON *args, const char *name, uint64_t def, double min,
                   uint64_t *out, int *given, common_buf *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
    *given = 0;
    if (!v || cJSON_IsNull(v)) {
        *out = def;
        return 0;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble < min || v->valuedouble > 9e15 ||
        floor(v->valuedouble) != v->valuedouble) {
        common_buf_addf(b, MCP_READ_TOOL ": \"%s\" must be a whole number of at least %.0f%s",
                        name, min, strcmp(name, "offset") == 0 ? " (the first line is 1)"
                               : strcmp(name, "byte_offset") == 0 ? " (the first byte is 0)"
                                                                  : "");
        return -1;
    }
    *out = (uint64_t)v->valuedouble;
    *given = 1;
    return 0;
}

/* Refuses arguments whose text cJSON would cut (a NUL: "99\u0000" would
 * search for "99") or not parse at all (a lone surrogate), naming the
 * argument: ARGS is the arguments' JSON text (LEN bytes). Returns 0 when
 * there is none (or ARGS is no object: parse_args says so), else -1 with
 * the message in B. */
static int refuse_escapes(const char *args, size_t len, common_buf *b)
{
    mcp_json_iter it;
    size_t ks, ke, vs, ve;
    char what[96];
    common_buf name = {0};
    int r;
    if (mcp_json_iter_begin(&it, args, len, 0) || it.close != '}')
        return 0;
    while ((r = mcp_json_iter_next(&it, &ks, &ke, &vs, &ve)) == 1) {
        if (mcp_json_escape_flaw(args + ks, ke - ks, what, sizeof what)) {
            common_buf_addf(b, MCP_READ_TOOL ": an argument's name holds %s; the arguments are "
                            "\"path\", \"offset\", \"limit\" and \"pattern\"", what);
            return -1;
        }
        if (mcp_json_escape_flaw(args + vs, ve - vs, what, sizeof what)) {
            if (mcp_json_string_decode(args + ks, ke - ks, &name) == 0)
                common_buf_addc(&name, '\0');
            common_buf_addf(b, MCP_READ_TOOL ": \"%.64s\" holds %s, which no offloaded result's "
                            "path, key or pattern can hold: send the text without it",
                            name.failed || !name.p ? "?" : name.p, what);
            common_buf_release(&name);
            return -1;
        }
    }
    return 0;
}

/* Checks the arguments; on a refusal B holds the message. */
static int parse_args(const cJSON *args, rq *r, common_buf *b)
{
    const cJSON *path = cJSON_GetObjectItemCaseSensitive(args, "path");
    const cJSON *pat = cJSON_GetObjectItemCaseSensitive(args, "pattern");
    int g[4];
    if (!cJSON_IsObject(args) || !cJSON_IsString(path) || !path->valuestring[0]) {
        common_buf_adds(b, MCP_READ_TOOL " needs \"path\": the path the offloaded result's "
                        "pointer names (or its bare key), as a string");
        return -1;
    }
    r->path = path->valuestring;
    if (int_arg(args, "offset", 1, 1, &r->offset, &g[0], b) ||
        int_arg(args, "limit", MCP_READ_LIMIT, 1, &r->limit, &g[1], b) ||
        int_arg(args, "byte_offset", 0, 0, &r->byte_offset, &g[2], b) ||
        int_arg(args, "byte_limit", 0, 1, &r->byte_limit, &g[3], b))
        return -1;
    r->bytes = g[2] || g[3];
    if (r->bytes && (g[0] || g[1] || (pat && !cJSON_IsNull(pat)))) {
        common_buf_adds(b, MCP_READ_TOOL ": give either \"byte_offset\"/\"byte_limit\" (a byte "
                        "range) or \"offset\"/\"limit\"/\"pattern\" (lines), not both");
        return -1;
    }
    if (pat && !cJSON_IsNull(pat)) {
        if (!cJSON_IsString(pat)) {
            common_buf_adds(b, MCP_READ_TOOL ": \"pattern\" must be a string (a POSIX extended "
                            "regular expression)");
            return -1;
        }
        r->pattern = pat->valuestring[0] ? pat->valuestring : NULL;
    }
    return 0;
}

/* Says why KEY cannot be read (RC from al_store_get; E its entry). */
static void say_unreadable(common_buf *b, al_store *h, const char *path, int rc, const al_entry *e)
{
    char when[40];
    if (rc == AL_EEVICTED) {
        al_time_format(e->gone_ns, when, sizeof when);
        common_buf_addf(b, "%s is no longer available: it was %s at %s%s. Its content is gone; "
                        "run the tool that produced it again to get the result anew.",
                        path, e->gone_reason == AL_REASON_REMOVED ? "removed" : "evicted", when,
                        e->gone_reason == AL_REASON_REMOVED
                        ? " (agentlink rm or drop-referenced)"
                        : " to keep the store under its size bound (max_total_bytes)");
    } else if (rc == AL_ENOSTORE) { /* removed, or never made: every path fails */
        common_buf_addf(b, "Cannot read %s: there is no store at %s (it was removed, or the proxy "
                        "was started with another --store), so no offloaded result can be read. "
                        "Run the tool that produced it again to get the result anew.", path,
                        al_store_dir(h));
    } else if (rc == AL_ENOTFOUND) {
        common_buf_addf(b, "No offloaded result at %s: nothing was ever stored under that name "
                        "(namespace '%s'). Use the exact path the pointer text gave.", path,
                        al_store_namespace(h));
    } else if (rc == AL_EUNREACHABLE) { /* unknown: not "evicted", not "never written" */
        common_buf_addf(b, "Cannot read %s now: it is not in this host's store, and the store's "
                        "remote could not answer (%s). The result may still exist: try again "
                        "later; do not run the tool again for this reason alone.", path,
                        al_store_remote_message(h));
    } else {
        common_buf_addf(b, "Cannot read %s: %s.", path, al_strerror(rc));
    }
}

static size_t utf8_clip(const char *s, size_t n, size_t max)
{
    /* Back off continuation bytes so a character is never split. */
    size_t k = n < max ? n : max;
    while (k > 0 && k < n && ((unsigned char)s[k] & 0xc0) == 0x80)
        k--;
    return k;
}

/* The header line: what the answer shows. */
static void say_header(common_buf *b, const rq *r, const mcp_search *s, const char *path,
                       uint64_t shown, uint64_t first, uint64_t last, uint64_t total,
                       size_t len)
{
    if (s && shown)
        common_buf_addf(b, "%s: %" PRIu64 " line%s matching /%s/ from line %" PRIu64
                        " (lines %" PRIu64 "-%" PRIu64 " of %" PRIu64 ")\n", path, shown,
                        shown == 1 ? "" : "s", r->pattern, r->offset, first, last, total);
    else if (s && s->stopped && s->searched < r->offset) /* not even the first line */
        common_buf_addf(b, "%s: no line matching /%s/ found: the search stopped in line %" PRIu64
                        ", the first it tried (of %" PRIu64 ")\n", path, r->pattern, r->offset,
                        total);
    else if (s && s->stopped)
        common_buf_addf(b, "%s: no line matching /%s/ in lines %" PRIu64 "-%" PRIu64 " (of %"
                        PRIu64 ")\n", path, r->pattern, r->offset, s->searched, total);
    else if (s)
        common_buf_addf(b, "%s: no line matching /%s/ from line %" PRIu64 " to its end (%" PRIu64
                        " lines)\n", path, r->pattern, r->offset, total);
    else if (shown)
        common_buf_addf(b, "%s: lines %" PRIu64 "-%" PRIu64 " of %" PRIu64 " (%zu bytes)\n", path,
                        first, last, total, len);
    else
        common_buf_addf(b, "%s: has %" PRIu64 " line%s, none from line %" PRIu64 "\n", path,
                        total, total == 1 ? "" : "s", r->offset);
}

/* Says that the stored text is not the whole result (E was cut when
 * stored): its line numbers and a search cover the head and tail kept. */
static void say_cut(common_buf *b, const al_entry *e, int searched)
{
    if (!e->truncated)
        return;
    common_buf_addf(b, "[this result was cut when stored: of its %" PRIu64 " bytes, the head and "
                    "tail kept are %" PRIu64 "; one line \"[... offloadfs: N bytes cut here ...]\" "
                    "replaces the middle, which is gone. Line numbers count what was kept%s]\n",
                    e->original_size, e->size, searched ? ", and only that was searched" : "");
}

/* The arguments of a call that reads LIMIT bytes from byte OFFSET, as JSON. */
static void say_bytes_call(common_buf *b, const char *path, uint64_t offset, uint64_t limit)
{
    common_buf_adds(b, "{\"path\": ");
    mcp_json_string_encode(b, path, strlen(path));
    common_buf_addf(b, ", \"byte_offset\": %" PRIu64 ", \"byte_limit\": %" PRIu64 "}", offset,
                    limit);
}

/* The arguments of a call that goes on from line OFFSET, as JSON. */
static void say_call(common_buf *b, const rq *r, const char *path, uint64_t offset)
{
    common_buf_adds(b, "{\"path\": ");
    mcp_json_string_encode(b, path, strlen(path));
    common_buf_addf(b, ", \"offset\": %" PRIu64 ", \"limit\": %" PRIu64, offset, r->limit);
    if (r->pattern) {
        common_buf_adds(b, ", \"pattern\": ");
        mcp_json_string_encode(b, r->pattern, strlen(r->pattern));
    }
    common_buf_adds(b, "}");
}

/* The last line: how to go on. LAST is the last line shown (0: none); MORE
 * says the limit or the budget cut the answer short. */
static void say_tail(common_buf *b, const rq *r, const mcp_search *s, const char *path,
                     uint64_t last, int more)
{
    if (more && last) {
        common_buf_addf(b, "[more %s: call " MCP_READ_TOOL " with ",
                        s ? "matching lines may follow" : "lines follow");
        say_call(b, r, path, last + 1);
        common_buf_adds(b, " to continue]");
    } else if (s && s->stopped) {
        uint64_t at = s->searched + 1;
        common_buf_addf(b, "[the search stopped after %.1f s, in line %" PRIu64 ": no line from "
                        "there on was searched. To go on, call " MCP_READ_TOOL " with ",
                        s->seconds, at);
        say_call(b, r, path, at);
        common_buf_addf(b, " (offset %" PRIu64 " skips that line), or run grep -nE on %s]", at + 1,
                        path);
    } else if (last) {
        common_buf_adds(b, "[end of the result]");
    }
}

/* Writes the lines of DATA (LEN bytes) the request asks for into B: every
 * line from the offset, or with a pattern the lines S found; E says whether
 * the stored text was cut. */
static int emit_lines(common_buf *b, const char *data, size_t len, const rq *r,
                      const mcp_search *s, size_t budget, const char *path, uint64_t total,
                      const al_entry *e)
{
    uint64_t lineno = 0, shown = 0, first = 0, last = 0, k = 0;
    size_t used = 0, pos = 0;
    int more = 0;
    common_buf body = {0};

    while (pos < len) {
        const char *nl = memchr(data + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - data) : len, ll = end - pos;
        const char *line = data + pos;
        lineno++;
        pos = nl ? end + 1 : len;
        if (lineno < r->offset)
            continue;
        if (s && (k == s->n || lineno > s->searched))
            break; /* nothing more was found, or searched */
        if (s && s->line[k] != lineno)
            continue;
        if (shown == r->limit) {
            more = 1;
            break;
        }
        char num[32];
        int nn = snprintf(num, sizeof num, "%" PRIu64 "\t", lineno);
        size_t need = (size_t)nn + ll + 1;
        if (shown > 0 && used + need > budget) {
            more = 1;
            break;
        }
        k++;
        common_buf_add(&body, num, (size_t)nn);
        if (used + need > budget) { /* the first line alone is too long: clip it */
            size_t room = budget > used + (size_t)nn + 1 ? budget - used - (size_t)nn - 1 : 0;
            size_t c = utf8_clip(line, ll, room);
            common_buf_add(&body, line, c);
            common_buf_addf(&body, "\n[line %" PRIu64 " clipped: %zu of its %zu bytes shown; the "
                            "rest: call " MCP_READ_TOOL " with ", lineno, c, ll);
            say_bytes_call(&body, path, (uint64_t)(line - data) + c, ll - c);
            common_buf_adds(&body, "]\n");
            used = budget;
        } else {
            common_buf_add(&body, line, ll);
            common_buf_addc(&body, '\n');
            used += need;
        }
        if (!shown)
            first = lineno;
        last = lineno;
        shown++;
    }
    if (!s && !more && pos < len)
        more = 1;
    say_header(b, r, s, path, shown, first, last, total, len);
    say_cut(b, e, s != NULL);
    common_buf_add(b, body.p, body.len);
    common_buf_release(&body);
    say_tail(b, r, s, path, last, more);
    return b->failed ? ENOMEM : 0;
}

/* Bytes among the N at S that are not part of a valid UTF-8 sequence (each
 * shown as U+FFFD by the JSON encoder). */
static size_t invalid_utf8(const char *s, size_t n)
{
    size_t bad = 0, i = 0;
    while (i < n) {
        size_t q = (unsigned char)s[i] < 0x80 ? 1 : store_utf8_len(s + i, n - i);
        if (q == 0) {
            bad++;
            q = 1;
        }
        i += q;
    }
    return bad;
}

/* Writes the byte range the request asks for into B: a header line, the
 * bytes exactly, and a last line saying how to go on. At most BUDGET bytes
 * are shown; a range cut there ends at a character boundary (when one is
 * near), and the next call starts where it ends. */
static int emit_bytes(common_buf *b, const char *data, size_t len, const rq *r, size_t budget,
                      const char *path, const al_entry *e)
{
    uint64_t a = r->byte_offset, want, show, end;
    size_t bad;
    if (a >= len) {
        common_buf_addf(b, "%s: has %zu bytes: byte_offset %" PRIu64 " is past its end\n", path,
                        len, a);
        common_buf_adds(b, "[end of the result]");
        return b->failed ? ENOMEM : 0;
    }
    want = len - a;
    if (r->byte_limit && r->byte_limit < want)
        want = r->byte_limit;
    show = want;
    if (show > budget) {
        show = utf8_clip(data + a, (size_t)want, budget);
        if (show + 4 <= budget) /* no boundary near: cut anyway, U+FFFD said */
            show = budget;
    }
    end = a + show;
    bad = invalid_utf8(data + a, (size_t)show);
    common_buf_addf(b, "%s: bytes %" PRIu64 "-%" PRIu64 " of %zu (byte_offset %" PRIu64 ", %" PRIu64
                    " bytes)", path, a, end, len, a, show);
    if (bad)
        common_buf_addf(b, "; %zu byte%s of this range %s not valid UTF-8 (a character cut at "
                        "its edge, or binary data), shown as U+FFFD", bad, bad == 1 ? "" : "s",
                        bad == 1 ? "is" : "are");
    common_buf_addc(b, '\n');
    common_buf_add(b, data + a, (size_t)show);
    common_buf_addc(b, '\n');
    if (show < want) {
        common_buf_adds(b, "[more bytes of the range follow: call " MCP_READ_TOOL " with ");
        say_bytes_call(b, path, end, r->byte_limit ? r->byte_limit - show : budget);
        common_buf_adds(b, " to continue]");
    } else if (end < len) {
        common_buf_addf(b, "[the range ends here; the result goes on for %" PRIu64 " bytes: call "
                        MCP_READ_TOOL " with ", (uint64_t)len - end);
        say_bytes_call(b, path, end, r->byte_limit ? r->byte_limit : budget);
        common_buf_adds(b, " to read on]");
    } else {
        common_buf_adds(b, e->truncated ? "[end of the stored result, which was cut when stored]"
                                    : "[end of the result]");
    }
    return b->failed ? ENOMEM : 0;
}

void mcp_read_op_free(mcp_read_op *op)
{
    if (!op)
        return;
    if (op->job) {
        mcp_search_cancel(op->job);
        regfree(&op->re);
    }
    al_free(op->data);
    al_free(op->path);
    cJSON_Delete(op->args);
    free(op);
}

int mcp_read_op_fd(const mcp_read_op *op)
{
    return mcp_search_job_fd(op->job);
}

double mcp_read_op_deadline(const mcp_read_op *op)
{
    return mcp_search_job_deadline(op->job);
}

int mcp_read_op_finish(mcp_read_op *op, char **text, size_t *tlen, int *is_error)
{
    mcp_search found;
    common_buf b = {0};
    int rc = mcp_search_finish(op->job, 1, &found);
    op->job = NULL;
    regfree(&op->re);
    if (rc == ENOMEM)
        b.failed = 1;
    else
        emit_lines(&b, op->data, op->dlen, &op->r, &found, op->budget, op->path, op->lines,
                   &op->e);
    mcp_search_release(&found);
    mcp_read_op_free(op);
    return answer(&b, text, tlen, is_error, 0);
}

/* Starts the pattern search of OP, for as many matches as an answer within
 * its budget can show and one more. On failure B says why. */
static int search_start(common_buf *b, mcp_read_op *op)
{
    uint64_t max = op->budget / 3 + 1; /* a shown line takes 3 bytes at least */
    int rc = mcp_search_start(op->data, op->dlen, &op->re, op->r.offset,
                              (op->r.limit < max ? op->r.limit : max) + 1, MCP_SEARCH_SECONDS,
                              &op->job);
    if (rc == ENOMEM)
        b->failed = 1;
    else if (rc)
        common_buf_addf(b, "Cannot search now: %s.", strerror(rc));
    return rc;
}

/* Compiles the request's pattern into OP->re; on a refusal B says why. */
static int compile(common_buf *b, mcp_read_op *op)
{
    const char *refusal = mcp_pattern_refusal(op->r.pattern);
    int c;
    if (refusal) {
        common_buf_addf(b, MCP_READ_TOOL ": \"pattern\" %s", refusal);
        return -1;
    }
    c = regcomp(&op->re, op->r.pattern, REG_EXTENDED | REG_NOSUB);
    if (c) {
        char why[256];
        regerror(c, &op->re, why, sizeof why);
        common_buf_addf(b, MCP_READ_TOOL ": \"pattern\" is not a POSIX extended regular "
                        "expression: %s", why);
        return -1;
    }
    return 0;
}

/* Reads the entry the request names into OP; on failure B says why. */
static int fetch(common_buf *b, al_store *h, mcp_read_op *op)
{
    char *key = NULL;
    al_textinfo ti;
    int rc = al_store_key_of(h, op->r.path, &key);
    if (rc == AL_ENOTMOUNT)
        common_buf_addf(b, "%s is not an offloaded result's path: expected %s/KEY or a bare key.",
                        op->r.path, al_store_mount(h));
    else if (rc == ENOMEM)
        b->failed = 1;
    else if (rc)
        common_buf_addf(b, "%s is not an offloaded result's path: its key %s.", op->r.path,
                        al_strerror(rc));
    if (rc)
        return rc;
    rc = al_store_get(h, key, &op->data, &op->dlen, &op->e);
    if (rc) {
        if (rc == ENOMEM)
            b->failed = 1;
        say_unreadable(b, h, op->r.path, rc, &op->e);
    } else if ((rc = al_store_path_of(h, key, &op->path))) {
        b->failed = 1;
    } else {
        al_text_info(op->data, op->dlen, &ti);
        op->lines = ti.lines;
    }
    al_free(key);
    return rc;
}

int mcp_read_begin(al_store *h, const char *args, size_t len, size_t budget, mcp_read_op **out,
                   char **text, size_t *tlen, int *is_error)
{
    mcp_read_op *op = calloc(1, sizeof *op);
    common_buf b = {0};
    int err = 1, have_re = 0;

    *out = NULL;
    *text = NULL;
    if (!op)
        return ENOMEM;
    op->budget = budget > READ_FRAME + READ_MIN ? budget - READ_FRAME : READ_MIN;
    if (args && refuse_escapes(args, len, &b))
        goto done;
    op->args = args ? cJSON_ParseWithLength(args, len) : NULL;
    if (parse_args(op->args, &op->r, &b))
        goto done;
    if (!h) {
        common_buf_addf(&b, "Cannot read %s: the proxy has no store open.", op->r.path);
        goto done;
    }
    if (op->r.pattern && compile(&b, op))
        goto done;
    have_re = op->r.pattern != NULL;
    if (fetch(&b, h, op))
        goto done;
    if (have_re) {
        if (search_start(&b, op))
            goto done;
        have_re = 0; /* the op holds it now */
        *out = op;
        common_buf_release(&b);
        return 0;
    }
    if (op->r.bytes)
        emit_bytes(&b, op->data, op->dlen, &op->r, op->budget, op->path, &op->e);
    else
        emit_lines(&b, op->data, op->dlen, &op->r, NULL, op->budget, op->path, op->lines,
                   &op->e);
    err = 0;
done:
    if (have_re)
        regfree(&op->re);
    mcp_read_op_free(op);
    return answer(&b, text, tlen, is_error, err);
}

/* ---- the tool's definition, for tools/list -------------------------------- */
char *mcp_read_tool_def(const al_store *h)
{
    const char *mount = h ? al_store_mount(h) : "/large_tool_results";
    common_buf b = {0}, d = {0};
    char *out = NULL;
    common_buf_addf(&d, "Read a tool result that was too large for the conversation and was "
                    "stored under %s (the text that replaced it names its path). Returns "
                    "numbered lines: page with offset and limit, or keep only the lines "
                    "matching pattern (a POSIX extended regular expression); or exact bytes "
                    "with byte_offset and byte_limit (for a line too long for one answer, such "
                    "as minified JSON or base64). A result that "
                    "was evicted must be produced again by running its tool again.", mount);
    common_buf_adds(&b, "{\"name\":\"" MCP_READ_TOOL "\",\"description\":");
    mcp_json_string_encode(&b, d.p ? d.p : "", d.len);
    common_buf_adds(&b, ",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
                    "\"path\":{\"type\":\"string\",\"description\":\"The path the pointer "
                    "names (");
    common_buf_add_printable(&b, mount, strlen(mount));
    common_buf_adds(&b, "/KEY), or the bare key.\"},"
                "\"offset\":{\"type\":\"integer\",\"minimum\":1,\"description\":"
                "\"First line to read, 1-based (default 1).\"},"
                "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"description\":"
                "\"How many lines to return (default 2000); with pattern, how many "
                "matching lines.\"},"
                "\"pattern\":{\"type\":\"string\",\"description\":\"Optional POSIX "
                "extended regular expression: only the lines matching it are "
                "returned, with their line numbers.\"},"
                "\"byte_offset\":{\"type\":\"integer\",\"minimum\":0,\"description\":"
                "\"Instead of lines: the first byte to read, 0-based. The answer holds "
                "exactly the bytes asked for (invalid UTF-8 shown as U+FFFD, and said so) "
                "and names the call that reads on: a line too long for one answer is read "
                "in pieces this way.\"},"
                "\"byte_limit\":{\"type\":\"integer\",\"minimum\":1,\"description\":"
                "\"With byte_offset: how many bytes to read (default: as many as one "
                "answer holds).\"}},"
                "\"required\":[\"path\"]}}");
    common_buf_release(&d);
    if (common_buf_detach(&b, &out, NULL))
        return NULL;
    return out;
}

int mcp_read_answer(al_store *h, const char *args, size_t len, size_t budget, char **text,
                    size_t *tlen, int *is_error)
{
    mcp_read_op *op;
    int rc = mcp_read_begin(h, args, len, budget, &op, text, tlen, is_error);
    if (rc || !op)
        return rc;
    return mcp_read_op_finish(op, text, tlen, is_error);
}
