/* test_mcp.c -- the MCP proxy's rewriter and JSON scanner: messages in,
 * verdicts and bytes out, over a real store in a temporary directory. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <errno.h>

#include "agentlink/agentlink.h"
#include "agentlink/mcp.h"

struct fx {
    char base[64];
    char dir[96];
    al_store *h;
    mcp_rewriter *rw;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->base, sizeof f->base, "/tmp/offloadfs-mcp.XXXXXX");
    assert_non_null(mkdtemp(f->base));
    snprintf(f->dir, sizeof f->dir, "%s/store", f->base);
    assert_int_equal(al_store_open(&f->h, f->dir, "default", "/large_tool_results", NULL), 0);
    assert_int_equal(mcp_rewriter_new(&f->rw, f->h, NULL, 1), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    char cmd[160];
    mcp_rewriter_free(f->rw);
    al_store_close(f->h);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->base);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* ---- helpers --------------------------------------------------------------- */
static void client(mcp_rewriter *rw, const char *line, int want_action, mcp_verdict *v)
{
    assert_int_equal(mcp_rewriter_client(rw, line, strlen(line), v), 0);
    assert_int_equal(v->action, want_action);
}

/* The server's line is the rewriter's to write on: a copy, which must
 * come back as it was whenever the verdict is MCP_PASS. */
static void server(mcp_rewriter *rw, const char *line, int want_action, mcp_verdict *v)
{
    size_t n = strlen(line);
    char *copy = strdup(line);
    assert_non_null(copy);
    assert_int_equal(mcp_rewriter_server(rw, copy, n, v), 0);
    if (v->action != want_action)
        fail_msg("action %d, want %d, for %.200s", v->action, want_action, line);
    if (v->action == MCP_PASS && memcmp(copy, line, n) != 0)
        fail_msg("a line passed changed: %.200s", copy);
    free(copy);
}

static void client_pass(mcp_rewriter *rw, const char *line)
{
    mcp_verdict v;
    client(rw, line, MCP_PASS, &v);
    assert_null(v.text);
    assert_null(v.note);
    mcp_verdict_release(&v);
}

static void server_pass(mcp_rewriter *rw, const char *line)
{
    mcp_verdict v;
    server(rw, line, MCP_PASS, &v);
    assert_null(v.text);
    if (v.note)
        fail_msg("note: %s", v.note);
    mcp_verdict_release(&v);
}

static void has(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("lacks '%s' in:\n%.3000s", needle, text);
}

/* "line 1 xxxx\n...": N lines. */
static char *lines(unsigned n)
{
    size_t cap = (size_t)n * 32 + 1, l = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    for (unsigned i = 1; i <= n; i++)
        l += (size_t)snprintf(s + l, cap - l, "line %u xxxxxxxxxxxxxxxxxx\n", i);
    return s;
}

/* TEXT as a JSON string token (yours). */
static char *jstr(const char *text)
{
    al_buf b = {0};
    char *out = NULL;
    mcp_json_string_encode(&b, text, strlen(text));
    assert_int_equal(al_buf_detach(&b, &out, NULL), 0);
    return out;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    va_list ap;
    char *out = NULL;
    va_start(ap, f);
    assert_true(vasprintf(&out, f, ap) >= 0);
    va_end(ap);
    return out;
}

/* The decoded string at member path ".a.b" style: first match of "\"NAME\":" then a string. */
static char *decoded_after(const char *msg, const char *marker)
{
    const char *p = strstr(msg, marker);
    size_t pos;
    al_buf b = {0};
    char *out = NULL;
    assert_non_null(p);
    p += strlen(marker);
    pos = 0;
    assert_int_equal(mcp_json_skip(p, strlen(p), &pos), 0);
    assert_int_equal(mcp_json_string_decode(p, pos, &b), 0);
    assert_int_equal(al_buf_detach(&b, &out, NULL), 0);
    return out;
}

/* The key a pointer text names under /large_tool_results. */
static char *pointer_key(const char *ptr)
{
    const char *p = strstr(ptr, "/large_tool_results/");
    size_t n;
    assert_non_null(p);
    p += strlen("/large_tool_results/");
    n = strcspn(p, " \n\"");
    return strndup(p, n);
}

/* A text token with every canonical escape, repeated until it is long. */
static char *escaped_token(const char *unit_tok, size_t times)
{
    size_t k = strlen(unit_tok), n = 0;
    char *t = malloc(k * times + 3);
    assert_non_null(t);
    t[n++] = '"';
    for (size_t i = 0; i < times; i++, n += k)
        memcpy(t + n, unit_tok, k);
    t[n++] = '"';
    t[n] = '\0';
    return t;
}

