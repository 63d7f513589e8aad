/* test_common.c -- the leaf every program links (common/), alone: the
 * growable array and buffers, the sinks, the walk up through "..", the
 * environment, the clock, and what the policy loader takes from its
 * caller. (The policy's whole grammar is tested through the library's API:
 * tests/agentlink/test_policy.c.) */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/array.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/dir.h"
#include "common/env.h"
#include "common/error.h"
#include "common/policy.h"
#include "common/settings.h"
#include "store/store.h"

static void array_grow_should_double_and_keep_what_it_held(void **state)
{
    int *v = NULL, *nv;
    size_t n = 0, cap = 0;
    (void)state;
    for (int i = 0; i < 100; i++) {
        nv = common_array_grow(v, n, &cap, sizeof *v, 4);
        assert_non_null(nv);
        v = nv;
        v[n++] = i;
    }
    assert_int_equal(cap, 128); /* 4, 8, ..., 128 */
    for (int i = 0; i < 100; i++)
        assert_int_equal(v[i], i);
    /* room left: the same array back */
    assert_ptr_equal(common_array_grow(v, n, &cap, sizeof *v, 4), v);
    free(v);
}

static void array_grow_should_refuse_a_size_that_overflows(void **state)
{
    char *v = malloc(8);
    size_t cap = 8;
    (void)state;
    assert_null(common_array_grow(v, 8, &cap, SIZE_MAX / 8, 4));
    assert_int_equal(cap, 8); /* untouched, and V still ours */
    free(v);
}

static void buf_should_add_and_detach_a_string(void **state)
{
    common_buf b = {0};
    char *out;
    size_t len;
    (void)state;
    common_buf_adds(&b, "key ");
    common_buf_add_printable(&b, "a\x01\\b\xff", 5);
    common_buf_addc(&b, ' ');
    common_buf_add_shell(&b, "it's");
    common_buf_addf(&b, " %d", 42);
    assert_int_equal(common_buf_detach(&b, &out, &len), 0);
    assert_string_equal(out, "key a\\x01\\\\b\\xff 'it'\\''s' 42");
    assert_int_equal(len, strlen(out));
    assert_null(b.p);
    free(out);
    /* an empty buffer detaches as "" */
    assert_int_equal(common_buf_detach(&b, &out, NULL), 0);
    assert_string_equal(out, "");
    free(out);
}

static void buf_sink_should_append_each_piece(void **state)
{
    common_buf b = {0};
    (void)state;
    assert_int_equal(common_buf_sink(&b, "ab", 2), 0);
    assert_int_equal(common_buf_sink(&b, "cd", 2), 0);
    assert_int_equal(b.len, 4);
    assert_string_equal(b.p, "abcd");
    b.failed = 1; /* as after a failed allocation */
    assert_int_equal(common_buf_sink(&b, "e", 1), ENOMEM);
    common_buf_release(&b);
}

static void fixbuf_sink_should_refuse_what_does_not_fit(void **state)
{
    char mem[5];
    common_fixbuf f = {mem, 0, sizeof mem};
    (void)state;
    assert_int_equal(common_fixbuf_sink(&f, "abc", 3), 0);
    assert_int_equal(common_fixbuf_sink(&f, "def", 3), -1);
    assert_int_equal(f.len, 3); /* nothing of the refused piece */
    assert_int_equal(common_fixbuf_sink(&f, "de", 2), 0);
    assert_memory_equal(mem, "abcde", 5);
}

/* Records the level at which the walk met TARGET. */
struct seek {
    struct stat target;
    int found;
    unsigned levels;
};

static int seek_level(void *arg, int fd, const struct stat *st, unsigned level)
{
    struct seek *s = arg;
    (void)fd;
    s->levels = level + 1;
    if (common_same_file(st, &s->target)) {
        s->found = (int)level;
        return 7;
    }
    return 0;
}

static void dir_walk_up_should_find_a_parent_by_inode(void **state)
{
    char top[] = "/tmp/common-walk-XXXXXX", deep[128], link[128], rel[160];
    struct seek s = {.found = -1};
    (void)state;
    assert_non_null(mkdtemp(top));
    snprintf(deep, sizeof deep, "%s/a/b", top);
    snprintf(rel, sizeof rel, "%s/a", top);
    assert_int_equal(mkdir(rel, 0700), 0);
    assert_int_equal(mkdir(deep, 0700), 0);
    assert_int_equal(stat(top, &s.target), 0);
    assert_int_equal(common_dir_walk_up(AT_FDCWD, deep, seek_level, &s), 7);
    assert_int_equal(s.found, 2);
    /* through a symlink: the kernel's "..", not the link's directory */
    snprintf(link, sizeof link, "%s/a/link", top);
    assert_int_equal(symlink(deep, link), 0);
    s.found = -1;
    assert_int_equal(common_dir_walk_up(AT_FDCWD, link, seek_level, &s), 7);
    assert_int_equal(s.found, 2);
    /* not an ancestor: the walk reaches the root and returns 0 */
    assert_int_equal(stat(deep, &s.target), 0);
    s.found = -1;
    assert_int_equal(common_dir_walk_up(AT_FDCWD, top, seek_level, &s), 0);
    assert_int_equal(s.found, -1);
    assert_true(s.levels >= 2); /* /tmp/X and / at least */
    /* a path that is not there: nothing called, 0 */
    s.levels = 0;
    assert_int_equal(common_dir_walk_up(AT_FDCWD, "/nonexistent/x", seek_level, &s), 0);
    assert_int_equal(s.levels, 0);
    unlink(link);
    rmdir(deep);
    rmdir(rel);
    rmdir(top);
}

