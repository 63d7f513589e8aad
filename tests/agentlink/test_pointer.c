/* test_pointer.c -- the text that replaces an offloaded result. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>

#include "agentlink/agentlink.h"

#define PATH "/large_tool_results/call_1"

static char *pointer(const char *data, size_t len, uint64_t orig, const al_preview *pv)
{
    char *out = NULL;
    size_t n = 0;
    assert_int_equal(al_pointer_text(PATH, "bash", data, len, orig, pv, &out, &n), 0);
    assert_non_null(out);
    assert_int_equal(strlen(out), n);
    return out;
}

static void has(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("pointer text lacks '%s':\n%s", needle, text);
}

static void lacks(const char *text, const char *needle)
{
    if (strstr(text, needle))
        fail_msg("pointer text has '%s':\n%s", needle, text);
}

static int valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (k == 0 || i + k > n)
            return 0;
        for (size_t j = 1; j < k; j++)
            if ((s[i + j] & 0xc0) != 0x80)
                return 0;
        i += k;
    }
    return 1;
}

/* "line 1\nline 2\n...line N\n" */
static char *numbered(unsigned n, size_t *len)
{
    size_t cap = (size_t)n * 16 + 1, l = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    for (unsigned i = 1; i <= n; i++)
        l += (size_t)snprintf(s + l, cap - l, "line %u\n", i);
    *len = l;
    return s;
}

static void pointer_should_name_path_size_and_readers(void **state)
{
    size_t len;
    char *data = numbered(100, &len), *t;
    char size[64];
    (void)state;
    t = pointer(data, len, len, NULL);
    has(t, "\n  " PATH "\n");
    snprintf(size, sizeof size, "Size: %zu bytes, 100 lines.", len);
    has(t, size);
    has(t, "tool 'bash'");
    has(t, "cat " PATH);
    has(t, "head -n 100 " PATH);
    has(t, "grep -n 'PATTERN' " PATH);
    has(t, "sed -n '100,200p' " PATH);
    has(t, "\"No data available\"");
    has(t, "evicted");
    has(t, "run the tool again");
    lacks(t, "cut from");
    free(t);
    free(data);
}

static void pointer_should_preview_first_and_last_lines(void **state)
{
    size_t len;
    char *data = numbered(100, &len), *t;
    (void)state;
    t = pointer(data, len, len, NULL);
    has(t, "First 5 lines");
    has(t, "  1  line 1\n");
    has(t, "  5  line 5\n");
    lacks(t, "line 6\n");
    has(t, "Last 5 lines");
    has(t, " 96  line 96\n");
    has(t, "100  line 100\n");
    lacks(t, "line 95\n");
    free(t);
    free(data);
}

static void pointer_should_follow_preview_settings(void **state)
{
    al_preview pv = {2, 1, 1000};
    size_t len;
    char *data = numbered(50, &len), *t;
    (void)state;
    t = pointer(data, len, len, &pv);
    has(t, "First 2 lines");
    has(t, " 2  line 2\n");
    lacks(t, "line 3\n");
    has(t, "Last 1 lines");
    has(t, "50  line 50\n");
    lacks(t, "line 49\n");
    free(t);
    free(data);
}

static void pointer_should_show_few_lines_once(void **state)
{
    char *t;
    (void)state;
    t = pointer("alpha\nbeta\ngamma", 16, 16, NULL);
    has(t, "All its lines");
    has(t, "1  alpha\n2  beta\n3  gamma\n");
    lacks(t, "Last");
    free(t);
}

static void pointer_should_clip_long_lines(void **state)
{
    al_preview pv = {5, 5, 10};
    char *data = malloc(300001), *t;
    (void)state;
    memset(data, 'z', 300000);
    data[300000] = '\0';
    t = pointer(data, 300000, 300000, &pv);
    has(t, "1  zzzzzzzzzz [... 299990 more characters on this line]\n");
    lacks(t, "zzzzzzzzzzz");
    free(t);
    free(data);
}

