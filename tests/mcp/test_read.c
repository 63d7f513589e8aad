/* test_read.c -- the MCP proxy's read tool (agentlink/mcp/read.c), its
 * pattern checks (pattern.c) and its bounded search (search.c), over a
 * real store in a temporary directory. */
#include "tests/mcp/fixture.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
