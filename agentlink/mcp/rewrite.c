/* rewrite.c -- the proxy's rewriter: one message in, a verdict out.
 *
 * It remembers the id (by value) and tool of each tools/call and tools/list
 * the client sends, and rewrites only the answers to those; everything else
 * is MCP_PASS, which the relay sends on byte for byte. A rewrite is a list
 * of edits (byte ranges of the message and their new text) applied in one
 * splice, so every byte outside the edited values is the server's own. */
#include "agentlink/mcp/job.h"
#include "common/array.h"
#include "common/buf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* ---- ids and pending requests -------------------------------------------- */
/* The id at [vs, ve) by value, or NULL (null, object, array: not tracked). */
static char *id_key(job *j, size_t vs, size_t ve)
{
    const char *s = j->s;
    common_buf b = {0};
    char *out = NULL;
    if (s[vs] == '"') {
        common_buf_addc(&b, 's');
        if (mcp_json_string_decode(s + vs, ve - vs, &b))
            b.failed = 1;
    } else if (s[vs] == '-' || (s[vs] >= '0' && s[vs] <= '9')) {
        /* Integers compare as written (any length: no rounding); others by
         * their double value, so 1.0 and 1 and 1e0 meet. */
        size_t k = vs + (s[vs] == '-');
        while (k < ve && s[k] >= '0' && s[k] <= '9')
            k++;
        common_buf_addc(&b, 'n');
        if (k == ve) {
            common_buf_add(&b, s + vs, ve - vs);
        } else {
            char tmp[64];
            size_t len = ve - vs < sizeof tmp - 1 ? ve - vs : sizeof tmp - 1;
            memcpy(tmp, s + vs, len);
            tmp[len] = '\0';
            double d = strtod(tmp, NULL);
            /* The range first: a cast out of it is undefined (fuzz_mcp). */
            if (d > -9e15 && d < 9e15 && d == (double)(long long)d)
                common_buf_addf(&b, "%lld", (long long)d);
            else
                common_buf_addf(&b, "%.17g", d);
        }
    } else {
        return NULL;
    }
    if (common_buf_detach(&b, &out, NULL))
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
    rw->nother -= p->kind == REQ_OTHER;
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
    pending *np = common_array_grow(rw->pend, rw->npend, &rw->cappend, sizeof *np, 16);
    if (!np) {
        free(id);
        free(tool);
        j->nomem = 1;
        return;
    }
    rw->pend = np;
    rw->pend[rw->npend++] = (pending){id, kind, tool};
    rw->nother += kind == REQ_OTHER;
}

size_t mcp_rewriter_pending(const mcp_rewriter *rw)
{
    return rw ? rw->npend - rw->nother : 0;
}

size_t mcp_rewriter_awaited(const mcp_rewriter *rw)
{
    return rw ? rw->npend : 0;
}

/* ---- the rewriter's life ------------------------------------------------- */
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
    if (rc == 0 && !(rw->tool_def = mcp_read_tool_def(h)))
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
    for (size_t i = 0; i < rw->ntasks; i++) {
        free(rw->tasks[i].task);
        free(rw->tasks[i].tool);
    }
    free(rw->tasks);
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
    mcp_later_free(v->later);
    memset(v, 0, sizeof *v);
}

/* The tool object at [es, ee) of a tools/list: its outputSchema made to
 * admit the object that stands for a stored structuredContent (mcp.h),
 * unless the policy never offloads the tool's results. */
