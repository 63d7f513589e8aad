/* read.c -- the answers of read_offloaded_result, from the store.
 *
 * The answer is text for a model: a header line naming the path and the
 * lines shown, the lines as "N<TAB>TEXT", and a last line saying how to go
 * on (the exact arguments of the next call) or that the result ends there.
 * Its lines never take more than the budget, so the answer itself never
 * needs offloading; a line longer than the budget is clipped and says how
 * to read the rest of it through the mount. */
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

/* Room kept outside the budget for the header and the last line. */
#define READ_FRAME 512u
/* The smallest budget of lines, whatever the policy says. */
#define READ_MIN 256u

typedef struct rq {
    const char *path;    /* as the call gave it */
    uint64_t offset;     /* first line, 1-based */
    uint64_t limit;      /* lines (matching lines with a pattern) */
    const char *pattern; /* NULL: every line */
} rq;

static int answer(al_buf *b, char **text, size_t *tlen, int *is_error, int err)
{
    *is_error = err;
    return al_buf_detach(b, text, tlen);
}

/* An integer argument: absent (DEF), else a whole number >= 1. */
static int int_arg(const cJSON *args, const char *name, uint64_t def, uint64_t *out,
                   al_buf *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, name);
    if (!v || cJSON_IsNull(v)) {
        *out = def;
        return 0;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 9e15 ||
        floor(v->valuedouble) != v->valuedouble) {
        al_buf_addf(b, MCP_READ_TOOL ": \"%s\" must be a whole number of at least 1%s",
                    name, strcmp(name, "offset") == 0 ? " (the first line is 1)" : "");
        return -1;
    }
    *out = (uint64_t)v->valuedouble;
    return 0;
}

/* Checks the arguments; on a refusal B holds the message. */
static int parse_args(const cJSON *args, rq *r, al_buf *b)
{
    const cJSON *path = cJSON_GetObjectItemCaseSensitive(args, "path");
    const cJSON *pat = cJSON_GetObjectItemCaseSensitive(args, "pattern");
    if (!cJSON_IsObject(args) || !cJSON_IsString(path) || !path->valuestring[0]) {
        al_buf_adds(b, MCP_READ_TOOL " needs \"path\": the path the offloaded result's "
                    "pointer names (or its bare key), as a string");
        return -1;
    }
    r->path = path->valuestring;
    if (int_arg(args, "offset", 1, &r->offset, b) || int_arg(args, "limit", MCP_READ_LIMIT,
                                                             &r->limit, b))
        return -1;
    if (pat && !cJSON_IsNull(pat)) {
        if (!cJSON_IsString(pat)) {
            al_buf_adds(b, MCP_READ_TOOL ": \"pattern\" must be a string (a POSIX extended "
                        "regular expression)");
            return -1;
        }
        r->pattern = pat->valuestring[0] ? pat->valuestring : NULL;
    }
    return 0;
}