/* ---- the scanner --------------------------------------------------------------- */
static void mcp_json_valid_should_follow_the_grammar(void **state)
{
    static const char *const good[] = {
        "{}", "[]", " {\"a\" : [1, -2.5e+3, true, false, null, \"x\\u00e9\\n\"]} ",
        "0", "\"\"", "[[[]]]", "{\"a\":{\"b\":{}}}", "-0.0E-0", "\"\\/\\b\\f\\r\\t\\\\\\\"\"",
        "\"caf\xc3\xa9\"",
    };
    static const char *const bad[] = {
        "", " ", "{", "}", "[1,]", "{\"a\"}", "{\"a\":}", "{a:1}", "01", "1.", ".5", "+1",
        "-", "1e", "tru", "nul", "\"abc", "\"\\x\"", "\"\\u12g4\"", "\"a\x01\"", "[1 2]",
        "{\"a\":1,}", "{} {}", "[1]]", "'a'", "NaN",
    };
    (void)state;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (!mcp_json_valid(good[i], strlen(good[i])))
            fail_msg("refused: %s", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (mcp_json_valid(bad[i], strlen(bad[i])))
            fail_msg("accepted: %s", bad[i]);
}

static void mcp_json_skip_should_bound_nesting(void **state)
{
    size_t n = MCP_JSON_DEPTH + 1, pos = 0;
    char *s = malloc(2 * n);
    (void)state;
    assert_non_null(s);
    memset(s, '[', n);
    memset(s + n, ']', n);
    assert_int_equal(mcp_json_skip(s, 2 * n, &pos), E2BIG);
    pos = 0;
    assert_int_equal(mcp_json_skip(s + 1, 2 * n - 2, &pos), 0); /* exactly the limit */
    assert_int_equal(pos, 2 * n - 2);
    free(s);
}

static void mcp_json_string_should_round_trip(void **state)
{
    al_buf b = {0};
    const char *tok = "\"a\\u00e9\\ud83d\\ude00\\ud800x\\n\\\"\\/\"";
    (void)state;
    assert_int_equal(mcp_json_string_decode(tok, strlen(tok), &b), 0);
    assert_int_equal(b.len, strlen("a\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx\n\"/"));
    assert_memory_equal(b.p, "a\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx\n\"/", b.len);
    al_buf_release(&b);
    memset(&b, 0, sizeof b);
    mcp_json_string_encode(&b, "q\"\\\t\x01\xff\xc3\xa9", 8);
    assert_string_equal(b.p, "\"q\\\"\\\\\\t\\u0001\\ufffd\xc3\xa9\"");
    assert_true(mcp_json_valid(b.p, b.len));
    al_buf_release(&b);
    assert_true(mcp_json_string_is("\"na\\u006de\"", 11, "name"));
    assert_false(mcp_json_string_is("\"names\"", 7, "name"));
}

/* ---- pass-through ---------------------------------------------------------------- */
static void rewriter_should_pass_other_messages_untouched(void **state)
{
    struct fx *f = *state;
    mcp_verdict v;
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}");
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
    client_pass(f->rw, "[{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]");
    client_pass(f->rw, "");
    assert_int_equal(mcp_rewriter_pending(f->rw), 0);
    server_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"content\":[]}}");
    server_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"sampling/createMessage\"}");
    server_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}");
    server_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-1,\"message\":\"m\"}}");
    /* Malformed: passed, with a note naming the side. */
    client(f->rw, "{\"id\":1,", MCP_PASS, &v);
    assert_null(v.text);
    assert_string_equal(v.note, "malformed JSON from the client (8 bytes, starting '{\"id\":1,'): passed through unchanged");
    mcp_verdict_release(&v);
    server(f->rw, "\x01\xff garbage", MCP_PASS, &v);
    has(v.note, "malformed JSON from the server (10 bytes, starting '\\x01\\xff garbage')");
    mcp_verdict_release(&v);
}

static void rewriter_should_keep_small_results(void **state)
{
    struct fx *f = *state;
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}");
    assert_int_equal(mcp_rewriter_pending(f->rw), 1);
    server_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"small\"}]}}");
    assert_int_equal(mcp_rewriter_pending(f->rw), 0);
}

/* ---- offloading ------------------------------------------------------------------ */
static void rewriter_should_offload_large_text_and_keep_the_rest(void **state)
{
    struct fx *f = *state;
    char *text = lines(3000), *tok = jstr(text), *msg, *want_head, *ptr, *key, *tail;
    const char *image = "{\"type\":\"image\",\"data\":\"AAAA\",\"mimeType\":\"image/png\"}";
    void *got = NULL;
    size_t glen = 0;
    mcp_verdict v;

    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890123,\"method\":\"tools/call\","
                       "\"params\":{\"name\":\"bash\",\"arguments\":{}}}");
    msg = fmt("{\"jsonrpc\":\"2.0\", \"id\" : 12345678901234567890123,\"result\":{\"content\":"
              "[{\"type\":\"text\",\"text\":%s},%s,{\"type\":\"text\",\"text\":\"tail\"}],"
              "\"_meta\":{\"big\":1.0000000000000000001e400}, \"isError\":false}}", tok, image);
    server(f->rw, msg, MCP_REPLACE, &v);
    assert_non_null(v.text);
    assert_int_equal(strlen(v.text), v.len);
    assert_true(mcp_json_valid(v.text, v.len));
    /* Every byte outside "content" is the server's own. */
    want_head = "{\"jsonrpc\":\"2.0\", \"id\" : 12345678901234567890123,\"result\":{\"content\":"
                "[{\"type\":\"text\",\"text\":\"[offloadfs] ";
    assert_memory_equal(v.text, want_head, strlen(want_head));
    tail = fmt("\"},%s],\"_meta\":{\"big\":1.0000000000000000001e400}, \"isError\":false}}", image);
    has(v.text, tail);
    free(tail);
    ptr = decoded_after(v.text, "\"text\":");
    has(ptr, "/large_tool_results/mcp-bash-");
    has(ptr, "read_offloaded_result with {\"path\": \"/large_tool_results/mcp-bash-");
    key = pointer_key(ptr);
    /* Stored: the text parts joined with "\n". */
    assert_int_equal(al_store_get(f->h, key, &got, &glen, NULL), 0);
    assert_int_equal(glen, strlen(text) + 5);
    assert_memory_equal(got, text, strlen(text));
    assert_memory_equal((char *)got + strlen(text), "\ntail", 5);
    assert_null(v.note);
    mcp_verdict_release(&v);

    al_free(got);
    free(key);
    free(ptr);
    free(msg);
    free(tok);
    free(text);
}

/* The key of the result the rewriter RW offloads for id 1 of tool grep,
 * its text TEXT; checks the store serves TEXT under it. Yours. */
