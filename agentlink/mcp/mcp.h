/* mcp.h -- agentlink mcp-proxy: offload oversized MCP tool results for any
 * MCP client speaking the stdio transport (newline-delimited JSON-RPC 2.0).
 *
 * Three layers, each in its own file:
 *
 *   json.c         a JSON scanner that finds the byte spans of values in a
 *                  message, and the JSON string codec. Nothing is parsed
 *                  into a tree: what is not rewritten is never re-encoded.
 *   rewrite.c      the rewriter: sees one message (one line, without its
 *     result.c     newline) at a time and says what to do with it: pass it
 *     structured.c on byte for byte, send a rewritten copy instead, answer
 *     read.c       it itself (the read tool), or answer it later (a read
 *     job.c        tool search). It never touches a descriptor, so tests
 *                  and the fuzzer drive it directly.
 *   relay.c        the relay: one poll() loop over the client's stdin and
 *                  stdout, the child's stdin and stdout, a signal pipe and
 *                  the read tool's running searches; splits lines, asks the
 *                  rewriter, writes without blocking.
 *
 * What is rewritten (everything else passes byte for byte, batches too):
 * - the result of a "tools/call" the client sent (matched by its id; ids
 *   are compared by value: numbers as numbers, strings as strings), and of
 *   a "tasks/result" for a task such a call created, judged as a whole
 *   under the called tool's name: its text (the text parts and the texts
 *   of embedded resources, joined with "\n") plus its "structuredContent"
 *   (less the data of images and audio inside it). When the text alone is
 *   over the policy it is stored as one result and one text part holding
 *   the pointer text takes the place of those parts; every other part
 *   (image, audio, resource_link, a resource blob) follows it unchanged.
 *   When what is left is still over, the structuredContent is stored whole
 *   (its JSON as the server sent it) and replaced by a small object that
 *   names it and carries its media (structured.c). Nothing else is stored.
 * - the result of a "tools/list": each outputSchema (of a tool the policy
 *   may offload) also admits that object (mcp_sc_schema()), so clients
 *   that validate structuredContent accept both; with the read tool on,
 *   the last page (no "nextCursor") gains the tool "read_offloaded_result".
 * - a "tools/call" of "read_offloaded_result" (read tool on, not inside a
 *   batch) is answered by the proxy, never forwarded; with a pattern, its
 *   answer comes once the search (in a child) ends, while other messages
 *   flow (MCP_DEFER).
 *
 * Keys: an offloaded text is stored under the key derived (al_key_derive)
 * from "mcp-TOOL-NONCE-N": NONCE is 64 random bits drawn when the rewriter
 * is made (one per session), N counts the results this rewriter stored,
 * from 1. A path therefore names one content only, across sessions and
 * processes: JSON-RPC ids, which restart in every session and may be
 * reused within one, play no part, and no pass over the text is needed
 * (a content hash would cost a SHA-256 of every large result).
 *
 * Caveats
 * =======
 * - A rewriter is not thread-safe: one relay, one thread.
 * - Faults never lose a message: a line that is not JSON passes through
 *   (with a note to log), unless it answers a tools/call and is over the
 *   policy: then it is stored whole and answered by an isError result that
 *   names it (the budget holds for every answer); a line over the maximum
 *   message size (MCP_MAX_MESSAGE_DEFAULT) is dropped as it comes and its
 *   request answered with a JSON-RPC error; a store that cannot be written leaves the result
 *   unchanged (with a note); only ENOMEM makes a function fail, and then
 *   the caller passes the line on unchanged.
 * - Memory: a message is scanned in place, never copied. A result that is
 *   one text written canonically (as JSON.stringify does) is decoded over
 *   its own bytes; any other offloaded text costs its decoded size once
 *   more; the store holds a copy of what it writes while it writes. A
 *   structuredContent stored is written from the message's own bytes.
 * - The read tool is not answered inside a JSON-RPC batch (MCP dropped
 *   batches in 2025-06-18): such a call goes to the server.
 */
#ifndef OFFLOADFS_AGENTLINK_MCP_H
#define OFFLOADFS_AGENTLINK_MCP_H