static void relax_schema(job *j, size_t es)
{
    static const char *const names[] = {"name", "outputSchema"};
    const char *s = j->s;
    mcp_json_span sp[2];
    common_buf b = {0};
    char *name, *text = NULL;
    size_t len = 0;
    int kind = 0;
    if (mcp_json_members(s, j->n, es, names, 2, sp, NULL) || !sp[1].end || s[sp[1].start] != '{')
        return;
    name = sp[0].end ? mcp_job_dup_string(j, sp[0].start, sp[0].end) : NULL;
    al_policy_decide(j->rw->pol, name, "", 0, &kind, NULL);
    free(name);
    if (kind == AL_OFFLOAD_NEVER)
        return;
    if (mcp_sc_schema(&b, s, j->n, sp[1].start, sp[1].end) == 0 &&
        common_buf_detach(&b, &text, &len) == 0)
        mcp_job_edit(j, sp[1].start, sp[1].end, text, len);
    else if (b.failed)
        j->nomem = 1;
    common_buf_release(&b);
}

/* The result object at RS of a tools/list: output schemas relaxed, and the
 * read tool added to its last page (when on). */
static void rewrite_list_result(job *j, size_t rs)
{
    static const char *const names[] = {"tools", "nextCursor"};
    const char *s = j->s;
    mcp_rewriter *rw = j->rw;
    size_t ts, te, a, b, ks, ke, es, ee;
    mcp_json_span sp[2];
    mcp_json_iter it;
    common_buf t = {0};
    char *text = NULL;
    size_t len = 0;
    int empty;

    if (mcp_json_members(s, j->n, rs, names, 2, sp, NULL) || !sp[0].end || s[sp[0].start] != '[')
        return;
    ts = sp[0].start;
    te = sp[0].end;
    mcp_json_iter_begin(&it, s, j->n, ts);
    empty = it.done;
    while (mcp_json_iter_next(&it, &ks, &ke, &es, &ee) == 1) {
        if (s[es] != '{')
            continue;
        relax_schema(j, es);
        if (mcp_json_member(s, j->n, es, "name", &a, &b) == 0 &&
            mcp_json_string_is(s + a, b - a, MCP_READ_TOOL)) {
            if (!rw->server_read_tool && rw->read_tool)
                mcp_job_note(j, "the server has a tool named '" MCP_READ_TOOL "' itself: its "
                         "calls go to the server, the proxy does not answer them");
            rw->server_read_tool = 1;
        }
    }
    if (!rw->read_tool || rw->server_read_tool || (sp[1].end && s[sp[1].start] == '"'))
        return; /* no read tool to add, or not the last page */
    if (empty) {
        common_buf_addc(&t, '[');
        common_buf_adds(&t, rw->tool_def);
        common_buf_addc(&t, ']');
        if (common_buf_detach(&t, &text, &len) == 0)
            mcp_job_edit(j, ts, te, text, len);
        else
            j->nomem = 1;
        return;
    }
    common_buf_addc(&t, ',');
    common_buf_adds(&t, rw->tool_def);
    if (common_buf_detach(&t, &text, &len) == 0)
        mcp_job_edit(j, te - 1, te - 1, text, len); /* before the closing ']' */
    else
        j->nomem = 1;
}

/* ---- tasks ------------------------------------------------------------------ */
/* Remembers that task TASK (taken) holds the result of TOOL. */
static void task_add(mcp_rewriter *rw, char *task, const char *tool)
{
    char *t = strdup(tool);
    if (!t) {
        free(task);
        return; /* its result will pass unchanged */
    }
    if (!rw->tasks && !(rw->tasks = calloc(MCP_TASKS_KEPT, sizeof *rw->tasks))) {
        free(task);
        free(t);
        return;
    }
    if (rw->ntasks == MCP_TASKS_KEPT) { /* forget the oldest */
        free(rw->tasks[0].task);
        free(rw->tasks[0].tool);
        memmove(rw->tasks, rw->tasks + 1, (MCP_TASKS_KEPT - 1) * sizeof *rw->tasks);
        rw->ntasks--;
    }
    rw->tasks[rw->ntasks++] = (task_tool){task, t};
}

/* The tool whose result the task at [vs, ve) (a taskId token) holds, as a
 * copy (yours), or NULL: no tools/call of this session created that task
 * (or it is older than the last MCP_TASKS_KEPT), or no memory (NOMEM). */