static char *offload_key(struct fx *f, mcp_rewriter *rw, const char *text)
{
    char *tok = jstr(text), *ptr, *key, *msg;
    void *got = NULL;
    size_t glen = 0;
    mcp_verdict v;
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%s}]}}", tok);
    client_pass(rw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"grep\"}}");
    server(rw, msg, MCP_REPLACE, &v);
    ptr = decoded_after(v.text, "\"text\":");
    key = pointer_key(ptr);
    assert_int_equal(al_store_get(f->h, key, &got, &glen, NULL), 0);
    assert_int_equal(glen, strlen(text));
    assert_memory_equal(got, text, glen);
    al_free(got);
    free(ptr);
    free(msg);
    free(tok);
    mcp_verdict_release(&v);
    return key;
}

static int key_form(const char *key, const char *n)
{
    size_t k = strlen("mcp-grep-");
    if (strncmp(key, "mcp-grep-", k) != 0 || strlen(key) != k + 17 + strlen(n))
        return 0;
    for (size_t i = k; i < k + 16; i++)
        if (!strchr("0123456789abcdef", key[i]))
            return 0;
    return key[k + 16] == '-' && strcmp(key + k + 17, n) == 0;
}

static void rewriter_should_never_reuse_a_key(void **state)
{
    struct fx *f = *state;
    char *text = lines(3000), *other = lines(3001), *k1, *k2, *k3;
    mcp_rewriter *next = NULL;

    /* Id 1 again in the same session, other content: another key. */
    k1 = offload_key(f, f->rw, text);
    k2 = offload_key(f, f->rw, other);
    assert_true(key_form(k1, "1"));
    assert_true(key_form(k2, "2"));
    assert_string_not_equal(k1, k2);
    /* A new session (ids start again), same id and content: another key,
     * and the first still serves its bytes. */
    assert_int_equal(mcp_rewriter_new(&next, f->h, NULL, 1), 0);
    k3 = offload_key(f, next, text);
    assert_true(key_form(k3, "1"));
    assert_string_not_equal(k1, k3);
    mcp_rewriter_free(next);
    free(offload_key(f, f->rw, other)); /* checks k2's bytes are still there too */
    {
        void *got = NULL;
        size_t glen = 0;
        assert_int_equal(al_store_get(f->h, k1, &got, &glen, NULL), 0);
        assert_int_equal(glen, strlen(text));
        al_free(got);
    }
    free(k1);
    free(k2);
    free(k3);
    free(other);
    free(text);
}

static void rewriter_should_match_ids_by_value(void **state)
{
    struct fx *f = *state;
    char *text = lines(3000), *tok = jstr(text), *msg;
    mcp_verdict v;

    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}");
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"method\":\"tools/list\"}");
    assert_int_equal(mcp_rewriter_pending(f->rw), 2);
    /* "7" is the tools/list, not the call: the big text is not touched. */
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":%s}]}}", tok);
    server_pass(f->rw, msg);
    free(msg);
    assert_int_equal(mcp_rewriter_pending(f->rw), 1);
    /* 7.0 is 7. */
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":7.0,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%s}]}}", tok);
    server(f->rw, msg, MCP_REPLACE, &v);
    assert_memory_equal(v.text, "{\"jsonrpc\":\"2.0\",\"id\":7.0,", 26);
    mcp_verdict_release(&v);
    assert_int_equal(mcp_rewriter_pending(f->rw), 0);
    /* Answered once: the same answer again passes. */
    server_pass(f->rw, msg);
    free(msg);
    /* An escaped string id is its value. */
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":\"\\u0061b\",\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}");
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":\"ab\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":%s}]}}", tok);
    server(f->rw, msg, MCP_REPLACE, &v);
    mcp_verdict_release(&v);
    free(msg);
    /* A number out of every integer's range (fuzz_mcp: UB in the cast). */
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":1e300,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}");
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":1.0e300,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%s}]}}", tok);
    server(f->rw, msg, MCP_REPLACE, &v);
    mcp_verdict_release(&v);
    free(msg);
    /* A cancelled request is forgotten. */
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}");
    assert_int_equal(mcp_rewriter_pending(f->rw), 1);
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":9}}");
    assert_int_equal(mcp_rewriter_pending(f->rw), 0);
    free(tok);
    free(text);
}

static void rewriter_should_keep_structured_content_shape(void **state)
{
    struct fx *f = *state;
    char *text = lines(3000), *other = lines(2000), *tok = jstr(text), *otok = jstr(other);
    char *msg, *p1, *p2, *p3, *k3;
    void *got = NULL;
    size_t glen = 0;
    mcp_verdict v;

    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"read_text_file\"}}");
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%s}],"
              "\"structuredContent\":{\"content\":%s,\"n\":18446744073709551617,\"small\":\"keep me\","
              "\"list\":[%s,true]}}}", tok, tok, otok);
    server(f->rw, msg, MCP_REPLACE, &v);
    assert_true(mcp_json_valid(v.text, v.len));
    p1 = decoded_after(v.text, "\"text\":");
    p2 = decoded_after(v.text, "\"structuredContent\":{\"content\":");
    assert_string_equal(p1, p2); /* the same text: the same pointer */
    has(v.text, ",\"n\":18446744073709551617,\"small\":\"keep me\",\"list\":[\"");
    has(v.text, "\",true]}}}");
    p3 = decoded_after(v.text, "\"list\":[");
    k3 = pointer_key(p3);
    assert_int_equal(al_store_get(f->h, k3, &got, &glen, NULL), 0);
    assert_int_equal(glen, strlen(other));
    assert_memory_equal(got, other, glen);
    assert_true(v.len < 3 * 8192 + 1024);
    mcp_verdict_release(&v);
    al_free(got);
    free(k3);
    free(p3);
    free(p2);
    free(p1);
    free(msg);
    free(otok);
    free(tok);
    free(other);
    free(text);
}

