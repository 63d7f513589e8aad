/* test_policy.c -- the offload policy: parsing, matching, refusals. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agentlink/agentlink.h"

static const char contract_example[] =
    "{\n"
    "  \"mount\": \"/large_tool_results\",\n"
    "  \"namespace\": \"default\",\n"
    "  \"preview\": {\"head_lines\": 5, \"tail_lines\": 5, \"max_line_chars\": 1000},\n"
    "  \"rules\": [\n"
    "    {\"tools\": [\"web_search\"], \"offload\": \"always\"},\n"
    "    {\"tools\": [\"get_time\"], \"offload\": \"never\"},\n"
    "    {\"tools\": [\"read_file\", \"list_dir\"], \"offload\": {\"over_chars\": 4000}},\n"
    "    {\"tools\": [\"*\"], \"offload\": {\"over_bytes\": 32768}}\n"
    "  ]\n"
    "}\n";

static al_policy *parse_ok(const char *json)
{
    al_policy *p = NULL;
    char *err = NULL;
    int rc = al_policy_parse(&p, json, strlen(json), "p.json", &err);
    if (rc)
        fprintf(stderr, "refused: %s\n", err ? err : "?");
    assert_int_equal(rc, 0);
    assert_null(err);
    assert_non_null(p);
    return p;
}

/* Parses JSON expecting a refusal whose message contains every NEEDLE. */
static void parse_refused(const char *json, const char *n1, const char *n2)
{
    al_policy *p = (al_policy *)1;
    char *err = NULL;
    assert_int_equal(al_policy_parse(&p, json, strlen(json), "p.json", &err), AL_ECONFIG);
    assert_null(p);
    assert_non_null(err);
    assert_non_null(strstr(err, "config 'p.json'"));
    if (!strstr(err, n1) || (n2 && !strstr(err, n2)))
        fail_msg("message '%s' lacks '%s' / '%s'", err, n1, n2 ? n2 : "");
    al_free(err);
}

static char *filled(size_t n, char c)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static void policy_default_should_offload_over_32_KiB(void **state)
{
    al_policy *p = NULL;
    char *big = filled(32769, 'x');
    (void)state;
    unsetenv("OFFLOADFS_CONFIG");
    assert_int_equal(al_policy_load(&p, NULL, NULL), 0);
    assert_null(al_policy_path(p));
    assert_int_equal(al_policy_decide(p, "anything", big, 32768, NULL, NULL), 0);
    assert_int_equal(al_policy_decide(p, "anything", big, 32769, NULL, NULL), 1);
    /* a NULL policy is the same default */
    assert_int_equal(al_policy_decide(NULL, "t", big, 32769, NULL, NULL), 1);
    al_policy_free(p);
    free(big);
}

static void policy_parse_should_take_the_contract_example(void **state)
{
    al_policy *p = parse_ok(contract_example);
    al_preview pv;
    (void)state;
    assert_string_equal(al_policy_mount(p), "/large_tool_results");
    assert_string_equal(al_policy_namespace(p), "default");
    al_policy_preview(p, &pv);
    assert_int_equal(pv.head_lines, 5);
    assert_int_equal(pv.max_line_chars, 1000);
    assert_int_equal(al_policy_decide(p, "web_search", "x", 1, NULL, NULL), 1);
    assert_int_equal(al_policy_decide(p, "get_time", "x", 1, NULL, NULL), 0);
    al_policy_free(p);
}

static void policy_decide_should_prefer_a_named_rule_over_star(void **state)
{
    /* "*" first, "never" for get_time after it: the named rule wins. */
    al_policy *p = parse_ok("{\"rules\": [{\"tools\": [\"*\"], \"offload\": \"always\"},"
                            " {\"tools\": [\"get_time\"], \"offload\": \"never\"}]}");
    int kind;
    (void)state;
    assert_int_equal(al_policy_decide(p, "get_time", "x", 1, &kind, NULL), 0);
    assert_int_equal(kind, AL_OFFLOAD_NEVER);
    assert_int_equal(al_policy_decide(p, "other", "x", 1, &kind, NULL), 1);
    assert_int_equal(kind, AL_OFFLOAD_ALWAYS);
    al_policy_free(p);
}