#include "agentlink/agentlink.h"
#include "agentlink/internal.h"
#include "common/buf.h"

#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- JSON scanning (json.c) ------------------------------------------
 * S is a message of N bytes, not NUL-terminated. Positions are offsets. */

/* Deepest nesting the scanner follows (cJSON's own limit). */
#define MCP_JSON_DEPTH 1000

/* Offset of the first byte at or after POS that is not JSON whitespace. */
size_t mcp_json_ws(const char *s, size_t n, size_t pos);

/* Skips the one JSON value starting at *POS (whitespace before it is
 * skipped too) and sets *POS just after it. Strict RFC 8259 grammar (bytes
 * inside strings are not checked for UTF-8). Returns 0, or EINVAL (not a
 * value, *POS unchanged) or E2BIG (nested deeper than MCP_JSON_DEPTH). */
int mcp_json_skip(const char *s, size_t n, size_t *pos);

/* 1 when S is exactly one JSON value with only whitespace around it. */
int mcp_json_valid(const char *s, size_t n);

/* Iterates the members of the object or the elements of the array whose
 * '{' or '[' is at POS. The value must have been checked (mcp_json_valid
 * or mcp_json_skip). */
typedef struct mcp_json_iter {
    const char *s;
    size_t n, pos;
    char close; /* '}' or ']' */
    int done;
} mcp_json_iter;

/* Starts an iteration; returns 0, or EINVAL when S[POS] opens neither an
 * object nor an array. */
int mcp_json_iter_begin(mcp_json_iter *it, const char *s, size_t n, size_t pos);

/* The next member: [*KS, *KE) the key's string token (quotes included;
 * arrays: both 0), [*VS, *VE) the value. Returns 1 for a member, 0 at the
 * end, -1 on malformed input. */
int mcp_json_iter_next(mcp_json_iter *it, size_t *ks, size_t *ke, size_t *vs, size_t *ve);

/* Finds member NAME of the object at POS: its value is [*VS, *VE).
 * The last member of that name wins, as in JSON.parse and Python's json,
 * which the clients and servers use: judging another one than they keep
 * would let a large text past the offload behind a small one. Returns 0,
 * ENOENT (no such member) or EINVAL (not an object, or malformed). */
int mcp_json_member(const char *s, size_t n, size_t pos, const char *name, size_t *vs,
                    size_t *ve);

/* Finds member NAME at the top level of the object S (N bytes) without
 * following what lies inside the values: nested ones are skipped by
 * counting brackets, to any depth, and S may be cut short (the start of a
 * line over the size limit). For a message the strict scanner refuses
 * (nested deeper than MCP_JSON_DEPTH, or cut): its "id", its "method".
 * The last complete member of that name wins; [*VS, *VE) is its value,
 * not checked (check it before use). Returns 0, ENOENT (none before S
 * ends or stops being an object) or EINVAL (S is not an object). */
int mcp_json_top_member(const char *s, size_t n, const char *name, size_t *vs, size_t *ve);

/* A value's bytes: [start, end); end 0 when absent. */
typedef struct mcp_json_span {
    size_t start, end;
} mcp_json_span;

/* Finds, in one pass over the object at POS, the members named NAMES[0..COUNT)
 * (the last of each name wins, as above): SPANS[i] is the value of NAMES[i], or
 * {0, 0}. The pass checks every value it skips, so 0 means the whole object
 * is valid JSON; *END (may be NULL) gets the offset just past it.
 * Returns 0 or EINVAL (not an object, or malformed). */
int mcp_json_members(const char *s, size_t n, size_t pos, const char *const *names,
                     size_t count, mcp_json_span *spans, size_t *end);

/* Whether the string token [S, S+N) (quotes included) decodes to NAME. */
int mcp_json_string_is(const char *s, size_t n, const char *name);

/* Decodes the string token [S, S+N) (quotes included) into B (appended;
 * \u escapes become UTF-8, a lone surrogate U+FFFD). Returns 0, EINVAL
 * (not a string token) or ENOMEM (B failed). */