static char *task_tool_of(job *j, size_t vs, size_t ve)
{
    mcp_rewriter *rw = j->rw;
    char *id = mcp_job_dup_string(j, vs, ve), *tool = NULL;
    for (size_t i = rw->ntasks; id && i-- > 0;)
        if (strcmp(rw->tasks[i].task, id) == 0) {
            if (!(tool = strdup(rw->tasks[i].tool)))
                j->nomem = 1;
            break;
        }
    free(id);
    return tool;
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
        if (p->kind == REQ_CALL) {
            char *task = NULL;
            mcp_result_rewrite(j, p->tool, sp[M_RESULT].start, &task);
            if (task)
                task_add(rw, task, p->tool);
        } else if (p->kind == REQ_LIST) {
            rewrite_list_result(j, sp[M_RESULT].start);
        }
    }
    pend_drop(rw, p);
}

/* A read tool answer whose search runs. */
struct mcp_later {
    mcp_rewriter *rw;
    mcp_read_op *op;
    char *id; /* the call's id, as JSON */
    size_t idlen;
};

/* The JSON-RPC answer to call ID (IDLEN bytes of JSON) with the read tool's
 * TEXT into *OUT (yours). Returns 0 or ENOMEM. */
static int read_message(const char *id, size_t idlen, const char *text, size_t tlen,
                        int is_error, char **out, size_t *outlen)
{
    common_buf b = {0};
    common_buf_adds(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
    common_buf_add(&b, id, idlen);
    common_buf_adds(&b, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
    mcp_json_string_encode(&b, text ? text : "", tlen);
    common_buf_addf(&b, "}],\"isError\":%s}}", is_error ? "true" : "false");
    return common_buf_detach(&b, out, outlen) ? ENOMEM : 0;
}

/* The answer to a read tool call with id [is, ie) and arguments [as, ae)
 * (as == ae: none): into *OUT, or, when a search runs, *LATER. */
static void answer_read(job *j, size_t is, size_t ie, size_t as, size_t ae, char **out,
                        size_t *outlen, mcp_later **later)
{
    mcp_rewriter *rw = j->rw;
    mcp_read_op *op = NULL;
    char *text = NULL;
    int is_error = 0, kind = 0;
    uint64_t limit = 0;
    size_t budget = MCP_READ_BUDGET, tlen = 0;

    al_policy_decide(rw->pol, MCP_READ_TOOL, "x", 1, &kind, &limit);
    if (kind == AL_OFFLOAD_OVER_BYTES || kind == AL_OFFLOAD_OVER_CHARS)
        budget = limit > SIZE_MAX ? SIZE_MAX : (size_t)limit;
    else if (kind == AL_OFFLOAD_OVER_TOKENS)
        budget = limit > SIZE_MAX / 4 ? SIZE_MAX : (size_t)limit * 4;
    if (mcp_read_begin(rw->h, as < ae ? j->s + as : NULL, ae - as, budget, &op, &text, &tlen,
                       &is_error)) {
        j->nomem = 1;
        return;
    }
    if (op && rw->searching >= MCP_SEARCHES) {
        mcp_read_op_free(op);
        op = NULL;
        is_error = 1;
        if (!(text = strdup(MCP_READ_TOOL ": too many pattern searches are running at once; "
                            "call again once one of them has answered"))) {
            j->nomem = 1;
            return;
        }
        tlen = strlen(text);
    }
    if (op) {
        mcp_later *l = calloc(1, sizeof *l);
        if (!l || !(l->id = malloc(ie - is + 1))) {
            free(l);
            mcp_read_op_free(op);
            j->nomem = 1;
            return;
        }
        memcpy(l->id, j->s + is, ie - is);
        l->idlen = ie - is;
        l->op = op;
        l->rw = rw;
        rw->searching++;
        *later = l;
        return;
    }
    if (read_message(j->s + is, ie - is, text, tlen, is_error, out, outlen))
        j->nomem = 1;
    free(text);
}

int mcp_later_fd(const mcp_later *l)
{
    return mcp_read_op_fd(l->op);
}

double mcp_later_deadline(const mcp_later *l)
{
    return mcp_read_op_deadline(l->op);
}

int mcp_later_answer(mcp_later *l, char **out, size_t *outlen)
{
    char *text = NULL;
    size_t tlen = 0;
    int is_error = 0, rc;
    *out = NULL;
    rc = mcp_read_op_finish(l->op, &text, &tlen, &is_error);
    l->op = NULL;
    if (rc == 0)
        rc = read_message(l->id, l->idlen, text, tlen, is_error, out, outlen);
    free(text);
    mcp_later_free(l);
    return rc;
}

void mcp_later_free(mcp_later *l)
{
    if (!l)
        return;
    mcp_read_op_free(l->op);
    l->rw->searching--;
    free(l->id);
    free(l);
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
        if ((id = id_key(j, is, ie)))
            pend_add(j, id, REQ_LIST, NULL);
        return 0;
    }
    if (mcp_json_string_is(s + ms, me - ms, "tasks/result")) {
        size_t a, b;
        tool = NULL;
        if (pe && s[ps] == '{' && mcp_json_member(s, j->n, ps, "taskId", &a, &b) == 0 &&
            s[a] == '"' && !(tool = task_tool_of(j, a, b)) && !j->nomem)
            mcp_job_note(j, "tasks/result of a task no tools/call of this session created "
                         "(or older than the last %u): its answer passes unchanged",
                         MCP_TASKS_KEPT);
        /* Only a task a tools/call made is judged, under that call's tool;
         * any other's answer is just due. */
        if ((id = id_key(j, is, ie)))
            pend_add(j, id, tool ? REQ_CALL : REQ_OTHER, tool);
        else
            free(tool);
        return 0;
    }
    if (!mcp_json_string_is(s + ms, me - ms, "tools/call") || !pe || s[ps] != '{' ||
        mcp_json_members(s, j->n, ps, call_names, 2, ap, NULL) || !ap[0].end ||
        !(tool = mcp_job_dup_string(j, ap[0].start, ap[0].end))) {
        if ((id = id_key(j, is, ie))) /* another request: its answer is due */
            pend_add(j, id, REQ_OTHER, NULL);
        return 0;
    }
    /* Matched on the JSON token, not the C string: a name with a NUL
     * ("read_offloaded_result\u0000x") is not the read tool but the
     * server's to answer. */
    if (rw->read_tool && !rw->server_read_tool && !batch &&
        mcp_json_string_is(s + ap[0].start, ap[0].end - ap[0].start, MCP_READ_TOOL)) {
        free(tool);
        answer_read(j, is, ie, ap[1].start, ap[1].end, out, outlen, &j->later);
        return *out != NULL || j->later != NULL;
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
        mcp_job_restore(j); /* the line passes: as it came */
        mcp_verdict_release(v);
        mcp_job_release(j);
        return ENOMEM;
    }
    if (j->ned) {
        common_buf b = {0};
        qsort(j->ed, j->ned, sizeof *j->ed, mcp_job_edit_cmp);
        mcp_job_splice(j, 0, 0, j->n, &b);
        if (common_buf_detach(&b, &v->text, &v->len)) {
            mcp_job_restore(j);
            mcp_job_release(j);
            return ENOMEM;
        }
        v->action = MCP_REPLACE;
    } else {
        mcp_job_restore(j);
    }
    if (j->note.len)
        common_buf_detach(&j->note, &v->note, NULL);
    mcp_job_release(j);
    return 0;
}

/* The pending request the message S (N bytes, maybe cut, maybe nested too
 * deep to scan) answers, found by its top-level "id" (mcp_json_top_member),
 * or NULL: a request or notification itself, no id, or not one of ours.
 * *IS, *IE get the id's token. */
static pending *answered(job *j, size_t *is, size_t *ie)
{
    size_t a, b, k;
    char *id;
    pending *p;
    if (mcp_json_top_member(j->s, j->n, "method", &a, &b) != ENOENT ||
        mcp_json_top_member(j->s, j->n, "id", is, ie))
        return NULL;
    k = *is;
    if ((j->s[k] != '"' && j->s[k] != '-' && (j->s[k] < '0' || j->s[k] > '9')) ||
        mcp_json_skip(j->s, *ie, &k) || k != *ie || !(id = id_key(j, *is, *ie)))
        return NULL;
    p = pend_find(j->rw, id);
    free(id);
    return p;
}

/* A line from the server the scanner cannot follow (WHY: nested deeper
 * than MCP_JSON_DEPTH, or not JSON) that answers a tools/call: its size
 * is judged by the policy as the answer's would be, and when over, the
 * whole line is stored as text and the client gets an isError result
 * naming it (result.c). Returns 1 when it was (V holds the verdict). */
static int unparsed_answer(job *j, const char *why)
{
    size_t is, ie;
    pending *p = answered(j, &is, &ie);
    int done = 0;
    if (!p)
        return 0;
    if (p->kind == REQ_CALL)
        done = mcp_result_unparsed(j, p->tool, is, ie, why);
    pend_drop(j->rw, p);
    return done;
}

/* Notes a line that is not JSON. */
static void malformed(job *j, const char *who, mcp_verdict *v)
{
    size_t first = mcp_json_ws(j->s, j->n, 0);
    size_t k = j->n - first < 40 ? j->n - first : 40;
    common_buf b = {0};
    common_buf_addf(&b, "malformed JSON from the %s (%zu bytes, starting '", who, j->n);
    common_buf_add_printable(&b, j->s + first, k);
    common_buf_adds(&b, "'): passed through unchanged");
    common_buf_detach(&b, &v->note, NULL);
}

static int server_fn(job *j, const mcp_json_span *sp, int batch, char **out, size_t *outlen);

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
            size_t k = pos;
            int rc = mcp_json_skip(s, j->n, &k);
            if (fn != server_fn || !unparsed_answer(j, rc == E2BIG ? "it is nested deeper than "
                                                    "the proxy follows" : "it is not valid JSON"))
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
        v->action = j.later ? MCP_DEFER : MCP_ANSWER;
        v->text = out;
        v->len = outlen;
        v->later = j.later;
        j.later = NULL;
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

int mcp_rewriter_oversized(mcp_rewriter *rw, int from_client, const char *head, size_t len,
                           uint64_t limit, char **out, size_t *outlen)
{
    job j = {.rw = rw, .s = head, .n = len};
    size_t is, ie, a, b, k;
    pending *p = NULL;
    common_buf m = {0};
    *out = NULL;
    *outlen = 0;
    if (from_client) { /* a request of the client's: refused, never sent on */
        if (mcp_json_top_member(head, len, "method", &a, &b) ||
            mcp_json_top_member(head, len, "id", &is, &ie))
            return 0;
        k = is;
        if (mcp_json_skip(head, ie, &k) || k != ie || (head[is] != '"' && head[is] != '-' &&
                                                      (head[is] < '0' || head[is] > '9')))
            return 0;
    } else if (!(p = answered(&j, &is, &ie))) {
        return 0;
    }
    common_buf_adds(&m, "{\"jsonrpc\":\"2.0\",\"id\":");
    common_buf_add(&m, head + is, ie - is);
    common_buf_addf(&m, ",\"error\":{\"code\":%d,\"message\":\"agentlink mcp-proxy: %s is longer "
                    "than the proxy's maximum message size, %llu bytes (" MCP_MAX_MESSAGE_ENV
                    "), and was dropped\"}}", from_client ? -32600 : -32603,
                    from_client ? "this request" : "the server's answer to this request",
                    (unsigned long long)limit);
    if (p)
        pend_drop(rw, p);
    return common_buf_detach(&m, out, outlen) ? ENOMEM : 0;
}