/* The same with a text that is not canonical (\u00e9): decoded into a
 * copy, structuredContent's copy found by comparing the decoded text. */
static void rewriter_should_keep_structured_shape_for_any_encoding(void **state)
{
    struct fx *f = *state;
    char *tok = escaped_token("\\u00e9 line\\n", 5000), *msg, *p1, *p2;
    mcp_verdict v;

    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"r\"}}");
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%s}],"
              "\"structuredContent\":{\"content\":%s}}}", tok, tok);
    server(f->rw, msg, MCP_REPLACE, &v);
    p1 = decoded_after(v.text, "\"text\":");
    p2 = decoded_after(v.text, "\"structuredContent\":{\"content\":");
    assert_string_equal(p1, p2);
    has(p1, "Size: 40000 bytes, 5000 lines");
    mcp_verdict_release(&v);
    free(p2);
    free(p1);
    free(msg);
    free(tok);
}

static void rewriter_should_rewrite_inside_batches(void **state)
{
    struct fx *f = *state;
    char *text = lines(3000), *tok = jstr(text), *msg;
    mcp_verdict v;

    client_pass(f->rw, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\"}},"
                       "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"b\"}},"
                       "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}]");
    assert_int_equal(mcp_rewriter_pending(f->rw), 3);
    msg = fmt("[{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"s\"}]}} ,"
              "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%s}]}},"
              "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[]}}]", tok);
    server(f->rw, msg, MCP_REPLACE, &v);
    assert_true(mcp_json_valid(v.text, v.len));
    assert_memory_equal(v.text, "[{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"s\"}]}} ,"
                                "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"[offloadfs]", 124);
    has(v.text, "/large_tool_results/mcp-a-");
    has(v.text, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[{\"name\":\"read_offloaded_result\"");
    assert_int_equal(mcp_rewriter_pending(f->rw), 0);
    mcp_verdict_release(&v);
    free(msg);
    free(tok);
    free(text);
}

static void rewriter_should_add_the_read_tool_to_the_last_page(void **state)
{
    struct fx *f = *state;
    mcp_verdict v;
    mcp_rewriter *off = NULL;

    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    server_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"a\"}],\"nextCursor\":\"c\"}}");
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{\"cursor\":\"c\"}}");
    server(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[ {\"name\":\"b\"} ] }}", MCP_REPLACE, &v);
    assert_memory_equal(v.text, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[ {\"name\":\"b\"} ,{\"name\":\"read_offloaded_result\",", 87);
    assert_memory_equal(v.text + v.len - 4, "] }}", 4);
    assert_true(mcp_json_valid(v.text, v.len));
    has(v.text, "\"required\":[\"path\"]");
    mcp_verdict_release(&v);

    /* --no-read-tool: nothing tracked, nothing added, calls go through. */
    assert_int_equal(mcp_rewriter_new(&off, f->h, NULL, 0), 0);
    client_pass(off, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    server_pass(off, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}");
    client_pass(off, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"read_offloaded_result\",\"arguments\":{\"path\":\"x\"}}}");
    assert_int_equal(mcp_rewriter_pending(off), 1);
    mcp_rewriter_free(off);

    /* A server with a tool of that name keeps it, and its calls. */
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
    server(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[{\"name\":\"read_offloaded_result\"}]}}", MCP_PASS, &v);
    has(v.note, "the server has a tool named 'read_offloaded_result' itself");
    mcp_verdict_release(&v);
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"read_offloaded_result\",\"arguments\":{\"path\":\"x\"}}}");
}

static void rewriter_should_answer_read_tool_calls(void **state)
{
    struct fx *f = *state;
    char *text = lines(100), *a;
    mcp_verdict v;

    assert_int_equal(al_store_put(f->h, "k", text, strlen(text), "t", NULL, NULL), 0);
    client(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"method\":\"tools/call\",\"params\":{\"name\":"
                  "\"read_offloaded_result\",\"arguments\":{\"path\":\"/large_tool_results/k\",\"offset\":99}}}",
           MCP_ANSWER, &v);
    assert_string_equal(v.text, "{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":"
                                "\"/large_tool_results/k: lines 99-100 of 100 (2692 bytes)\\n"
                                "99\\tline 99 xxxxxxxxxxxxxxxxxx\\n100\\tline 100 xxxxxxxxxxxxxxxxxx\\n"
                                "[end of the result]\"}],\"isError\":false}}");
    assert_int_equal(mcp_rewriter_pending(f->rw), 0);
    mcp_verdict_release(&v);
    /* Evicted (removed) and unknown: isError, saying so. */
    assert_int_equal(al_store_remove(f->h, "k", NULL), 0);
    client(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
                  "\"read_offloaded_result\",\"arguments\":{\"path\":\"k\"}}}", MCP_ANSWER, &v);
    has(v.text, "\"isError\":true}}");
    a = decoded_after(v.text, "\"text\":");
    has(a, "k is no longer available: it was removed at 20");
    free(a);
    mcp_verdict_release(&v);
    client(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
                  "\"read_offloaded_result\",\"arguments\":{\"path\":\"never\"}}}", MCP_ANSWER, &v);
    has(v.text, "No offloaded result at never: nothing was ever stored");
    has(v.text, "\"isError\":true}}");
    mcp_verdict_release(&v);
    /* Inside a batch it is not answered here. */
    client_pass(f->rw, "[{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
                       "\"read_offloaded_result\",\"arguments\":{\"path\":\"never\"}}}]");
    free(text);
}

static void read_answer_should_stay_within_the_budget(void **state)
{
    struct fx *f = *state;
    size_t n = 100000;
    char *one = malloc(n + 1), *t = NULL;
    int err = -1;
    (void)state;
    memset(one, 'w', n);
    one[n] = '\0';
    assert_int_equal(al_store_put(f->h, "wide", one, n, "t", NULL, NULL), 0);
    assert_int_equal(mcp_read_answer(f->h, "{\"path\":\"wide\"}", 15, 4096, &t, NULL, &err), 0);
    assert_int_equal(err, 0);
    assert_true(strlen(t) <= 4096);
    has(t, "[line 1 clipped: ");
    has(t, "sed -n '1p' /large_tool_results/wide | tail -c +");
    free(t);
    assert_int_equal(mcp_read_answer(f->h, "{\"path\":\"wide\",\"offset\":0}", 26, 4096, &t, NULL, &err), 0);
    assert_int_equal(err, 1);
    has(t, "\"offset\" must be a whole number of at least 1");
    free(t);
    assert_int_equal(mcp_read_answer(NULL, "{\"path\":\"wide\"}", 15, 4096, &t, NULL, &err), 0);
    assert_int_equal(err, 1);
    has(t, "no store open");
    free(t);
    free(one);
}

/* The read tool's answer for key "aas" and PATTERN (JSON-escaped): its
 * text (yours) and whether it is an error. */
static char *read_pattern(struct fx *f, const char *pattern, int *err)
{
    char args[200], *t = NULL;
    snprintf(args, sizeof args, "{\"path\":\"aas\",\"pattern\":\"%s\"}", pattern);
    assert_int_equal(mcp_read_answer(f->h, args, strlen(args), 4096, &t, NULL, err), 0);
    return t;
}

/* The pattern runs over each line with REG_STARTEND; regexec() is still
 * handed a string, which ASan's interceptor (and a libc without
 * REG_STARTEND) reads to its NUL: the value must have one after it. */
static void read_answer_should_match_a_pattern_on_the_last_line(void **state)
{
    struct fx *f = *state;
    char *t;
    int err = -1;
    assert_int_equal(al_store_put(f->h, "aas", "aaaa\nx1\\1", 9, "t", NULL, NULL), 0);
    t = read_pattern(f, "[\\\\1]\\\\\\\\1", &err);
    assert_int_equal(err, 0);
    has(t, "\n2\tx1\\1\n");
    free(t);
}

/* A back-reference (a glibc extension to POSIX EREs) makes regexec()
 * exponential: "(a*)(a*)(a*)\\3\\2\\1c" took over 10 s on one line of 120
 * 'a's, the proxy's one thread stuck and the whole session with it. Such a
 * pattern is refused (a backslash and digit inside brackets is none: the
 * test above). */
static void read_answer_should_refuse_back_references(void **state)
{
    struct fx *f = *state;
    static const char *const refused[] = {"(a)\\\\1", "^(x|a)+\\\\2$", "b|(a*)(a*)\\\\2\\\\1c"};
    assert_int_equal(al_store_put(f->h, "aas", "aaaa\n", 5, "t", NULL, NULL), 0);
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        int err = -1;
        char *t = read_pattern(f, refused[i], &err);
        assert_int_equal(err, 1);
        has(t, "back-reference");
        free(t);
    }
}

/* The read tool's answer for key "aas" and PATTERN (JSON-escaped), of
 * any length: its text (yours) and whether it is an error. */
static char *read_long_pattern(struct fx *f, const char *pattern, int *err)
{
    size_t n = strlen(pattern) + 40;
    char *args = malloc(n), *t = NULL;
    assert_non_null(args);
    snprintf(args, n, "{\"path\":\"aas\",\"pattern\":\"%s\"}", pattern);
    assert_int_equal(mcp_read_answer(f->h, args, strlen(args), 4096, &t, NULL, err), 0);
    free(args);
    return t;
}

/* glibc's regcomp copies a repeated operand ("x+" is "x x*"): "a" and 30
 * '+' asked for gigabytes (fuzz_mcp: out of memory), and 20,000 nested
 * groups overflowed its recursive parser's stack. Such patterns are refused
 * with the reason; ordinary ones, up to 10,000 positions, still run. */
static void read_answer_should_refuse_patterns_regcomp_cannot_survive(void **state)
{
    struct fx *f = *state;
    char plus[40] = "a", *deep = malloc(40003), *nest = malloc(300);
    static const char *const fine[] = {"error|warn(ing)?", "^[0-9]{1,3}(\\\\.[0-9]{1,3}){3}$",
                                       "(a{100}){100}", "a{10000}", "a*****", "a|b+|(c{2,5})+"};
    struct {
        const char *pattern, *says;
    } refused[] = {{plus, "repeats too much"}, {nest, "repeats too much"},
                   {"(a{100}){101}", "repeats too much"}, {"a{10001}", "repeats too much"},
                   {"(x{50}|y{60}){200}", "repeats too much"}, {deep, "nests groups"}};
    assert_non_null(deep);
    assert_non_null(nest);
    memset(plus + 1, '+', 30);
    plus[31] = '\0';
    memset(deep, '(', 20000);
    deep[20000] = 'a';
    memset(deep + 20001, ')', 20000);
    deep[40001] = '\0';
    nest[0] = '\0';
    for (int i = 0; i < 20; i++)
        strcat(nest, "(");
    strcat(nest, "a");
    for (int i = 0; i < 20; i++)
        strcat(nest, "+)");
    assert_int_equal(al_store_put(f->h, "aas", "aaaa\nerror\n", 11, "t", NULL, NULL), 0);
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        int err = -1;
        char *t = read_long_pattern(f, refused[i].pattern, &err);
        assert_int_equal(err, 1);
        has(t, refused[i].says);
        free(t);
    }
    for (size_t i = 0; i < sizeof fine / sizeof *fine; i++) {
        int err = -1;
        char *t = read_long_pattern(f, fine[i], &err);
        if (err != 0)
            fail_msg("pattern %s refused: %s", fine[i], t);
        free(t);
    }
    free(deep);
    free(nest);
}

/* A long result searched in the child process: every match comes back,
 * lines and continuation alike. */
static void read_answer_should_search_a_long_result_in_a_child(void **state)
{
    struct fx *f = *state;
    size_t n = 20000, len = 0;
    char *text = malloc(n * 16), *t;
    int err = -1;
    assert_non_null(text);
    for (size_t i = 1; i <= n; i++)
        len += (size_t)sprintf(text + len, "%s %zu\n", i % 5000 == 0 ? "hit" : "line", i);
    assert_int_equal(al_store_put(f->h, "aas", text, len, "t", NULL, NULL), 0);
    t = read_long_pattern(f, "^hit", &err);
    assert_int_equal(err, 0);
    has(t, ": 4 lines matching /^hit/ from line 1 (lines 5000-20000 of 20000)\n"
           "5000\thit 5000\n10000\thit 10000\n15000\thit 15000\n20000\thit 20000\n"
           "[end of the result]");
    free(t);
    free(text);
}

/* glibc's regexec() takes time growing with the square of a line's length
 * for "a+b" over a line of 'a': over 300,000 of them, minutes. The search
 * stops at its deadline, keeps the match before, and says where it stopped
 * and how to go on; the session is not stuck. */
static void read_answer_should_stop_a_search_at_its_deadline(void **state)
{
    struct fx *f = *state;
    size_t n = 300000;
    char *text = malloc(n + 16), *t;
    int err = -1;
    struct timespec t0, t1;
    assert_non_null(text);
    memcpy(text, "aab\n", 4);
    memset(text + 4, 'a', n);
    memcpy(text + 4 + n, "\nab\n", 4);
    assert_int_equal(al_store_put(f->h, "aas", text, n + 8, "t", NULL, NULL), 0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    t = read_long_pattern(f, "a+b", &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_int_equal(err, 0);
    has(t, ": 1 line matching /a+b/ from line 1 (lines 1-1 of 3)\n1\taab\n"
           "[the search stopped after 5.");
    has(t, " s, in line 2: no line from there on was searched. To go on, call "
           "read_offloaded_result with {\"path\": ");
    has(t, ", \"offset\": 2, \"limit\": 2000, \"pattern\": \"a+b\"} (offset 3 skips that "
           "line), or run grep -nE on ");
    assert_true(t1.tv_sec - t0.tv_sec < 30); /* the deadline, not minutes */
    free(t);
    t = NULL;
    const char *skip = "{\"path\":\"aas\",\"pattern\":\"a+b\",\"offset\":3}";
    assert_int_equal(mcp_read_answer(f->h, skip, strlen(skip), 4096, &t, NULL, &err), 0);
    assert_int_equal(err, 0);
    has(t, ": 1 line matching /a+b/ from line 3 (lines 3-3 of 3)\n3\tab\n[end of the result]");
    free(t);
    free(text);
}

/* A short text is no bound on regexec()'s time: "(.{1,99}){1,100}b", a
 * pattern the read tool accepts (9,900 positions), took 15 s over one line
 * of 16,000 'a' (and "a{1,3000}a{1,3000}a{1,3000}b" 0.5 s over 64 bytes).
 * Searched in the proxy's own process, that froze the whole session past
 * the deadline; every search keeps its deadline, however short the text. */
static void search_should_keep_its_deadline_over_a_short_text(void **state)
{
    size_t n = 16000;
    char *text = malloc(n);
    regex_t re;
    mcp_search s;
    struct timespec t0, t1;
    (void)state;
    assert_non_null(text);
    memset(text, 'a', n);
    assert_null(mcp_pattern_refusal("(.{1,99}){1,100}b"));
    assert_int_equal(regcomp(&re, "(.{1,99}){1,100}b", REG_EXTENDED | REG_NOSUB), 0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(mcp_search_run(text, n, &re, 1, 10, 0.3, &s), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_int_equal(s.stopped, 1);
    assert_int_equal(s.n, 0);
    assert_int_equal(s.searched, 0);
    assert_true((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9 < 3.0);
    mcp_search_release(&s);
    /* A short text that is searched to its end says so. */
    assert_int_equal(mcp_search_run("aa\nb\naa", 7, &re, 1, 10, 5.0, &s), 0);
    assert_int_equal(s.stopped, 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(s.searched, 3);
    mcp_search_release(&s);
    regfree(&re);
    assert_int_equal(regcomp(&re, "^a?b$", REG_EXTENDED | REG_NOSUB), 0);
    assert_int_equal(mcp_search_run("ab\nb\nab", 7, &re, 2, 10, 5.0, &s), 0);
    assert_int_equal(s.stopped, 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.line[0], 2);
    assert_int_equal(s.line[1], 3);
    mcp_search_release(&s);
    regfree(&re);
    free(text);
}

/* A result over max_result_bytes is stored cut: its head and tail, the
 * middle one marker line. The read tool's line numbers and searches cover
 * only what was kept, and its answer says so: a search that finds nothing
 * "to its end" must not make a model believe the result held no such line. */
static void read_answer_should_say_a_result_was_cut(void **state)
{
    struct fx *f = *state;
    char *text = malloc(16000), *t = NULL;
    size_t len = 0;
    int err = -1;
    al_entry e;
    const char *args = "{\"path\":\"cut\",\"pattern\":\"^line 500$\"}";
    assert_non_null(text);
    for (int i = 1; i <= 1000; i++)
        len += (size_t)sprintf(text + len, "line %d\n", i);
    assert_int_equal(al_store_init(f->h, 1u << 20, 4096, NULL), 0);
    assert_int_equal(al_store_put(f->h, "cut", text, len, "t", &e, NULL), 0);
    assert_int_equal(e.truncated, 1);
    assert_int_equal(mcp_read_answer(f->h, args, strlen(args), 32768, &t, NULL, &err), 0);
    assert_int_equal(err, 0);
    has(t, ": no line matching /^line 500$/ from line 1 to its end (");
    has(t, "[this result was cut when stored: of its 8893 bytes, the head and tail kept are ");
    has(t, "Line numbers count what was kept, and only that was searched]\n");
    free(t);
    t = NULL;
    args = "{\"path\":\"cut\",\"limit\":2}";
    assert_int_equal(mcp_read_answer(f->h, args, strlen(args), 32768, &t, NULL, &err), 0);
    has(t, "[this result was cut when stored: of its 8893 bytes");
    has(t, "Line numbers count what was kept]\n1\tline 1\n2\tline 2\n[more lines follow");
    free(t);
    t = NULL;
    /* A result stored whole says nothing of the kind. */
    assert_int_equal(al_store_put(f->h, "whole", "a\nb\n", 4, "t", NULL, NULL), 0);
    args = "{\"path\":\"whole\"}";
    assert_int_equal(mcp_read_answer(f->h, args, strlen(args), 32768, &t, NULL, &err), 0);
    assert_null(strstr(t, "cut when stored"));
    free(t);
    free(text);
}

/* The store removed while the proxy runs (or a --store naming no store):
 * every read fails for that reason, and the answer must say so, not that
 * nothing was ever stored under the path the pointer gave. */
static void read_answer_should_say_the_store_is_gone(void **state)
{
    struct fx *f = *state;
    char cmd[160], *t = NULL;
    int err = -1;
    const char *args = "{\"path\":\"/large_tool_results/gone\"}";
    assert_int_equal(al_store_put(f->h, "gone", "a\nb\n", 4, "t", NULL, NULL), 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(mcp_read_answer(f->h, args, strlen(args), 32768, &t, NULL, &err), 0);
    assert_int_equal(err, 1);
    assert_null(strstr(t, "nothing was ever stored"));
    has(t, "Cannot read /large_tool_results/gone: there is no store at ");
    has(t, "Run the tool that produced it again");
    free(t);
}

/* A search stopped in the first line it tried has searched no line: the
 * header said "no line matching /a+b/ in lines 1-0", a range that is none. */
static void read_answer_should_say_a_search_stopped_in_its_first_line(void **state)
{
    struct fx *f = *state;
    size_t n = 300000;
    char *text = malloc(n + 8), *t;
    int err = -1;
    assert_non_null(text);
    memset(text, 'a', n);
    memcpy(text + n, "\nab\n", 4);
    assert_int_equal(al_store_put(f->h, "aas", text, n + 4, "t", NULL, NULL), 0);
    t = read_long_pattern(f, "a+b", &err);
    assert_int_equal(err, 0);
    assert_null(strstr(t, "lines 1-0"));
    has(t, "/large_tool_results/aas: no line matching /a+b/ found: the search stopped in "
           "line 1, the first it tried (of 2)\n[the search stopped after 5.");
    free(t);
    free(text);
}

static void rewriter_should_answer_bytes_after_a_nul(void **state)
{
    struct fx *f = *state;
    mcp_verdict v;
    assert_int_equal(al_store_put(f->h, "bin", "a\0b\nsecond\n", 11, "t", NULL, NULL), 0);
    client(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                  "\"read_offloaded_result\",\"arguments\":{\"path\":\"bin\"}}}", MCP_ANSWER, &v);
    has(v.text, "\\n1\\ta\\u0000b\\n2\\tsecond\\n[end of the result]\"}],\"isError\":false}}");
    mcp_verdict_release(&v);
}

static void rewriter_should_offload_texts_decoded_in_place(void **state)
{
    struct fx *f = *state;
    /* Canonical: JSON.stringify's escapes, raw UTF-8, DEL. */
    const char *unit = "q\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\xc3\xa9\x7f";
    const char dec[] = "q\"\\\b\f\n\r\t\x01\x1f\xc3\xa9\x7f";
    char *tok = escaped_token(unit, 3000), *msg, *ptr, *key;
    void *got = NULL;
    size_t glen = 0, dl = sizeof dec - 1;
    mcp_verdict v;
    mcp_rewriter *none = NULL;

    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%s},"
              "{\"type\":\"image\",\"data\":\"AA==\",\"mimeType\":\"image/png\"}]}}", tok);
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}");
    server(f->rw, msg, MCP_REPLACE, &v);
    has(v.text, "\"},{\"type\":\"image\",\"data\":\"AA==\",\"mimeType\":\"image/png\"}]}}");
    ptr = decoded_after(v.text, "\"text\":");
    key = pointer_key(ptr);
    assert_int_equal(al_store_get(f->h, key, &got, &glen, NULL), 0);
    assert_int_equal(glen, dl * 3000);
    for (size_t i = 0; i < 3000; i++)
        assert_memory_equal((char *)got + i * dl, dec, dl);
    mcp_verdict_release(&v);
    al_free(got);
    free(key);
    free(ptr);

    /* The store failing: the line passes as it came (server() compares). */
    assert_int_equal(mcp_rewriter_new(&none, NULL, NULL, 1), 0);
    client_pass(none, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}");
    server(none, msg, MCP_PASS, &v);
    has(v.note, "no store: the result of 't'");
    mcp_verdict_release(&v);
    mcp_rewriter_free(none);
    free(msg);
    free(tok);

    /* Over the policy by its token, not by its text (escapes count double
     * in the token): decoded, judged, put back. */
    tok = escaped_token("\\n", 20000); /* 40002 bytes, 20000 of text */
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%s}]}}", tok);
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}");
    server(f->rw, msg, MCP_PASS, &v);
    mcp_verdict_release(&v);
    free(msg);
    free(tok);

    /* Not canonical (\u00e9, \/): decoded into a copy, stored the same. */
    tok = escaped_token("\\u00e9\\/x", 10000);
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%s}]}}", tok);
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}");
    server(f->rw, msg, MCP_REPLACE, &v);
    ptr = decoded_after(v.text, "\"text\":");
    key = pointer_key(ptr);
    assert_int_equal(al_store_get(f->h, key, &got, &glen, NULL), 0);
    assert_int_equal(glen, 40000);
    assert_memory_equal(got, "\xc3\xa9/x\xc3\xa9/x", 8);
    mcp_verdict_release(&v);
    al_free(got);
    free(key);
    free(ptr);
    free(msg);
    free(tok);
}

