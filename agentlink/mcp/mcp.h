/* mcp.h -- agentlink mcp-proxy: offload oversized MCP tool results for any
 * MCP client speaking the stdio transport (newline-delimited JSON-RPC 2.0).
 *
 * Three layers, each in its own file:
 *
 *   json.c         a JSON scanner that finds the byte spans of values in a
 *                  message, and the JSON string codec. Nothing is parsed
 *                  into a tree: what is not rewritten is never re-encoded.
 *   rewrite.c      the rewriter: sees one message (one line, without its
 *     read.c       newline) at a time and says what to do with it: pass it
 *                  on byte for byte, send a rewritten copy instead, or
 *                  answer it itself (the read tool). It never touches a
 *                  descriptor, so tests and the fuzzer drive it directly.
 *   relay.c        the relay: one poll() loop over the client's stdin and
 *                  stdout, the child's stdin and stdout and a signal pipe;
 *                  splits lines, asks the rewriter, writes without blocking.
 *
 * What is rewritten (everything else passes byte for byte, batches too):
 * - the result of a "tools/call" the client sent (matched by its id; ids
 *   are compared by value: numbers as numbers, strings as strings). When
 *   the text parts of "content", joined with "\n", are over the offload
 *   policy under the called tool's name, they are stored as one result and
 *   replaced by one text part holding the pointer text; every other part
 *   (image, audio, resource, resource_link, ...) follows it unchanged.
 *   "structuredContent", when over the policy on its own, keeps its shape:
 *   its longest string values are replaced by the pointer text (a string
 *   equal to the stored text by that same pointer, any other by a pointer
 *   to its own entry) until it is within the policy; numbers, booleans,
 *   keys and array lengths are never changed, so a structure that is over
 *   the budget through many small values passes as it is (logged).
 * - the result of a "tools/list" (read tool on): the last page (no
 *   "nextCursor") gains the tool "read_offloaded_result".
 * - a "tools/call" of "read_offloaded_result" (read tool on, not inside a
 *   batch) is answered by the proxy, never forwarded.
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
 *   (with a note to log); a store that cannot be written leaves the result
 *   unchanged (with a note); only ENOMEM makes a function fail, and then
 *   the caller passes the line on unchanged.
 * - Memory: a message is scanned in place, never copied. A result that is
 *   one text written canonically (as JSON.stringify does) is decoded over
 *   its own bytes; any other offloaded text costs its decoded size once
 *   more; the store holds a copy of what it writes while it writes. A
 *   structuredContent string holding the same text is recognised by its
 *   bytes, not decoded again.
 * - The read tool is not answered inside a JSON-RPC batch (MCP dropped
 *   batches in 2025-06-18): such a call goes to the server.
 */
#ifndef OFFLOADFS_AGENTLINK_MCP_H
#define OFFLOADFS_AGENTLINK_MCP_H

#include "agentlink/agentlink.h"
#include "agentlink/internal.h"

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

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
int mcp_json_string_decode(const char *s, size_t n, al_buf *b);

/* Appends the N bytes at S to B as a JSON string token: quotes, escapes
 * for '"', '\\' and control characters; bytes that are not valid UTF-8
 * become \ufffd, so the token is always valid JSON text. */
void mcp_json_string_encode(al_buf *b, const char *s, size_t n);

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

typedef struct mcp_verdict {
    int action;  /* MCP_PASS, MCP_REPLACE or MCP_ANSWER */
    char *text;  /* REPLACE, ANSWER: a message without newline, yours */
    size_t len;  /* its length */
    char *note;  /* NULL, or a line for the log (no newline), yours */
} mcp_verdict;

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

/* The read tool's name. */
#define MCP_READ_TOOL "read_offloaded_result"
/* Lines the read tool returns when the call gives no "limit". */
#define MCP_READ_LIMIT 2000u
/* Bytes of the read tool's answer when the policy gives no byte bound. */
#define MCP_READ_BUDGET 32768u

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

/* ---- The relay (relay.c) -------------------------------------------- */
typedef struct mcp_relay_opts {
    char *const *argv;  /* the server's command line, argv[0] looked up in PATH */
    mcp_rewriter *rw;   /* the rewriter (borrowed) */
    int in_fd, out_fd;  /* the client's side: normally 0 and 1 */
} mcp_relay_opts;

/* Runs the server, relays the session until the server has exited and its
 * output is delivered, and returns the proxy's exit status: the server's
 * own status, 128+N when signal N ended it, 127 when it cannot be run (no
 * such file) and 126 when it can be found but not run (messages on
 * stderr). SIGINT, SIGTERM and SIGHUP received are sent on to the server;
 * the client closing its side closes the server's stdin, and the relay
 * waits for the server to exit (MCP "Lifecycle", stdio shutdown): when it
 * has not exited MCP_TERM_AFTER_MS later it gets SIGTERM, and SIGKILL
 * MCP_KILL_AFTER_MS after that. What it writes meanwhile is relayed. */
#define MCP_TERM_AFTER_MS 3000
#define MCP_KILL_AFTER_MS 3000
int mcp_relay_run(const mcp_relay_opts *o);

#endif