int mcp_json_string_decode(const char *s, size_t n, common_buf *b);

/* Whether the JSON text [S, S+N) (valid: mcp_json_skip checked it) holds,
 * in any of its strings, an escape a C string cannot carry as it is: \u0000
 * (a NUL would cut it) or a lone surrogate (\ud800 with no low half after
 * it, or a low half alone: no character at all, which cJSON refuses and
 * mcp_json_string_decode turns into U+FFFD). Returns 0 when none does; 1
 * with the first one described in WHAT (WHATSZ bytes, 64 are enough) as
 * words such as "a NUL character (\u0000)". */
int mcp_json_escape_flaw(const char *s, size_t n, char *what, size_t whatsz);

/* Appends the N bytes at S to B as a JSON string token: quotes, escapes
 * for '"', '\\' and control characters; bytes that are not valid UTF-8
 * become \ufffd, so the token is always valid JSON text. */
void mcp_json_string_encode(common_buf *b, const char *s, size_t n);

/* Whether the string token [S, S+N) (checked by the scanner: quotes
 * included, N >= 2) is canonical, exactly what mcp_json_string_encode()
 * makes of its text: valid UTF-8 written as is, escapes only \" \\ \b \f
 * \n \r \t and \u00xx (lowercase hex) for the other control characters.
 * Returns 1 or 0. */
int mcp_json_string_canonical(const char *s, size_t n);

/* Decodes the canonical token [S, S+N) over itself, from S on. Returns the
 * text's length (at most N - 2). */
size_t mcp_json_string_decode_in_place(char *s, size_t n);

/* Encodes the DLEN bytes of text at S, decoded in place by
 * mcp_json_string_decode_in_place() from a canonical token of N bytes, back
 * over them: S[0, N) holds that token again, byte for byte. */
void mcp_json_string_encode_back(char *s, size_t dlen, size_t n);

/* ---- structuredContent as a whole (structured.c) ------------------------
 * A structuredContent over the budget is stored whole (its JSON exactly as
 * the server sent it) and replaced by the object mcp_sc_pointer() writes;
 * tools/list gives each tool's outputSchema a second branch that admits
 * that object (mcp_sc_schema()), so a client that validates results
 * against the schema (the official SDKs do) accepts both. Media objects
 * inside it ({"type": "image" or "audio", "data": ...}) are never counted
 * nor replaced: they follow the pointer unchanged. */

/* What mcp_sc_scan_value() found in a value. */
typedef struct mcp_sc_scan {
    uint64_t bytes;       /* the value's bytes, less its media "data" strings */
    uint64_t chars;       /* UTF-8 characters of those bytes */
    uint64_t media_bytes; /* bytes of the media "data" strings */
    mcp_json_span *media; /* the media objects, in order (yours); NMEDIA of them */
    size_t nmedia;
} mcp_sc_scan;

/* Scans the (checked) value at [VS, VE) of S (N bytes). Returns 0 or
 * ENOMEM; release *OUT with mcp_sc_scan_release() either way. */
int mcp_sc_scan_value(const char *s, size_t n, size_t vs, size_t ve, mcp_sc_scan *out);
void mcp_sc_scan_release(mcp_sc_scan *sc);

/* Appends to B the object that stands for a structuredContent of BYTES
 * bytes stored at PATH: {"offloaded": {"what": "structuredContent",
 * "path": PATH, "bytes": BYTES, "read": a sentence saying how to read it
 * (naming the read tool when READ_TOOL)}, "media": [SC's media objects,
 * copied from S, when any]}. A failed append sets B->failed. */
void mcp_sc_pointer(common_buf *b, const char *path, uint64_t bytes, int read_tool, const char *s,
                    const mcp_sc_scan *sc);

/* Appends to B the outputSchema object at [OS, OE) of S (N bytes, checked)
 * made to admit what mcp_sc_pointer() writes as well: {"type": "object",
 * its "$schema", "$id", "$defs" and "definitions" (which must stay at the
 * root), "anyOf": [the schema without those, the pointer's schema]}.
 * Returns 0, EINVAL (not an object) or ENOMEM. */
