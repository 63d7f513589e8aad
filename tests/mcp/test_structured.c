/* test_structured.c -- the proxy's answers judged as a whole:
 * structuredContent stored whole and named by a short object, nothing
 * stored that the answer does not name, media kept, output schemas made to
 * admit the object, embedded resource texts and task results fitted like
 * text, and a read tool search that the relay need not wait for. */
#include "tests/mcp/fixture.h"
#include "common/buf.h"

static int count_one(const char *key, const al_entry *e, void *ctx)
{
    (void)key;
    (void)e;
    (*(size_t *)ctx)++;
    return 0;
}

/* Live entries in F's store. */
static size_t entries(struct fx *f)
{
    size_t n = 0;
    assert_int_equal(al_store_list(f->h, count_one, &n), 0);
    return n;
}

/* The stored bytes of the path PATH names (yours, NUL-terminated). */
static char *stored(struct fx *f, const char *path)
{
    char *key = pointer_key(path), *out;
    void *got = NULL;
    size_t glen = 0;
    assert_int_equal(al_store_get(f->h, key, &got, &glen, NULL), 0);
    out = strndup(got, glen);
    al_free(got);
    free(key);
    return out;
}

/* A string of N copies of C (yours). */
static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static void call(struct fx *f, int id, const char *tool)
{
    char *m = fmt("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\"}}",
                  id, tool);
    client_pass(f->rw, m);
    free(m);
}

/* Many short strings (a knowledge graph's shape): no string worth a
 * pointer, 50 KB together. Before, every string over 256 bytes was stored
 * and the structure passed whole; now it is stored once, whole. */
static void structured_should_be_stored_whole_and_named(void **state)
{
    struct fx *f = *state;
    common_buf sc = {0};
    char *text = lines(3000), *tok = jstr(text), *msg, *p1, *p2, *scjson, *got;
    mcp_verdict v;

    common_buf_adds(&sc, "{\"n\":18446744073709551617,\"items\":[");
    for (int i = 0; i < 2000; i++)
        common_buf_addf(&sc, "%s\"item %05d abcdefghij\"", i ? "," : "", i);
    common_buf_adds(&sc, "],\"long\":\"");
    for (int i = 0; i < 300; i++)
        common_buf_adds(&sc, "x");
    common_buf_adds(&sc, "\"}");
    assert_int_equal(common_buf_detach(&sc, &scjson, NULL), 0);
    call(f, 1, "read_graph");
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%s}],"
              "\"structuredContent\":%s}}", tok, scjson);
    server(f->rw, msg, MCP_REPLACE, &v);
    assert_true(mcp_json_valid(v.text, v.len));
    assert_true(v.len < 8192);
    p1 = decoded_after(v.text, "\"text\":");
    p2 = decoded_after(v.text, "\"structuredContent\":{\"offloaded\":{\"what\":\"structuredContent\",\"path\":");
    has(p1, "/large_tool_results/mcp-read_graph-");
    has(p2, "/large_tool_results/mcp-read_graph-");
    assert_string_not_equal(p1, p2);
    got = stored(f, p1);
    assert_string_equal(got, text);
    free(got);
    got = stored(f, p2);
    assert_string_equal(got, scjson); /* the server's bytes, exactly */
    free(got);
    assert_int_equal(entries(f), 2); /* the two the answer names, nothing else */
    has(v.text, "\"read\":\"This result's structuredContent (");
    assert_null(strstr(v.text, "The result of tool 'read_graph' was too large\",")); /* no field pointer */
    mcp_verdict_release(&v);
    free(p2);
    free(p1);
    free(msg);
    free(scjson);
    free(tok);
    free(text);
}

/* Judged as a whole: 20 KB of text and 20 KB of structure pass each alone
 * but not together: the structure goes (the text stays for the model);
 * 10 KB and 10 KB pass byte for byte. */
