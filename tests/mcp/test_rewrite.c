/* test_rewrite.c -- the MCP proxy's rewriter (agentlink/mcp/rewrite.c):
 * messages in, verdicts and bytes out, over a real store in a temporary
 * directory. */
#include "tests/mcp/fixture.h"

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
        cmocka_unit_test_setup_teardown(rewriter_should_answer_bytes_after_a_nul, setup, teardown),
        cmocka_unit_test_setup_teardown(rewriter_should_offload_texts_decoded_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(rewriter_should_pass_results_when_the_store_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(rewriter_should_take_the_last_of_duplicate_members, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
