/* fuzz_mcp.c -- libFuzzer target: the MCP proxy's rewriter and its JSON
 * scanner (agentlink/mcp/rewrite.c, read.c, json.c).
 *
 * The input is a session: lines, each starting with 'c' (from the client)
 * or 's' (from the server), the rest of the line being the message. A
 * fresh rewriter (read tool on, a policy that offloads anything over 200
 * bytes, so small inputs reach the store) over one store in /dev/shm sees
 * them in order. For every message:
 * - the call returns 0 (ENOMEM cannot happen here) and the verdict is
 *   consistent: MCP_PASS carries no text; MCP_REPLACE and MCP_ANSWER carry
 *   text of exactly LEN bytes holding no NUL;
 * - what the rewriter sends instead of a message, or answers, is one valid
 *   JSON value (mcp_json_valid);
 * - a line the scanner refuses is never rewritten;
 * - a server line passed on has its bytes as they came (the rewriter
 *   decodes a long text over the line itself, and must put it back);
 * - the scanner stops inside the line, and a string token decodes, and
 *   what it decodes to (when valid UTF-8) encodes to a token that decodes
 *   back to the same bytes;
 * - no crash, leak or out-of-bounds access (ASan, UBSan). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agentlink/agentlink.h"
#include "agentlink/mcp/mcp.h"
#include "common/buf.h"
#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static al_store *h;
static al_policy *pol;

static void fail(const char *what, const char *msg, size_t len)
{
    fprintf(stderr, "fuzz_mcp: %s: %.*s\n", what, (int)(len > 400 ? 400 : len), msg);
    abort();
}

static void cleanup(void)
{
    const char *dir = h ? al_store_dir(h) : NULL;
    char cmd[512];
    if (dir) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        (void)!system(cmd);
    }
    al_store_close(h);
    al_policy_free(pol);
}

static void init(void)
{
    static const char policy[] = "{\"rules\":[{\"tools\":[\"*\"],\"offload\":{\"over_bytes\":200}},"
                                 "{\"tools\":[\"never\"],\"offload\":\"never\"}]}";
    char tmpl[] = "/dev/shm/fuzz_mcp.XXXXXX", tmpl2[] = "/tmp/fuzz_mcp.XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir)
        dir = mkdtemp(tmpl2);
    if (!dir || al_policy_parse(&pol, policy, sizeof policy - 1, "fuzz", NULL) ||
        al_store_open(&h, dir, "default", "/large_tool_results", pol))
        abort();
    atexit(cleanup);
}

static int valid_utf8(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t q = store_utf8_len(s + i, n - i);
        if (q == 0)
            return 0;
        i += q;
    }
    return 1;
}

static void check_string_token(const char *s, size_t n)
{
    size_t pos = mcp_json_ws(s, n, 0), end = pos;
    common_buf a = {0}, b = {0}, c = {0};
    if (pos >= n || s[pos] != '"' || mcp_json_skip(s, n, &end))
        return;
    if (mcp_json_string_decode(s + pos, end - pos, &a))
        fail("a string token the scanner took does not decode", s, n);
    if (a.p && valid_utf8(a.p, a.len)) {
        mcp_json_string_encode(&b, a.p, a.len);
        if (!mcp_json_valid(b.p, b.len) || mcp_json_string_decode(b.p, b.len, &c) ||
            c.len != a.len || memcmp(c.p, a.p, a.len) != 0)
            fail("decode, encode, decode is not the identity", s, n);
    }
    common_buf_release(&a);
    common_buf_release(&b);
    common_buf_release(&c);
}

static void one(mcp_rewriter *rw, char side, const char *msg, size_t len)
{
    mcp_verdict v;
    size_t pos = 0;
    int valid = mcp_json_valid(msg, len);
    int skip = mcp_json_skip(msg, len, &pos);
    int rc;

    if (skip == 0 && pos > len)
        fail("the scanner went past the end", msg, len);
    check_string_token(msg, len);
    if (side == 'c') {
        rc = mcp_rewriter_client(rw, msg, len, &v);
    } else {
        char *w = malloc(len ? len : 1);
        if (!w)
            abort();
        memcpy(w, msg, len);
        rc = mcp_rewriter_server(rw, w, len, &v);
        if (rc == 0 && v.action == MCP_PASS && memcmp(w, msg, len) != 0)
            fail("a server line passed with its bytes changed", w, len);
        free(w);
    }
    if (rc)
        fail("the rewriter failed", msg, len);
    switch (v.action) {
    case MCP_PASS:
        if (v.text)
            fail("MCP_PASS with a text", msg, len);
        break;
    case MCP_REPLACE:
    case MCP_ANSWER:
        if (!v.text || strlen(v.text) != v.len)
            fail("a text that is not LEN bytes without NUL", msg, len);
        if (!mcp_json_valid(v.text, v.len))
            fail("a rewritten or answered message that is not JSON", v.text, v.len);
        /* A line the scanner refuses is rewritten only as a whole answer
         * stored for being over the policy (mcp_result_unparsed). */
        if (!valid && (side != 's' || !strstr(v.text, "\"isError\":true}}")))
            fail("a line the scanner refuses was rewritten", msg, len);
        if (v.action == MCP_ANSWER && side != 'c')
            fail("an answer to the server", msg, len);
        break;
    case MCP_DEFER: { /* a read tool search: its answer, once it has ended */
        char *out = NULL;
        size_t olen = 0;
        if (v.text || !v.later || side != 'c')
            fail("a deferred answer without its search, or to the server", msg, len);
        if (mcp_later_answer(v.later, &out, &olen))
            fail("a deferred answer failed", msg, len);
        v.later = NULL;
        if (!out || strlen(out) != olen || !mcp_json_valid(out, olen))
            fail("a deferred answer that is not JSON", out ? out : "", olen);
        free(out);
        break;
    }
    default:
        fail("an unknown action", msg, len);
    }
    mcp_verdict_release(&v);
}

/* The start of a line over the size limit (from the client when
 * FROM_CLIENT): what the client gets instead is a JSON-RPC error, or
 * nothing. */
static void oversized(mcp_rewriter *rw, int from_client, const char *msg, size_t len)
{
    char *out = NULL;
    size_t olen = 0;
    size_t vs, ve;
    if (mcp_json_top_member(msg, len, "id", &vs, &ve) == 0 && (vs > ve || ve > len))
        fail("a top-level member outside the line", msg, len);
    if (mcp_rewriter_oversized(rw, from_client, msg, len, 1024, &out, &olen))
        fail("the oversized answer failed", msg, len);
    if (out && (strlen(out) != olen || !mcp_json_valid(out, olen)))
        fail("an oversized line's error that is not JSON", out, olen);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    mcp_rewriter *rw = NULL;
    const char *p = (const char *)data, *end = p + size;
    if (!ready) {
        init();
        ready = 1;
    }
    if (mcp_rewriter_new(&rw, h, pol, 1))
        abort();
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        if (e > p && (p[0] == 'c' || p[0] == 's'))
            one(rw, p[0], p + 1, (size_t)(e - p - 1));
        else if (e > p && (p[0] == 'o' || p[0] == 'O'))
            oversized(rw, p[0] == 'o', p + 1, (size_t)(e - p - 1));
        p = nl ? nl + 1 : end;
    }
    mcp_rewriter_free(rw);
    return 0;
}