static void pointer_should_stay_short_whatever_the_lines(void **state)
{
    /* 20 lines of 50,000 characters, preview of 1000 chars per line */
    size_t len = 20 * 50001;
    char *data = malloc(len), *t;
    size_t n;
    (void)state;
    memset(data, 'q', len);
    for (size_t i = 1; i <= 20; i++)
        data[i * 50001 - 1] = '\n';
    assert_int_equal(al_pointer_text(PATH, "bash", data, len, len, NULL, &t, &n), 0);
    assert_true(n < 8192);
    free(t);
    free(data);
}

static void pointer_should_stay_short_with_a_greedy_preview(void **state)
{
    /* 5000 lines of 300 characters, asking for 1000 + 1000 lines */
    al_preview pv = {1000, 1000, 100000};
    size_t len = 5000 * 301, n;
    char *data = malloc(len), *t;
    (void)state;
    memset(data, 'w', len);
    for (size_t i = 1; i <= 5000; i++)
        data[i * 301 - 1] = '\n';
    assert_int_equal(al_pointer_text(PATH, "bash", data, len, len, &pv, &t, &n), 0);
    assert_true(n < 8192 + 5 * strlen(PATH) + 4);
    has(t, "more lines not previewed]");
    has(t, "First 1000 lines");
    has(t, "Last 1000 lines:\n4001  www"); /* the tail gets its share */
    has(t, "No data available"); /* the reading advice survives */
    free(t);
    free(data);
}

static void pointer_should_say_when_the_result_was_cut(void **state)
{
    char *t;
    (void)state;
    t = pointer("head\n[... offloadfs: 100 bytes cut here ...]\ntail\n", 50, 150, NULL);
    has(t, "cut from 150 bytes");
    has(t, "[... offloadfs: N bytes cut here ...]");
    free(t);
}

static void pointer_should_be_valid_utf8_for_binary_results(void **state)
{
    const char bin[] = "ok\n\xff\xfe\x00\x01\x1b[31mred\x1b[0m\r\nend\x80";
    char *t;
    size_t n;
    (void)state;
    assert_int_equal(al_pointer_text(PATH, NULL, bin, sizeof bin - 1, sizeof bin - 1, NULL, &t, &n), 0);
    assert_true(valid_utf8((unsigned char *)t, n));
    assert_int_equal(strlen(t), n); /* no NUL inside */
    has(t, "bytes are not valid UTF-8");
    has(t, "This tool result");
    has(t, "\xef\xbf\xbd\xef\xbf\xbd"); /* FF FE shown as U+FFFD */
    has(t, "red\n");                     /* colours and CR stripped */
    lacks(t, "\x1b");
    lacks(t, "\r");
    free(t);
}

static void pointer_should_quote_paths_for_the_shell(void **state)
{
    char *t = NULL;
    (void)state;
    assert_int_equal(al_pointer_text("/r/it's here", "t", "x", 1, 1, NULL, &t, NULL), 0);
    has(t, "cat '/r/it'\\''s here'\n");
    has(t, "\n  /r/it's here\n");
    free(t);
}

static void pointer_should_refuse_a_null_path(void **state)
{
    char *t = NULL;
    (void)state;
    assert_int_equal(al_pointer_text(NULL, "t", "x", 1, 1, NULL, &t, NULL), EINVAL);
    assert_null(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pointer_should_name_path_size_and_readers),
        cmocka_unit_test(pointer_should_preview_first_and_last_lines),
        cmocka_unit_test(pointer_should_follow_preview_settings),
        cmocka_unit_test(pointer_should_show_few_lines_once),
        cmocka_unit_test(pointer_should_clip_long_lines),
        cmocka_unit_test(pointer_should_stay_short_whatever_the_lines),
        cmocka_unit_test(pointer_should_stay_short_with_a_greedy_preview),
        cmocka_unit_test(pointer_should_say_when_the_result_was_cut),
        cmocka_unit_test(pointer_should_be_valid_utf8_for_binary_results),
        cmocka_unit_test(pointer_should_quote_paths_for_the_shell),
        cmocka_unit_test(pointer_should_refuse_a_null_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