int mcp_sc_schema(common_buf *b, const char *s, size_t n, size_t os, size_t oe);

/* ---- The rewriter (rewrite.c, read.c) --------------------------- */
typedef struct mcp_rewriter mcp_rewriter;

/* Creates a rewriter. STORE is where results go and where the read tool
 * reads (NULL: nothing is offloaded and the read tool answers that the
 * store is unavailable); POL the offload policy (NULL: built-in default);
 * READ_TOOL 1 to offer read_offloaded_result. Both are borrowed and must
 * outlive the rewriter. Returns 0 or ENOMEM (and AL_ECONFIG, which cannot
 * happen with a valid POL). */
int mcp_rewriter_new(mcp_rewriter **out, al_store *h, const al_policy *pol,
                     int read_tool);

/* Releases a rewriter (NULL is fine). */
void mcp_rewriter_free(mcp_rewriter *rw);

/* What to do with one message. */
#define MCP_PASS 0    /* send the message on, byte for byte */
#define MCP_REPLACE 1 /* send TEXT on instead */
#define MCP_ANSWER 2  /* send nothing on; send TEXT back to where it came from */
#define MCP_DEFER 3   /* send nothing on; LATER makes the answer for where it came from */

/* A read tool answer whose pattern search runs (rewrite.c): the relay
 * polls mcp_later_fd() beside its other descriptors, with a timeout up to
 * mcp_later_deadline(), and then calls mcp_later_answer(). It belongs to
 * its rewriter, which must outlive it. */
typedef struct mcp_later mcp_later;

typedef struct mcp_verdict {
    int action;  /* MCP_PASS, MCP_REPLACE, MCP_ANSWER or MCP_DEFER */
    char *text;  /* REPLACE, ANSWER: a message without newline, yours */
    size_t len;  /* its length */
    char *note;  /* NULL, or a line for the log (no newline), yours */
    mcp_later *later; /* DEFER: the answer being made, yours */
} mcp_verdict;

/* The descriptor that polls readable once L's search has ended. */
int mcp_later_fd(const mcp_later *l);

/* When L's search is stopped, in mcp_search_now()'s seconds. */
double mcp_later_deadline(const mcp_later *l);

/* Finishes L (waiting for its search until its deadline at most) and sets
 * *OUT to the JSON-RPC answer message, without newline (yours), and *OUTLEN
 * to its length. Frees L. Returns 0 or ENOMEM (*OUT NULL, L freed). */
int mcp_later_answer(mcp_later *l, char **out, size_t *outlen);

/* Stops L's search and frees L (NULL is fine). */
void mcp_later_free(mcp_later *l);

/* Hands the rewriter one message of LEN bytes at LINE (its newline
 * excluded), from the client (mcp_rewriter_client) or from the server
 * (mcp_rewriter_server), and fills *V. Returns 0, or ENOMEM: then *V is
 * MCP_PASS (and the caller should pass the line on). Release *V with
 * mcp_verdict_release().
 * A server's LINE is written to: a long text is decoded over its own bytes
 * (no copy). When the verdict is MCP_PASS (ENOMEM included) the bytes are
 * as they came; with MCP_REPLACE they are garbage and the line is dropped. */
int mcp_rewriter_client(mcp_rewriter *rw, const char *line, size_t len, mcp_verdict *v);
int mcp_rewriter_server(mcp_rewriter *rw, char *line, size_t len, mcp_verdict *v);

/* Frees what *V holds and resets it to MCP_PASS. */
void mcp_verdict_release(mcp_verdict *v);

/* Requests (tools/call, tools/list) still waiting for their answer. */
size_t mcp_rewriter_pending(const mcp_rewriter *rw);

/* Requests of the client of any method still waiting for their answer
 * from the server (those above included; the read tool's, answered by the
 * proxy, not). The relay waits for them when the client closes its input. */
size_t mcp_rewriter_awaited(const mcp_rewriter *rw);