static void structured_should_be_judged_with_the_text(void **state)
{
    struct fx *f = *state;
    char *t20 = repeat('t', 20000), *s20 = repeat('s', 20000), *t10 = repeat('t', 10000);
    char *msg, *got, *p, *want;
    mcp_verdict v;

    call(f, 1, "r");
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%s\"}],"
              "\"structuredContent\":{\"s\":\"%s\"}}}", t10, t10);
    server_pass(f->rw, msg);
    free(msg);
    call(f, 2, "r");
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%s\"}],"
              "\"structuredContent\":{\"s\":\"%s\"}}}", t20, s20);
    server(f->rw, msg, MCP_REPLACE, &v);
    has(v.text, t20); /* the text whole */
    p = decoded_after(v.text, "\"path\":");
    got = stored(f, p);
    want = fmt("{\"s\":\"%s\"}", s20);
    assert_string_equal(got, want);
    mcp_verdict_release(&v);
    free(want);
    free(got);
    free(p);
    free(msg);
    assert_int_equal(entries(f), 1);
    free(t10);
    free(s20);
    free(t20);
}

/* Media inside structuredContent is neither counted nor replaced: 100 KB
 * of image data passes; beside a 40 KB note, the note's structure is
 * stored and the image follows the pointer as it was. */
static void structured_should_keep_media(void **state)
{
    struct fx *f = *state;
    char *img = repeat('A', 100000), *note = repeat('n', 40000), *msg, *obj, *p;
    mcp_verdict v;

    obj = fmt("{\"type\":\"image\",\"data\":\"%s\",\"mimeType\":\"image/png\"}", img);
    call(f, 1, "read_media_file");
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[%s],\"structuredContent\":"
              "{\"content\":[%s]}}}", obj, obj);
    server_pass(f->rw, msg);
    free(msg);
    call(f, 2, "read_media_file");
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[%s],\"structuredContent\":"
              "{\"content\":[%s],\"note\":\"%s\"}}}", obj, obj, note);
    server(f->rw, msg, MCP_REPLACE, &v);
    assert_true(mcp_json_valid(v.text, v.len));
    p = fmt("},\"media\":[%s]}}}", obj);
    assert_memory_equal(v.text + v.len - strlen(p), p, strlen(p));
    has(v.text, "Its images and audio follow unchanged in \\\"media\\\".");
    assert_int_equal(entries(f), 1);
    mcp_verdict_release(&v);
    free(p);
    free(msg);
    free(obj);
    free(note);
    free(img);
}

/* tools/list: an outputSchema is kept whole inside anyOf, beside the
 * schema of the object that stands for a stored structure; $schema and
 * $defs stay at the root, where "#/$defs/..." resolves. A tool the policy
 * never offloads keeps its schema as it is. */
static void list_should_make_output_schemas_admit_the_pointer(void **state)
{
    struct fx *f = *state;
    static const char pol_json[] = "{\"rules\":[{\"tools\":[\"keep\"],\"offload\":\"never\"},"
                                   "{\"tools\":[\"*\"],\"offload\":{\"over_bytes\":32768}}]}";
    al_policy *pol = NULL;
    mcp_rewriter *rw = NULL;
    mcp_verdict v;
    const char *schema = "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\","
                         "\"properties\":{\"a\":{\"$ref\":\"#/$defs/A\"}},\"required\":[\"a\"],"
                         "\"$defs\":{\"A\":{\"type\":\"string\",\"pattern\":\"^x+$\"}}}";
    char *msg, *want;

    assert_int_equal(al_policy_parse(&pol, pol_json, sizeof pol_json - 1, "t", NULL), 0);
    assert_int_equal(mcp_rewriter_new(&rw, f->h, pol, 0), 0); /* --no-read-tool too */
    client_pass(rw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"t\",\"outputSchema\":%s},"
              "{\"name\":\"keep\",\"outputSchema\":%s}]}}", schema, schema);
    server(rw, msg, MCP_REPLACE, &v);
    assert_true(mcp_json_valid(v.text, v.len));
    want = fmt("{\"name\":\"t\",\"outputSchema\":{\"type\":\"object\","
               "\"$schema\":\"http://json-schema.org/draft-07/schema#\","
               "\"$defs\":{\"A\":{\"type\":\"string\",\"pattern\":\"^x+$\"}},\"anyOf\":[{\"type\":\"object\","
               "\"properties\":{\"a\":{\"$ref\":\"#/$defs/A\"}},\"required\":[\"a\"]},{\"type\":\"object\"");
    has(v.text, want);
    free(want);
    want = fmt("{\"name\":\"keep\",\"outputSchema\":%s}]}}", schema);
    has(v.text, want);
    assert_null(strstr(v.text, MCP_READ_TOOL));
    free(want);
    mcp_verdict_release(&v);
    free(msg);
    mcp_rewriter_free(rw);
    al_policy_free(pol);
}