static void rewriter_should_pass_results_when_the_store_fails(void **state)
{
    struct fx *f = *state;
    mcp_rewriter *rw = NULL;
    char *text = lines(3000), *tok = jstr(text), *msg;
    mcp_verdict v;
    (void)f;

    assert_int_equal(mcp_rewriter_new(&rw, NULL, NULL, 1), 0);
    client_pass(rw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}");
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%s}],"
              "\"structuredContent\":{\"c\":%s}}}", tok, tok);
    server(rw, msg, MCP_PASS, &v);
    assert_null(v.text);
    has(v.note, "no store: the result of 't' (85893 bytes) passed unchanged");
    mcp_verdict_release(&v);
    mcp_rewriter_free(rw);
    free(msg);
    free(tok);
    free(text);
}

/* Duplicate members: JSON.parse (and Python's json) keep the last one, so
 * the rewriter must judge the last one too, or a server slips a large
 * text past the offload behind a small one of the same name. */
static void rewriter_should_take_the_last_of_duplicate_members(void **state)
{
    struct fx *f = *state;
    char *text = lines(3000), *tok = jstr(text), *msg, *ptr;
    const char *small = "[{\"type\":\"text\",\"text\":\"small\"}]";
    char *msgs[4];
    mcp_verdict v;

    msgs[0] = fmt("{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"content\":%s,"
                  "\"content\":[{\"type\":\"text\",\"text\":%s}]}}", small, tok);
    msgs[1] = fmt("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":%s},"
                  "\"result\":{\"content\":[{\"type\":\"text\",\"text\":%s}]}}", small, tok);
    msgs[2] = fmt("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":"
                  "[{\"type\":\"text\",\"text\":\"small\",\"text\":%s}]}}", tok);
    msgs[3] = fmt("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":"
                  "[{\"type\":\"image\",\"type\":\"text\",\"text\":%s}]}}", tok);

    for (int i = 0; i < 4; i++) {
        char *call = fmt("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}", i);
        client_pass(f->rw, call);
        free(call);
        msg = msgs[i];
        server(f->rw, msg, MCP_REPLACE, &v);
        assert_true(mcp_json_valid(v.text, v.len));
        /* The value a client keeps, the last "text", is the pointer. */
        {
            const char *last = NULL, *p = v.text;
            while ((p = strstr(p, "\"text\":\"")) != NULL)
                last = p++;
            assert_non_null(last);
            ptr = decoded_after(last, "\"text\":");
        }
        has(ptr, "/large_tool_results/mcp-t-");
        free(ptr);
        mcp_verdict_release(&v);
        free(msg);
    }
    free(tok);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mcp_json_valid_should_follow_the_grammar),
        cmocka_unit_test(mcp_json_skip_should_bound_nesting),
        cmocka_unit_test(mcp_json_string_should_round_trip),
        cmocka_unit_test_setup_teardown(rewriter_should_pass_other_messages_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(rewriter_should_keep_small_results, setup, teardown),
        cmocka_unit_test_setup_teardown(rewriter_should_offload_large_text_and_keep_the_rest, setup, teardown),
        cmocka_unit_test_setup_teardown(rewriter_should_never_reuse_a_key, setup, teardown),
        cmocka_unit_test_setup_teardown(rewriter_should_match_ids_by_value, setup, teardown),
        cmocka_unit_test_setup_teardown(rewriter_should_keep_structured_content_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(rewriter_should_keep_structured_shape_for_any_encoding, setup, teardown),
        cmocka_unit_test_setup_teardown(rewriter_should_rewrite_inside_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(rewriter_should_add_the_read_tool_to_the_last_page, setup, teardown),
        cmocka_unit_test_setup_teardown(rewriter_should_answer_read_tool_calls, setup, teardown),
        cmocka_unit_test_setup_teardown(read_answer_should_stay_within_the_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(read_answer_should_match_a_pattern_on_the_last_line, setup, teardown),
        cmocka_unit_test_setup_teardown(read_answer_should_refuse_patterns_regcomp_cannot_survive, setup, teardown),
        cmocka_unit_test_setup_teardown(read_answer_should_search_a_long_result_in_a_child, setup, teardown),
        cmocka_unit_test_setup_teardown(read_answer_should_stop_a_search_at_its_deadline, setup, teardown),
        cmocka_unit_test(search_should_keep_its_deadline_over_a_short_text),
        cmocka_unit_test_setup_teardown(read_answer_should_say_a_result_was_cut, setup, teardown),
        cmocka_unit_test_setup_teardown(read_answer_should_say_the_store_is_gone, setup, teardown),
        cmocka_unit_test_setup_teardown(read_answer_should_say_a_search_stopped_in_its_first_line, setup, teardown),
        cmocka_unit_test_setup_teardown(read_answer_should_refuse_back_references, setup, teardown),
        cmocka_unit_test_setup_teardown(rewriter_should_answer_bytes_after_a_nul, setup, teardown),
        cmocka_unit_test_setup_teardown(rewriter_should_offload_texts_decoded_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(rewriter_should_pass_results_when_the_store_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(rewriter_should_take_the_last_of_duplicate_members, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
