/* job.h -- what the rewriter's files share (rewrite.c, result.c, job.c);
 * private to agentlink/mcp/.
 *
 * A rewrite is a list of edits (byte ranges of the message and their new
 * text) applied in one splice when the message is done, so every byte
 * outside the edited values is the server's own. A job collects them for
 * one message, with the notes for the log; helpers never fail: on ENOMEM
 * they set the job's NOMEM and the message passes unchanged. */
#ifndef OFFLOADFS_AGENTLINK_MCP_JOB_H
#define OFFLOADFS_AGENTLINK_MCP_JOB_H

#include "agentlink/mcp/mcp.h"
#include "common/buf.h"

#include <stddef.h>

/* REQ_OTHER: any other request of the client, remembered only so that the
 * relay knows answers are still due (mcp_rewriter_awaited()). */
enum { REQ_CALL = 1, REQ_LIST = 2, REQ_OTHER = 3 };

typedef struct pending {
    char *id;   /* the id by value: "s" + string, or "n" + number text */
    int kind;   /* REQ_* */
    char *tool; /* REQ_CALL: the tool's name */
} pending;

/* A task a tools/call created (MCP tasks): whose result tasks/result gets. */
typedef struct task_tool {
    char *task; /* the taskId */
    char *tool; /* the tool called */
} task_tool;

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
    size_t nother;      /* of them, REQ_OTHER */
    task_tool *tasks;   /* the last MCP_TASKS_KEPT tasks created, oldest first */
    size_t ntasks;
    unsigned searching; /* read tool answers whose search runs */
};


/* Tasks whose tool is remembered (for tasks/result); the result of an
 * older one, as of a task no tools/call of this session created, passes
 * unchanged (with a note). */
#define MCP_TASKS_KEPT 1024u

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
    common_buf note;
    int nomem;
    mcp_later *later;   /* a read tool answer whose search runs (rewrite.c) */
} job;

/* Adds a sentence to the job's note for the log (printf format). */
void mcp_job_note(job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Adds the edit [START, END) -> TEXT (LEN bytes; the job takes it; NULL
 * sets NOMEM). Edits must not overlap. */
void mcp_job_edit(job *j, size_t start, size_t end, char *text, size_t len);

/* Orders edits by start (qsort). */
int mcp_job_edit_cmp(const void *a, const void *b);

/* Appends [FROM, TO) of the message with the edits from FIRST on that lie
 * inside it applied (in order) to B. */
void mcp_job_splice(const job *j, size_t first, size_t from, size_t to, common_buf *b);

/* Frees the job's edits and note. */
void mcp_job_release(job *j);

/* The string token at [VS, VE) decoded into a NUL-terminated copy (yours),
 * or NULL (not a string, or no memory: NOMEM set). */
char *mcp_job_dup_string(job *j, size_t vs, size_t ve);

/* Puts back the text token decoded in place, if any. */
void mcp_job_restore(job *j);

/* Rewrites the result object at RS of a tools/call of TOOL, or of a
 * tasks/result (result.c): the text parts and embedded resource texts go
 * to the store as one entry when over the policy, the structuredContent
 * as another when the answer is still over (mcp.h). *TASK (yours, else
 * NULL) gets the taskId when the result creates a task. */
void mcp_result_rewrite(job *j, const char *tool, size_t rs, char **task);

/* Stores the whole message (result.c), a line the scanner could not follow
 * (WHY says why, as words after "it") answering a tools/call of TOOL whose
 * id token is [IS, IE), when its size is over the policy for TOOL; the
 * message becomes an isError result with the pointer text. Returns 1 when
 * it did so, 0 when the line passes as it is (within the policy, or the
 * store failed: a note says why). */
int mcp_result_unparsed(job *j, const char *tool, size_t is, size_t ie, const char *why);

#endif