/* An embedded resource's text counts as text: stored with the text parts,
 * joined by "\n", its URI said in the pointer; a blob resource follows. */
static void resource_text_should_be_offloaded_like_text(void **state)
{
    struct fx *f = *state;
    char *text = lines(3000), *tok = jstr(text), *msg, *ptr, *got, *want;
    const char *blob = "{\"type\":\"resource\",\"resource\":{\"uri\":\"file:///b.bin\",\"blob\":\"AAAA\"}}";
    mcp_verdict v;

    call(f, 1, "report");
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"see below\"},"
              "{\"type\":\"resource\",\"resource\":{\"uri\":\"file:///r.txt\",\"mimeType\":\"text/plain\","
              "\"text\":%s}},%s]}}", tok, blob);
    server(f->rw, msg, MCP_REPLACE, &v);
    ptr = decoded_after(v.text, "\"text\":");
    has(ptr, "the text of the embedded resource(s) file:///r.txt.");
    got = stored(f, ptr);
    want = fmt("see below\n%s", text);
    assert_string_equal(got, want);
    free(want);
    want = fmt(",%s]}}", blob);
    assert_memory_equal(v.text + v.len - strlen(want), want, strlen(want));
    mcp_verdict_release(&v);
    free(want);
    free(got);
    free(ptr);
    free(msg);
    free(tok);
    free(text);
}

/* A task-augmented tools/call: its CreateTaskResult passes; the answer to
 * tasks/result is fitted under the tool's name. */
static void task_result_should_be_fitted(void **state)
{
    struct fx *f = *state;
    char *text = lines(3000), *tok = jstr(text), *msg, *ptr, *got;
    mcp_verdict v;

    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"research\","
                       "\"arguments\":{},\"task\":{\"ttl\":60000}}}");
    server_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"task\":{\"taskId\":\"T-1\",\"status\":\"working\"}}}");
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"T-1\"}}");
    server_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"taskId\":\"T-1\",\"status\":\"completed\"}}");
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tasks/result\",\"params\":{\"taskId\":\"T-1\"}}");
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%s}],"
              "\"_meta\":{\"io.modelcontextprotocol/related-task\":{\"taskId\":\"T-1\"}}}}", tok);
    server(f->rw, msg, MCP_REPLACE, &v);
    ptr = decoded_after(v.text, "\"text\":");
    has(ptr, "/large_tool_results/mcp-research-");
    got = stored(f, ptr);
    assert_string_equal(got, text);
    has(v.text, "\"_meta\":{\"io.modelcontextprotocol/related-task\":{\"taskId\":\"T-1\"}}}}");
    assert_int_equal(mcp_rewriter_pending(f->rw), 0);
    mcp_verdict_release(&v);
    free(got);
    free(ptr);
    free(msg);
    free(tok);
    free(text);
}

/* A tasks/result for a task no tools/call of this session created (another
 * session's, or made up) passes unchanged, with a note: only the results of
 * calls this proxy saw are judged, under their tool's name. */
static void task_result_of_unknown_task_should_pass(void **state)
{
    struct fx *f = *state;
    char *text = lines(3000), *tok = jstr(text), *msg;
    mcp_verdict v;

    client(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tasks/result\",\"params\":{\"taskId\":\"T-9\"}}",
           MCP_PASS, &v);
    has(v.note, "tasks/result of a task no tools/call of this session created");
    mcp_verdict_release(&v);
    assert_int_equal(mcp_rewriter_pending(f->rw), 0);
    assert_int_equal(mcp_rewriter_awaited(f->rw), 1);
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%s}]}}", tok);
    server_pass(f->rw, msg);
    assert_int_equal(mcp_rewriter_awaited(f->rw), 0);
    free(msg);
    free(tok);
    free(text);
}

/* A tools/call answer the scanner cannot follow (valid JSON nested deeper
 * than MCP_JSON_DEPTH): over the policy, the whole message is stored as
 * text and the client gets an isError result naming it; within it, it
 * passes as it came. */