/* The largest message (line, its newline excluded) the relay takes, by
 * default, and the environment variable that sets another (bytes, or with
 * K, M or G). A line longer is dropped as it comes (its rest skipped up to
 * its newline), so the relay's memory stays bounded; see
 * mcp_rewriter_oversized(). */
#define MCP_MAX_MESSAGE_DEFAULT ((uint64_t)2 << 30)
#define MCP_MAX_MESSAGE_ENV "OFFLOADFS_MCP_MAX_MESSAGE"

/* What to say for a message over the size limit LIMIT, dropped, of which
 * the first LEN bytes at HEAD were read: from the client (FROM_CLIENT), a
 * request is answered with a JSON-RPC error (-32600) naming the limit;
 * from the server, an answer to a request of the client's becomes that
 * error (-32603) with the request's id, and the request is forgotten. Both
 * go to the client: *OUT (yours, no newline), *OUTLEN. Anything else (a
 * notification, a request of the server's, an id not found in HEAD) gets
 * nothing: *OUT NULL. Returns 0 or ENOMEM. */
int mcp_rewriter_oversized(mcp_rewriter *rw, int from_client, const char *head, size_t len,
                           uint64_t limit, char **out, size_t *outlen);

/* The read tool's name. */
#define MCP_READ_TOOL "read_offloaded_result"
/* Lines the read tool returns when the call gives no "limit". */
#define MCP_READ_LIMIT 2000u
/* Bytes of the read tool's answer when the policy gives no byte bound. */
#define MCP_READ_BUDGET 32768u

/* The read tool's definition for tools/list: a JSON object (name,
 * description, inputSchema) naming H's mount (H NULL: the default mount).
 * Returns it (yours, free()) or NULL when out of memory. */
char *mcp_read_tool_def(const al_store *h);

/* Answers the arguments ARGS (LEN bytes of a JSON object, or NULL: none) of
 * a read_offloaded_result call: *TEXT gets the answer's text, *IS_ERROR 1
 * when it is an error a model should act on (bad arguments, unknown or
 * evicted path, store unavailable), *TLEN its length (the text may hold
 * NUL bytes from the stored result). (read.c.)
 * The answer holds at most BUDGET bytes of lines (each line numbered, as
 * "N\tTEXT", invalid UTF-8 shown as U+FFFD, a line longer than the budget
 * clipped and marked), and ends saying how to continue when lines remain.
 * A result stored cut (over max_result_bytes) is said to be: its line
 * numbers and a search cover only the head and tail kept.
 * PATTERN is a POSIX extended regular expression (regcomp REG_EXTENDED);
 * with it only matching lines count, with their numbers. A pattern
 * mcp_pattern_refusal() refuses is an error answer naming why.
 * Returns 0 or ENOMEM. */
int mcp_read_answer(al_store *h, const char *args, size_t len, size_t budget,
                    char **text, size_t *tlen, int *is_error);

/* BYTE_OFFSET (0-based) and BYTE_LIMIT (default: what fits) ask for a byte
 * range instead of lines, and may not be given with offset, limit or
 * pattern (an error answer says so). The answer is a header line naming
 * the range ("PATH: bytes A-B of N ...", and how many of its bytes are not
 * valid UTF-8 and shown as U+FFFD, when any), the bytes [A, B) exactly,
 * then a line in brackets: the call that reads on, or the end. At most
 * BUDGET bytes are shown; a range cut there ends at a character boundary
 * when one is within 4 bytes. A line clipped in a line answer names the
 * byte_offset call that reads the rest of it. */

/* A read tool answer whose pattern search is running (read.c). */
typedef struct mcp_read_op mcp_read_op;

/* As mcp_read_answer(), without waiting for a pattern search: either the
 * answer is done (*OP NULL, *TEXT, *TLEN, *IS_ERROR set as there), or a
 * search runs in a child and *OP (yours) holds everything the answer
 * needs: finish it with mcp_read_op_finish() once mcp_read_op_fd() polls
 * readable (POLLIN or POLLHUP: the child ended) or mcp_read_op_deadline()
 * has passed, or drop it with mcp_read_op_free(). *OP holds a copy of the
 * stored result until then. Returns 0 or ENOMEM (*OP NULL, *TEXT NULL). */