static void policy_decide_should_prefer_the_more_specific_pattern(void **state)
{
    al_policy *p = parse_ok("{\"rules\": ["
                            "{\"tools\": [\"*\"], \"offload\": \"never\"},"
                            "{\"tools\": [\"mcp_*\"], \"offload\": {\"over_bytes\": 10}},"
                            "{\"tools\": [\"mcp_github_*\"], \"offload\": \"always\"}]}");
    uint64_t limit;
    (void)state;
    assert_int_equal(al_policy_decide(p, "mcp_github_issues", "x", 1, NULL, NULL), 1);
    assert_int_equal(al_policy_decide(p, "mcp_fs_read", "0123456789", 10, NULL, &limit), 0);
    assert_int_equal(limit, 10);
    assert_int_equal(al_policy_decide(p, "mcp_fs_read", "0123456789a", 11, NULL, NULL), 1);
    assert_int_equal(al_policy_decide(p, "bash", "x", 1, NULL, NULL), 0);
    al_policy_free(p);
}

static void policy_decide_should_keep_tools_no_rule_matches(void **state)
{
    al_policy *p = parse_ok("{\"rules\": [{\"tools\": [\"web_search\"], \"offload\": \"always\"}]}");
    int kind = -1;
    (void)state;
    assert_int_equal(al_policy_decide(p, "bash", "x", 1, &kind, NULL), 0);
    assert_int_equal(kind, AL_OFFLOAD_NEVER);
    al_policy_free(p);
}

static void policy_decide_should_count_code_points_for_over_chars(void **state)
{
    al_policy *p = parse_ok("{\"rules\": [{\"tools\": [\"read_file\"], \"offload\": {\"over_chars\": 4}}]}");
    (void)state;
    /* 4 characters, 12 bytes: not over 4 characters */
    assert_int_equal(al_policy_decide(p, "read_file", "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac", 12, NULL, NULL), 0);
    assert_int_equal(al_policy_decide(p, "read_file", "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac" "a", 13, NULL, NULL), 1);
    /* invalid bytes count one each: 5 of them is over 4 */
    assert_int_equal(al_policy_decide(p, "read_file", "\xff\xff\xff\xff\xff", 5, NULL, NULL), 1);
    al_policy_free(p);
}

static void policy_decide_should_count_four_chars_a_token(void **state)
{
    al_policy *p = parse_ok("{\"rules\": [{\"tools\": [\"*\"], \"offload\": {\"over_tokens\": 2}}]}");
    (void)state;
    assert_int_equal(al_policy_decide(p, "t", "12345678", 8, NULL, NULL), 0); /* 2 tokens */
    assert_int_equal(al_policy_decide(p, "t", "123456789", 9, NULL, NULL), 1); /* 3 tokens */
    al_policy_free(p);
}

static void policy_decide_should_never_offload_an_empty_result(void **state)
{
    al_policy *p = parse_ok("{\"rules\": [{\"tools\": [\"*\"], \"offload\": \"always\"}]}");
    (void)state;
    assert_int_equal(al_policy_decide(p, "t", "", 0, NULL, NULL), 0);
    al_policy_free(p);
}

static void policy_parse_should_default_rules_only_when_absent(void **state)
{
    al_policy *p = parse_ok("{\"mount\": \"/mnt/r\"}");
    char *big = filled(40000, 'x');
    (void)state;
    assert_int_equal(al_policy_decide(p, "t", big, 40000, NULL, NULL), 1);
    al_policy_free(p);
    p = parse_ok("{\"rules\": []}");
    assert_int_equal(al_policy_decide(p, "t", big, 40000, NULL, NULL), 0);
    al_policy_free(p);
    free(big);
}

static void policy_parse_should_refuse_malformed_json(void **state)
{
    (void)state;
    parse_refused("{\"rules\": [\n  {\"tools\": [\"a\"],, }]}", "not valid JSON", "line 2");
    parse_refused("", "empty", NULL);
    parse_refused("{} {}", "not valid JSON", NULL);
    parse_refused("[1, 2]", "expected a JSON object", "got an array");
}

static void policy_parse_should_refuse_unknown_fields(void **state)
{
    (void)state;
    parse_refused("{\"rulez\": []}", "field 'rulez'", "unknown field");
    parse_refused("{\"preview\": {\"head_line\": 3}}", "field 'preview.head_line'", "\"head_lines\"");
    parse_refused("{\"rules\": [{\"tools\": [\"a\"], \"offload\": \"always\", \"x\": 1}]}",
                  "field 'rules[0].x'", "unknown field");
    parse_refused("{\"mount\": \"/a\", \"mount\": \"/b\"}", "field 'mount'", "twice");
}