static void env_should_take_an_empty_variable_as_unset(void **state)
{
    (void)state;
    setenv("COMMON_TEST_VAR", "", 1);
    assert_null(common_env("COMMON_TEST_VAR"));
    setenv("COMMON_TEST_VAR", "x", 1);
    assert_string_equal(common_env("COMMON_TEST_VAR"), "x");
    unsetenv("COMMON_TEST_VAR");
    assert_null(common_env("COMMON_TEST_VAR"));
}

static void clock_should_not_go_back(void **state)
{
    uint64_t a = common_clock_ns(), b = common_clock_ns();
    (void)state;
    assert_true(b >= a);
    assert_true(common_clock_ms() >= a / 1000000u);
}

static void settings_default_namespace_should_be_the_stores(void **state)
{
    common_settings set;
    (void)state;
    assert_string_equal(COMMON_DEFAULT_NAMESPACE, STORE_DEFAULT_NAMESPACE);
    unsetenv("OFFLOADFS_NAMESPACE");
    unsetenv("OFFLOADFS_MOUNT");
    setenv("OFFLOADFS_STORE", "/s", 1);
    assert_int_equal(common_settings_resolve(&set, NULL, NULL, NULL, NULL), 0);
    assert_string_equal(set.ns, "default");
    assert_int_equal(set.ns_from, COMMON_FROM_DEFAULT);
    assert_string_equal(set.mount, "/large_tool_results");
    assert_string_equal(common_settings_store(&set), "/s");
    assert_int_equal(set.store_from, COMMON_FROM_ENV);
    common_settings_release(&set);
    unsetenv("OFFLOADFS_STORE");
}

static const char *no_slash(const char *ns)
{
    return strchr(ns, '/') ? "contains '/'" : NULL;
}

static void policy_parse_should_judge_the_namespace_with_the_callers_rule(void **state)
{
    static const char json[] = "{\"namespace\": \"a/b\"}";
    common_policy *p = NULL;
    char *err = NULL;
    (void)state;
    assert_int_equal(common_policy_parse(&p, json, strlen(json), "p.json", no_slash, &err),
                     COMMON_ECONFIG);
    assert_null(p);
    assert_string_equal(err, "config 'p.json': field 'namespace': expected a valid namespace, "
                             "but it contains '/', got 'a/b'");
    free(err);
    /* no rule given: the name is taken as it is */
    assert_int_equal(common_policy_parse(&p, json, strlen(json), "p.json", NULL, &err), 0);
    assert_null(err);
    assert_string_equal(common_policy_namespace(p), "a/b");
    common_policy_free(p);
    assert_string_equal(common_strerror(COMMON_ECONFIG), "offload policy refused");
}

static void policy_rule_should_prefer_the_exact_name(void **state)
{
    static const char json[] = "{\"rules\": [{\"tools\": [\"*\"], \"offload\": \"always\"},"
                               " {\"tools\": [\"t\"], \"offload\": {\"over_bytes\": 9}}]}";
    common_policy *p = NULL;
    int kind;
    uint64_t limit;
    (void)state;
    assert_int_equal(common_policy_parse(&p, json, strlen(json), NULL, NULL, NULL), 0);
    assert_int_equal(common_policy_rule(p, "t", &kind, &limit), 1);
    assert_int_equal(kind, COMMON_OFFLOAD_OVER_BYTES);
    assert_int_equal(limit, 9);
    assert_int_equal(common_policy_rule(p, "u", &kind, NULL), 1);
    assert_int_equal(kind, COMMON_OFFLOAD_ALWAYS);
    common_policy_free(p);
    assert_int_equal(common_policy_rule(NULL, "u", &kind, &limit), 1); /* the default */
    assert_int_equal(kind, COMMON_OFFLOAD_OVER_BYTES);
    assert_int_equal(limit, 32768);
    assert_true(common_tool_name_ok("web_search"));
    assert_false(common_tool_name_ok("a\nb"));
    assert_false(common_tool_name_ok(""));
    assert_false(common_tool_name_ok("\xc3"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(array_grow_should_double_and_keep_what_it_held),
        cmocka_unit_test(array_grow_should_refuse_a_size_that_overflows),
        cmocka_unit_test(buf_should_add_and_detach_a_string),
        cmocka_unit_test(buf_sink_should_append_each_piece),
        cmocka_unit_test(fixbuf_sink_should_refuse_what_does_not_fit),
        cmocka_unit_test(dir_walk_up_should_find_a_parent_by_inode),
        cmocka_unit_test(env_should_take_an_empty_variable_as_unset),
        cmocka_unit_test(clock_should_not_go_back),
        cmocka_unit_test(settings_default_namespace_should_be_the_stores),
        cmocka_unit_test(policy_parse_should_judge_the_namespace_with_the_callers_rule),
        cmocka_unit_test(policy_rule_should_prefer_the_exact_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