int mcp_read_begin(al_store *h, const char *args, size_t len, size_t budget, mcp_read_op **op,
                   char **text, size_t *tlen, int *is_error);

/* The descriptor that polls readable when OP's search has ended. */
int mcp_read_op_fd(const mcp_read_op *op);

/* When OP's search is stopped, in mcp_search_now()'s seconds. */
double mcp_read_op_deadline(const mcp_read_op *op);

/* Ends OP's search (waiting until its deadline at most, then killing it),
 * writes the answer as mcp_read_answer() does and frees OP. Returns 0 or
 * ENOMEM (OP freed all the same). */
int mcp_read_op_finish(mcp_read_op *op, char **text, size_t *tlen, int *is_error);

/* Kills and reaps OP's search and frees OP (NULL is fine). */
void mcp_read_op_free(mcp_read_op *op);

/* Why the read tool will not run the ERE P, as words that follow
 * "\"pattern\" ", or NULL when it may: a back-reference (\1 to \9, a glibc
 * extension that makes regexec() exponential), groups nested more than 64
 * deep (glibc's parser recurses per group: 20,000 overflowed the stack), or
 * repetition that glibc's compiler would copy into more than 10,000
 * positions ("x+" is "x x*", "x{n,m}" m copies, so "a++++..." doubles per
 * '+'). P's syntax is left to regcomp(). (pattern.c.) */
const char *mcp_pattern_refusal(const char *p);

/* Seconds a pattern search of the read tool may run. */
#define MCP_SEARCH_SECONDS 5.0

/* Pattern searches of the read tool that may run at once; a call past that
 * is answered with an error that says to call again. */
#define MCP_SEARCHES 4u

/* What a pattern search found. */
typedef struct mcp_search {
    uint64_t *line;    /* matching line numbers, ascending; n of them */
    uint64_t n;
    uint64_t searched; /* every line up to this one was searched (0: none) */
    int stopped;       /* the deadline ended it (or its process died) */
    double seconds;    /* how long it ran */
} mcp_search;

/* Searches the lines of DATA (LEN bytes) from line OFFSET (1-based) on for
 * RE (compiled REG_EXTENDED | REG_NOSUB), until MAX lines match, the text
 * ends, or SECONDS pass. It runs in a forked child that is killed at the
 * deadline, whatever the text's length (glibc's regexec() can take time
 * growing with the square of a line's length, and seconds over 64 bytes
 * for some patterns the read tool accepts; nothing interrupts it);
 * what was found until then is kept and OUT->stopped set. Returns 0, or an
 * errno (fork, mmap, ENOMEM) with nothing searched; release OUT with
 * mcp_search_release(). (search.c.) */
int mcp_search_run(const char *data, size_t len, const regex_t *re, uint64_t offset,
                   uint64_t max, double seconds, mcp_search *out);
void mcp_search_release(mcp_search *s);

/* mcp_search_run() in two halves, so that a caller with other work (the
 * relay) need not wait: mcp_search_start() forks the search and returns
 * at once: 0 and *OUT (yours), or an errno (fork, mmap, pipe, ENOMEM).
 * DATA and RE must stay valid until the job is finished or cancelled. */
typedef struct mcp_search_job mcp_search_job;
int mcp_search_start(const char *data, size_t len, const regex_t *re, uint64_t offset,
                     uint64_t max, double seconds, mcp_search_job **out);

/* A descriptor that polls readable (POLLHUP) once J's child has ended. */
int mcp_search_job_fd(const mcp_search_job *j);

/* When J must end, in mcp_search_now()'s seconds. */
double mcp_search_job_deadline(const mcp_search_job *j);

/* Seconds of CLOCK_MONOTONIC. */
double mcp_search_now(void);

/* Ends J: with WAIT, waits for its child until the deadline; a child still
 * running then is killed (OUT->stopped). Fills OUT as mcp_search_run()
 * does, reaps the child and frees J. Returns 0 or ENOMEM (J freed). */
int mcp_search_finish(mcp_search_job *j, int wait, mcp_search *out);