/* Says why KEY cannot be read (RC from al_store_get; E its entry). */
static void say_unreadable(al_buf *b, al_store *h, const char *path, int rc, const al_entry *e)
{
    char when[40];
    if (rc == AL_EEVICTED) {
        al_time_format(e->gone_ns, when, sizeof when);
        al_buf_addf(b, "%s is no longer available: it was %s at %s%s. Its content is gone; "
                    "run the tool that produced it again to get the result anew.",
                    path, e->gone_reason == AL_REASON_REMOVED ? "removed" : "evicted", when,
                    e->gone_reason == AL_REASON_REMOVED
                        ? " (agentlink rm or drop-referenced)"
                        : " to keep the store under its size bound (max_total_bytes)");
    } else if (rc == AL_ENOSTORE) { /* removed, or never made: every path fails */
        al_buf_addf(b, "Cannot read %s: there is no store at %s (it was removed, or the proxy "
                    "was started with another --store), so no offloaded result can be read. "
                    "Run the tool that produced it again to get the result anew.", path,
                    al_store_dir(h));
    } else if (rc == AL_ENOTFOUND) {
        al_buf_addf(b, "No offloaded result at %s: nothing was ever stored under that name "
                    "(namespace '%s'). Use the exact path the pointer text gave.", path,
                    al_store_namespace(h));
    } else {
        al_buf_addf(b, "Cannot read %s: %s.", path, al_strerror(rc));
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
static void say_header(al_buf *b, const rq *r, const mcp_search *s, const char *path,
                       uint64_t shown, uint64_t first, uint64_t last, uint64_t total,
                       size_t len)
{
    if (s && shown)
        al_buf_addf(b, "%s: %" PRIu64 " line%s matching /%s/ from line %" PRIu64
                    " (lines %" PRIu64 "-%" PRIu64 " of %" PRIu64 ")\n", path, shown,
                    shown == 1 ? "" : "s", r->pattern, r->offset, first, last, total);
    else if (s && s->stopped && s->searched < r->offset) /* not even the first line */
        al_buf_addf(b, "%s: no line matching /%s/ found: the search stopped in line %" PRIu64
                    ", the first it tried (of %" PRIu64 ")\n", path, r->pattern, r->offset,
                    total);
    else if (s && s->stopped)
        al_buf_addf(b, "%s: no line matching /%s/ in lines %" PRIu64 "-%" PRIu64 " (of %"
                    PRIu64 ")\n", path, r->pattern, r->offset, s->searched, total);
    else if (s)
        al_buf_addf(b, "%s: no line matching /%s/ from line %" PRIu64 " to its end (%" PRIu64
                    " lines)\n", path, r->pattern, r->offset, total);
    else if (shown)
        al_buf_addf(b, "%s: lines %" PRIu64 "-%" PRIu64 " of %" PRIu64 " (%zu bytes)\n", path,
                    first, last, total, len);
    else
        al_buf_addf(b, "%s: has %" PRIu64 " line%s, none from line %" PRIu64 "\n", path,
                    total, total == 1 ? "" : "s", r->offset);
}

/* Says that the stored text is not the whole result (E was cut when
 * stored): its line numbers and a search cover the head and tail kept. */
static void say_cut(al_buf *b, const al_entry *e, int searched)
{
    if (!e->truncated)
        return;
    al_buf_addf(b, "[this result was cut when stored: of its %" PRIu64 " bytes, the head and "
                "tail kept are %" PRIu64 "; one line \"[... offloadfs: N bytes cut here ...]\" "
                "replaces the middle, which is gone. Line numbers count what was kept%s]\n",
                e->original_size, e->size, searched ? ", and only that was searched" : "");
}

/* The arguments of a call that goes on from line OFFSET, as JSON. */
static void say_call(al_buf *b, const rq *r, const char *path, uint64_t offset)
{
    al_buf_adds(b, "{\"path\": ");
    mcp_json_string_encode(b, path, strlen(path));
    al_buf_addf(b, ", \"offset\": %" PRIu64 ", \"limit\": %" PRIu64, offset, r->limit);
    if (r->pattern) {
        al_buf_adds(b, ", \"pattern\": ");
        mcp_json_string_encode(b, r->pattern, strlen(r->pattern));
    }
    al_buf_adds(b, "}");
}

/* The last line: how to go on. LAST is the last line shown (0: none); MORE
 * says the limit or the budget cut the answer short. */
static void say_tail(al_buf *b, const rq *r, const mcp_search *s, const char *path,
                     uint64_t last, int more)
{
    if (more && last) {
        al_buf_addf(b, "[more %s: call " MCP_READ_TOOL " with ",
                    s ? "matching lines may follow" : "lines follow");
        say_call(b, r, path, last + 1);
        al_buf_adds(b, " to continue]");
    } else if (s && s->stopped) {
        uint64_t at = s->searched + 1;
        al_buf_addf(b, "[the search stopped after %.1f s, in line %" PRIu64 ": no line from "
                    "there on was searched. To go on, call " MCP_READ_TOOL " with ",
                    s->seconds, at);
        say_call(b, r, path, at);
        al_buf_addf(b, " (offset %" PRIu64 " skips that line), or run grep -nE on %s]", at + 1,
                    path);
    } else if (last) {
        al_buf_adds(b, "[end of the result]");
    }
}

/* Writes the lines of DATA (LEN bytes) the request asks for into B: every
 * line from the offset, or with a pattern the lines S found; E says whether
 * the stored text was cut. */
static int emit_lines(al_buf *b, const char *data, size_t len, const rq *r,
                      const mcp_search *s, size_t budget, const char *path, uint64_t total,
                      const al_entry *e)
{
    uint64_t lineno = 0, shown = 0, first = 0, last = 0, k = 0;
    size_t used = 0, pos = 0;
    int more = 0;
    al_buf body = {0};

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
        al_buf_add(&body, num, (size_t)nn);
        if (used + need > budget) { /* the first line alone is too long: clip it */
            size_t room = budget > used + (size_t)nn + 1 ? budget - used - (size_t)nn - 1 : 0;
            size_t c = utf8_clip(line, ll, room);
            al_buf_add(&body, line, c);
            al_buf_addf(&body, "\n[line %" PRIu64 " clipped: %zu of its %zu bytes shown; "
                        "the rest: tail -c +%zu of the line, e.g. sed -n '%" PRIu64
                        "p' %s | tail -c +%zu]\n", lineno, c, ll, c + 1, lineno, path, c + 1);
            used = budget;
        } else {
            al_buf_add(&body, line, ll);
            al_buf_addc(&body, '\n');
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
    al_buf_add(b, body.p, body.len);
    al_buf_release(&body);
    say_tail(b, r, s, path, last, more);
    return b->failed ? ENOMEM : 0;
}

/* Runs the pattern search for the request, for as many matches as an
 * answer within BUDGET can show and one more. On failure B says why. */
static int search(al_buf *b, const char *data, size_t len, const rq *r, const regex_t *re,
                  size_t budget, mcp_search *found)
{
    uint64_t max = budget / 3 + 1; /* a shown line takes 3 bytes at least */
    int rc = mcp_search_run(data, len, re, r->offset, (r->limit < max ? r->limit : max) + 1,
                            MCP_SEARCH_SECONDS, found);
    if (rc == ENOMEM)
        b->failed = 1;
    else if (rc)
        al_buf_addf(b, "Cannot search now: %s.", strerror(rc));
    return rc;
}

int mcp_read_answer(al_store *h, const char *args, size_t len, size_t budget, char **text,
                    size_t *tlen, int *is_error)
{
    cJSON *j = NULL;
    rq r = {0};
    al_buf b = {0};
    char *key = NULL;
    void *data = NULL;
    size_t dlen = 0;
    al_entry e;
    al_textinfo ti;
    regex_t re;
    const char *refusal;
    mcp_search found = {0};
    int have_re = 0, rc, err = 1;

    *text = NULL;
    budget = budget > READ_FRAME + READ_MIN ? budget - READ_FRAME : READ_MIN;
    j = args ? cJSON_ParseWithLength(args, len) : NULL;
    if (parse_args(j, &r, &b))
        goto done;
    if (!h) {
        al_buf_addf(&b, "Cannot read %s: the proxy has no store open.", r.path);
        goto done;
    }
    if (r.pattern && (refusal = mcp_pattern_refusal(r.pattern))) {
        al_buf_addf(&b, MCP_READ_TOOL ": \"pattern\" %s", refusal);
        goto done;
    }
    if (r.pattern) {
        int c = regcomp(&re, r.pattern, REG_EXTENDED | REG_NOSUB);
        if (c) {
            char why[256];
            regerror(c, &re, why, sizeof why);
            al_buf_addf(&b, MCP_READ_TOOL ": \"pattern\" is not a POSIX extended regular "
                        "expression: %s", why);
            goto done;
        }
        have_re = 1;
    }
    rc = al_store_key_of(h, r.path, &key);
    if (rc == AL_ENOTMOUNT) {
        al_buf_addf(&b, "%s is not an offloaded result's path: expected %s/KEY or a bare key.",
                    r.path, al_store_mount(h));
        goto done;
    }
    if (rc == ENOMEM) {
        b.failed = 1;
        goto done;
    }
    if (rc) {
        al_buf_addf(&b, "%s is not an offloaded result's path: its key %s.", r.path,
                    al_strerror(rc));
        goto done;
    }
    rc = al_store_get(h, key, &data, &dlen, &e);
    if (rc) {
        if (rc == ENOMEM)
            b.failed = 1;
        say_unreadable(&b, h, r.path, rc, &e);
        goto done;
    }
    al_text_info(data, dlen, &ti);
    {
        char *path = NULL;
        if (al_store_path_of(h, key, &path)) {
            b.failed = 1;
            goto done;
        }
        if (have_re && (rc = search(&b, data, dlen, &r, &re, budget, &found))) {
            al_free(path);
            goto done;
        }
        emit_lines(&b, data, dlen, &r, have_re ? &found : NULL, budget, path, ti.lines, &e);
        mcp_search_release(&found);
        al_free(path);
    }
    err = 0;
done:
    if (have_re)
        regfree(&re);
    al_free(data);
    al_free(key);
    cJSON_Delete(j);
    return answer(&b, text, tlen, is_error, err);
}