static void policy_parse_should_refuse_wrong_types(void **state)
{
    (void)state;
    parse_refused("{\"rules\": [{\"tools\": [\"a\"], \"offload\": {\"over_chars\": \"4000\"}}]}",
                  "field 'rules[0].offload.over_chars'", "expected a non-negative integer, got '4000'");
    parse_refused("{\"rules\": [{\"tools\": [\"a\"], \"offload\": {\"over_bytes\": -1}}]}",
                  "rules[0].offload.over_bytes", "got -1");
    parse_refused("{\"rules\": [{\"tools\": [\"a\"], \"offload\": {\"over_bytes\": 1.5}}]}",
                  "rules[0].offload.over_bytes", "got 1.5");
    parse_refused("{\"rules\": [{\"tools\": [\"a\"], \"offload\": \"sometimes\"}]}",
                  "rules[0].offload", "\"always\", \"never\"");
    parse_refused("{\"rules\": [{\"tools\": \"a\", \"offload\": \"always\"}]}",
                  "rules[0].tools", "array of tool names");
    parse_refused("{\"rules\": [{\"tools\": [], \"offload\": \"always\"}]}",
                  "rules[0].tools", "got an empty array");
    parse_refused("{\"rules\": [{\"tools\": [\"a\"]}]}", "rules[0].offload", "required");
    parse_refused("{\"rules\": [{\"tools\": [\"a\"], \"offload\": {\"over_bytes\": 1, \"over_chars\": 2}}]}",
                  "rules[0].offload", "several fields");
    parse_refused("{\"mount\": \"relative/dir\"}", "field 'mount'", "absolute path");
    parse_refused("{\"namespace\": \"a/b\"}", "field 'namespace'", "contains '/'");
    parse_refused("{\"preview\": {\"max_line_chars\": 0}}", "preview.max_line_chars", "from 1");
    parse_refused("{\"rules\": {\"tools\": [\"a\"]}}", "field 'rules'", "got an object");
}

static void policy_parse_should_refuse_a_tool_named_twice(void **state)
{
    (void)state;
    parse_refused("{\"rules\": [{\"tools\": [\"a\"], \"offload\": \"always\"},"
                  " {\"tools\": [\"b\", \"a\"], \"offload\": \"never\"}]}",
                  "field 'rules[1].tools[1]'", "already named by rules[0]");
}

static void policy_load_should_name_a_missing_file(void **state)
{
    al_policy *p = NULL;
    char *err = NULL;
    (void)state;
    assert_int_equal(al_policy_load(&p, "/nonexistent/policy.json", &err), AL_ECONFIG);
    assert_null(p);
    assert_non_null(err);
    assert_non_null(strstr(err, "config '/nonexistent/policy.json'"));
    assert_non_null(strstr(err, "No such file or directory"));
    al_free(err);
    assert_int_equal(al_policy_load(&p, "/tmp", &err), AL_ECONFIG);
    assert_non_null(strstr(err, "Is a directory"));
    al_free(err);
}

static void policy_load_should_read_the_environment(void **state)
{
    char path[] = "/tmp/offloadfs-policy.XXXXXX";
    int fd = mkstemp(path);
    al_policy *p = NULL;
    const char *json = "{\"namespace\": \"from-env\"}";
    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
    close(fd);
    setenv("OFFLOADFS_CONFIG", path, 1);
    assert_int_equal(al_policy_load(&p, NULL, NULL), 0);
    assert_string_equal(al_policy_namespace(p), "from-env");
    assert_string_equal(al_policy_path(p), path);
    al_policy_free(p);
    /* "" is the built-in default even with the variable set */
    assert_int_equal(al_policy_load(&p, "", NULL), 0);
    assert_null(al_policy_namespace(p));
    al_policy_free(p);
    unsetenv("OFFLOADFS_CONFIG");
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(policy_default_should_offload_over_32_KiB),
        cmocka_unit_test(policy_parse_should_take_the_contract_example),
        cmocka_unit_test(policy_decide_should_prefer_a_named_rule_over_star),
        cmocka_unit_test(policy_decide_should_prefer_the_more_specific_pattern),
        cmocka_unit_test(policy_decide_should_keep_tools_no_rule_matches),
        cmocka_unit_test(policy_decide_should_count_code_points_for_over_chars),
        cmocka_unit_test(policy_decide_should_count_four_chars_a_token),
        cmocka_unit_test(policy_decide_should_never_offload_an_empty_result),
        cmocka_unit_test(policy_parse_should_default_rules_only_when_absent),
        cmocka_unit_test(policy_parse_should_refuse_malformed_json),
        cmocka_unit_test(policy_parse_should_refuse_unknown_fields),
        cmocka_unit_test(policy_parse_should_refuse_wrong_types),
        cmocka_unit_test(policy_parse_should_refuse_a_tool_named_twice),
        cmocka_unit_test(policy_load_should_name_a_missing_file),
        cmocka_unit_test(policy_load_should_read_the_environment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