/* Kills J's child at once, reaps it and frees J (NULL is fine). */
void mcp_search_cancel(mcp_search_job *j);

/* ---- The relay (relay.c) -------------------------------------------- */
typedef struct mcp_relay_opts {
    char *const *argv;  /* the server's command line, argv[0] looked up in PATH */
    mcp_rewriter *rw;   /* the rewriter (borrowed) */
    int in_fd, out_fd;  /* the client's side: normally 0 and 1 */
    uint64_t max_message; /* the largest message taken, bytes (0: MCP_MAX_MESSAGE_DEFAULT) */
} mcp_relay_opts;

/* Runs the server, relays the session until the server has exited and its
 * output is delivered, and returns the proxy's exit status: the server's
 * own status, 128+N when signal N ended it, 127 when it cannot be run (no
 * such file) and 126 when it can be found but not run (messages on
 * stderr). The server runs in a process group of its own (its pid), and
 * every signal the relay sends goes to that whole group: SIGINT, SIGTERM
 * and SIGHUP received are sent on to it; the client closing its side
 * closes the server's stdin, and the relay waits for the server to exit
 * (MCP "Lifecycle", stdio shutdown): when it has not exited once it has
 * been quiet for MCP_TERM_AFTER_MS (MCP_ANSWER_WAIT_MS while requests the
 * client sent are still to be answered), the group gets SIGTERM, and
 * SIGKILL MCP_KILL_AFTER_MS after that. Quiet: the relay waited for its
 * output with nothing of it in hand (time spent rewriting, or waiting for
 * the client to read, does not count), so an answer still in flight is
 * relayed whole. What it writes meanwhile is relayed. Once
 * the server has exited, what is left of its group is stopped
 * (mcp_group_stop) before this returns: no process the server started
 * outlives the proxy unless it left the group (setsid, setpgid). */
#define MCP_TERM_AFTER_MS 3000
#define MCP_ANSWER_WAIT_MS 30000
#define MCP_KILL_AFTER_MS 3000
int mcp_relay_run(const mcp_relay_opts *o);

/* ---- Starting the server (spawn.c) ------------------------------------- */
/* Starts ARGV (argv[0] looked up in PATH) under a supervisor: a child of
 * the proxy that leads a new process group (its pid, *PID), asks for a
 * signal when the proxy dies (PR_SET_PDEATHSIG), and forks the server into
 * that group. When the server ends, the supervisor ends the same way (its
 * exit status, or the same signal), so waiting for *PID waits for the
 * server; signals sent to the group reach the server and are ignored by
 * the supervisor. When the proxy dies first (even of SIGKILL), the
 * supervisor stops the whole group as mcp_group_stop() does and exits:
 * nothing the server started outlives the proxy unless it left the group.
 * *TO_SERVER (the server's stdin) and *FROM_SERVER (its stdout) are the
 * proxy's ends of two pipes, close-on-exec (yours). Returns 0, or the
 * errno of the failed start (ENOENT: no such program; then nothing runs
 * and *PID is 0). Only async-signal-safe work in the children before the
 * server's exec, but for reading /proc (the proxy is single-threaded). */
int mcp_spawn(char *const *argv, pid_t *pid, int *to_server, int *from_server);

/* ---- The server's process group (group.c) ----------------------------- */
/* 1 when a process other than LEADER runs in process group PG (zombies
 * do not count), 0 when none does, -1 when /proc cannot be read. */
int mcp_group_running(pid_t pg, pid_t leader);

/* Stops what still runs in process group PG, whose leader CMD (for the
 * messages) has exited and is held unreaped by the caller, so that PG
 * cannot name another group meanwhile: nothing when no other process runs
 * in it; else SIGTERM (and SIGCONT) to the group, and SIGKILL when some
 * still runs KILL_AFTER_MS later (when /proc cannot be read: at once after
 * that wait). Says what it does on stderr. Blocks at most KILL_AFTER_MS
 * plus one /proc scan. */
void mcp_group_stop(pid_t pg, const char *cmd, int kill_after_ms);

#endif
