/* test_json.c -- the MCP proxy's JSON scanner and string codec
 * (agentlink/mcp/json.c). */
#include "tests/mcp/fixture.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mcp_json_valid_should_follow_the_grammar),
        cmocka_unit_test(mcp_json_skip_should_bound_nesting),
        cmocka_unit_test(mcp_json_string_should_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
