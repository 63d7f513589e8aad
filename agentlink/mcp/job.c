/* job.c -- the rewriter's edits and notes for one message (job.h). */
#include "agentlink/mcp/job.h"
#include "common/array.h"
#include "common/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mcp_job_note(job *j, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (j->note.len)
        common_buf_adds(&j->note, "; ");
    common_buf_adds(&j->note, line);
}

/* Adds an edit; TEXT (LEN bytes) becomes the job's. */
void mcp_job_edit(job *j, size_t start, size_t end, char *text, size_t len)
{
    if (!text) {
        j->nomem = 1;
        return;
    }
    edit *e = common_array_grow(j->ed, j->ned, &j->caped, sizeof *e, 8);
    if (!e) {
        free(text);
        j->nomem = 1;
        return;
    }
    j->ed = e;
    j->ed[j->ned++] = (edit){start, end, text, len};
}

int mcp_job_edit_cmp(const void *a, const void *b)
{
    const edit *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Applies the edits from FIRST on that lie in [FROM, TO) to that range of
 * the message, into B. Edits never overlap. */
void mcp_job_splice(const job *j, size_t first, size_t from, size_t to, common_buf *b)
{
    size_t at = from;
    for (size_t i = first; i < j->ned; i++) {
        const edit *e = &j->ed[i];
        if (e->start < from || e->end > to)
            continue;
        common_buf_add(b, j->s + at, e->start - at);
        common_buf_add(b, e->text, e->len);
        at = e->end;
    }
    common_buf_add(b, j->s + at, to - at);
}

void mcp_job_release(job *j)
{
    for (size_t i = 0; i < j->ned; i++)
        free(j->ed[i].text);
    free(j->ed);
    common_buf_release(&j->note);
}

/* The string token at [vs, ve) decoded into a NUL-terminated copy, or NULL
 * (not a string, or no memory: sets nomem). */
char *mcp_job_dup_string(job *j, size_t vs, size_t ve)
{
    common_buf b = {0};
    char *out = NULL;
    if (ve - vs < 2 || j->s[vs] != '"')
        return NULL;
    if (mcp_json_string_decode(j->s + vs, ve - vs, &b) || common_buf_detach(&b, &out, NULL)) {
        j->nomem = b.failed;
        common_buf_release(&b);
        return NULL;
    }
    return out;
}

void mcp_job_restore(job *j)
{
    if (!j->ip_active)
        return;
    mcp_json_string_encode_back(j->w + j->ip_start, j->ip_dlen, j->ip_end - j->ip_start);
    j->ip_active = 0;
}
