/* test_json.c -- the MCP proxy's JSON scanner and string codec
 * (agentlink/mcp/json.c). */
#include "tests/mcp/fixture.h"
#include "common/buf.h"

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
    common_buf b = {0};
    const char *tok = "\"a\\u00e9\\ud83d\\ude00\\ud800x\\n\\\"\\/\"";
    (void)state;
    assert_int_equal(mcp_json_string_decode(tok, strlen(tok), &b), 0);
    assert_int_equal(b.len, strlen("a\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx\n\"/"));
    assert_memory_equal(b.p, "a\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx\n\"/", b.len);
    common_buf_release(&b);
    memset(&b, 0, sizeof b);
    mcp_json_string_encode(&b, "q\"\\\t\x01\xff\xc3\xa9", 8);
    assert_string_equal(b.p, "\"q\\\"\\\\\\t\\u0001\\ufffd\xc3\xa9\"");
    assert_true(mcp_json_valid(b.p, b.len));
    common_buf_release(&b);
    assert_true(mcp_json_string_is("\"na\\u006de\"", 11, "name"));
    assert_false(mcp_json_string_is("\"names\"", 7, "name"));
}

static void mcp_json_escape_flaw_should_find_nul_and_lone_surrogates(void **state)
{
    static const struct {
        const char *json, *what; /* what: NULL for none */
    } cases[] = {
        {"\"plain\"", NULL},
        {"{\"a\":\"\\u00e9\\ud83d\\ude00\\n\"}", NULL},   /* a pair is one character */
        {"\"\\\\u0000\"", NULL},                             /* an escaped backslash, then text */
        {"\"99\\u0000\"", "a NUL character (\\u0000)"},
        {"[1, {\"k\\u0000\":2}]", "a NUL character (\\u0000)"},
        {"\"a\\ud800\"", "an ill-formed escape (\\ud800: a lone UTF-16 surrogate, no character)"},
        {"\"\\uDBFF\\u0041\"", "an ill-formed escape (\\uDBFF: a lone UTF-16 surrogate, no character)"},
        {"\"\\udc00x\"", "an ill-formed escape (\\udc00: a lone UTF-16 surrogate, no character)"},
        {"\"\\ud83d\"", "an ill-formed escape (\\ud83d: a lone UTF-16 surrogate, no character)"},
    };
    char what[96];
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *j = cases[i].json;
        int got = mcp_json_escape_flaw(j, strlen(j), what, sizeof what);
        if (got != (cases[i].what != NULL))
            fail_msg("%s: got %d", j, got);
        if (got)
            assert_string_equal(what, cases[i].what);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mcp_json_valid_should_follow_the_grammar),
        cmocka_unit_test(mcp_json_skip_should_bound_nesting),
        cmocka_unit_test(mcp_json_string_should_round_trip),
        cmocka_unit_test(mcp_json_escape_flaw_should_find_nul_and_lone_surrogates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