static void deep_answer_should_be_stored_whole(void **state)
{
    struct fx *f = *state;
    size_t depth = 1000000, n;
    char *deep = malloc(2 * depth + 1), *msg, *ptr, *got;
    mcp_verdict v;

    memset(deep, '[', depth);
    memset(deep + depth, ']', depth);
    deep[2 * depth] = '\0';
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"deep\"}}");
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":[],\"structuredContent\":{\"a\":%s}}}", deep);
    n = strlen(msg);
    server(f->rw, msg, MCP_REPLACE, &v);
    assert_true(v.len < 4096);
    assert_true(mcp_json_valid(v.text, v.len));
    has(v.text, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":[{\"type\":\"text\"");
    has(v.text, "\"isError\":true}}");
    has(v.note, "the answer to a call of 'deep' could not be read (it is nested deeper than the proxy follows");
    ptr = decoded_after(v.text, "\"text\":");
    has(ptr, "/large_tool_results/mcp-deep-");
    got = stored(f, ptr);
    assert_int_equal(strlen(got), n);
    assert_string_equal(got, msg);
    assert_int_equal(mcp_rewriter_awaited(f->rw), 0);
    mcp_verdict_release(&v);
    free(got);
    free(ptr);
    free(msg);
    /* Within the policy: passed, as a line the scanner cannot follow. */
    memset(deep + 1500, ']', 1500); /* 1500 deep, 3000 bytes */
    deep[3000] = '\0';
    client_pass(f->rw, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"deep\"}}");
    msg = fmt("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[],\"structuredContent\":{\"a\":%s}}}", deep);
    server(f->rw, msg, MCP_PASS, &v);
    has(v.note, "malformed JSON from the server");
    assert_int_equal(mcp_rewriter_awaited(f->rw), 0);
    mcp_verdict_release(&v);
    free(msg);
    free(deep);
}

/* A read tool call with a pattern is deferred (the relay serves other
 * messages meanwhile); its answer comes from mcp_later_answer(). At most
 * MCP_SEARCHES run at once: one more is told to call again. */
static void read_search_should_be_deferred(void **state)
{
    struct fx *f = *state;
    mcp_verdict v[MCP_SEARCHES + 1];
    char *a = repeat('a', 20000), *out = NULL, *m;
    size_t len = 0;

    assert_int_equal(al_store_put(f->h, "aaa", a, strlen(a), "t", NULL, NULL), 0);
    for (unsigned i = 0; i <= MCP_SEARCHES; i++) {
        m = fmt("{\"jsonrpc\":\"2.0\",\"id\":%u,\"method\":\"tools/call\",\"params\":{\"name\":\""
                MCP_READ_TOOL "\",\"arguments\":{\"path\":\"aaa\",\"pattern\":\"%s\"}}}", i,
                i == 0 ? "^a" : "a+b");
        client(f->rw, m, i < MCP_SEARCHES ? MCP_DEFER : MCP_ANSWER, &v[i]);
        free(m);
    }
    has(v[MCP_SEARCHES].text, "too many pattern searches are running at once");
    has(v[MCP_SEARCHES].text, "\"isError\":true");
    assert_non_null(v[0].later);
    assert_true(mcp_later_fd(v[0].later) >= 0);
    assert_int_equal(mcp_later_answer(v[0].later, &out, &len), 0);
    v[0].later = NULL;
    assert_true(mcp_json_valid(out, len));
    has(out, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"/large_tool_results/aaa: 1 line matching /^a/");
    free(out);
    for (unsigned i = 0; i <= MCP_SEARCHES; i++)
        mcp_verdict_release(&v[i]); /* stops the searches still running */
    /* Their places are free again. */
    m = fmt("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\""
            MCP_READ_TOOL "\",\"arguments\":{\"path\":\"aaa\",\"pattern\":\"b\"}}}");
    client(f->rw, m, MCP_DEFER, &v[0]);
    mcp_verdict_release(&v[0]);
    free(m);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(structured_should_be_stored_whole_and_named, setup, teardown),
        cmocka_unit_test_setup_teardown(structured_should_be_judged_with_the_text, setup, teardown),
        cmocka_unit_test_setup_teardown(structured_should_keep_media, setup, teardown),
        cmocka_unit_test_setup_teardown(list_should_make_output_schemas_admit_the_pointer, setup, teardown),
        cmocka_unit_test_setup_teardown(resource_text_should_be_offloaded_like_text, setup, teardown),
        cmocka_unit_test_setup_teardown(task_result_should_be_fitted, setup, teardown),
        cmocka_unit_test_setup_teardown(task_result_of_unknown_task_should_pass, setup, teardown),
        cmocka_unit_test_setup_teardown(deep_answer_should_be_stored_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(read_search_should_be_deferred, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
