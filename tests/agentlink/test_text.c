/* test_text.c -- character counts, the head-and-tail cut, sizes. */
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

/* N lines "line 000001 ....\n" of WIDTH bytes each. */
static char *make_lines(size_t n, size_t width, size_t *len)
{
    char *s = malloc(n * width + 1);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++) {
        char *p = s + i * width;
        memset(p, '.', width);
        int k = snprintf(p, width, "line %06zu", i + 1);
        p[k] = ' ';
        p[width - 1] = '\n';
    }
    *len = n * width;
    return s;
}

static int valid_utf8(const unsigned char *s, size_t n)
{
    /* A compact checker independent of the library's decoder. */
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

static void text_info_should_count_code_points_and_lines(void **state)
{
    al_textinfo t;
    (void)state;
    al_text_info("h\xc3\xa9llo\n\xe2\x82\xac\n\xf0\x9f\x98\x80", 15, &t);
    assert_int_equal(t.chars, 9); /* h é l l o \n € \n 😀 */
    assert_int_equal(t.invalid_bytes, 0);
    assert_int_equal(t.lines, 3);
    al_text_info("", 0, &t);
    assert_int_equal(t.chars, 0);
    assert_int_equal(t.lines, 0);
}

static void text_info_should_count_each_invalid_byte_as_one_char(void **state)
{
    al_textinfo t;
    (void)state;
    /* a, stray continuation, truncated 3-byte start, overlong '/' (C0 AF) */
    al_text_info("a\x80\xe2\x82" "b\xc0\xaf", 7, &t);
    assert_int_equal(t.invalid_bytes, 5);
    assert_int_equal(t.chars, 7);
    /* UTF-16 surrogates encoded in UTF-8 are not valid either */
    al_text_info("\xed\xa0\x80", 3, &t);
    assert_int_equal(t.invalid_bytes, 3);
}

/* The word-at-a-time path: every mix of '\n', ASCII and UTF-8 at every
 * alignment, against a byte-by-byte count. */
static void text_info_should_count_the_same_at_any_alignment(void **state)
{
    static const char *const pieces[] = {"\n", "a", "\xc3\xa9", "\xff", "\n\n", "abcdefgh"};
    char buf[256];
    (void)state;
    srand(7);
    for (int round = 0; round < 2000; round++) {
        size_t n = 0, off = (size_t)(rand() % 8);
        uint64_t lines = 0, chars = 0, invalid = 0;
        al_textinfo t;
        while (n < 120) {
            const char *p = pieces[rand() % 6];
            for (const char *c = p; *c; c++)
                buf[off + n++] = *c;
            if (p[0] == '\xc3')
                chars += 1;
            else if (p[0] == '\xff')
                chars += 1, invalid += 1;
            else
                chars += strlen(p);
            for (const char *c = p; *c; c++)
                lines += *c == '\n';
        }
        if (buf[off + n - 1] != '\n')
            lines++;
        al_text_info(buf + off, n, &t);
        assert_int_equal(t.lines, lines);
        assert_int_equal(t.chars, chars);
        assert_int_equal(t.invalid_bytes, invalid);
    }
}

static void cut_should_leave_results_within_the_bound_alone(void **state)
{
    void *out = (void *)1;
    size_t n = 0;
    (void)state;
    assert_int_equal(al_cut("abcdef", 6, 6, &out, &n), 0);
    assert_null(out);
    assert_int_equal(n, 6);
}

static void cut_should_keep_head_and_tail_with_one_marker(void **state)
{
    size_t len, n;
    char *in = make_lines(10000, 50, &len), *out;
    (void)state;
    assert_int_equal(al_cut(in, len, 20000, (void **)&out, &n), 0);
    assert_non_null(out);
    assert_true(n <= 20000);
    assert_true(n > 19000);
    /* head starts the result, tail ends it */
    assert_memory_equal(out, in, 1000);
    assert_memory_equal(out + n - 1000, in + len - 1000, 1000);
    /* exactly one marker, on its own line, naming the bytes cut */
    char *m = strstr(out, "[... offloadfs: ");
    assert_non_null(m);
    assert_true(m > out && m[-1] == '\n');
    assert_null(strstr(m + 1, "[... offloadfs: "));
    size_t cut = strtoull(m + 16, NULL, 10);
    char *after = strchr(m, '\n') + 1;
    size_t head = (size_t)(m - out), tail = n - (size_t)(after - out);
    assert_int_equal(head + cut + tail, len);
    /* the tail gets three quarters of the room: most of what is kept */
    assert_true(tail > 2 * head);
    /* both edges on line boundaries */
    assert_int_equal(head % 50, 0);
    assert_int_equal(tail % 50, 0);
    free(out);
    free(in);
}

static void cut_should_never_exceed_the_bound(void **state)
{
    size_t len, n;
    char *in = make_lines(3000, 37, &len), *out;
    (void)state;
    for (uint64_t max = 64; max < len; max = max * 3 / 2 + 7) {
        assert_int_equal(al_cut(in, len, max, (void **)&out, &n), 0);
        assert_non_null(out);
        assert_true(n <= max);
        free(out);
    }
    free(in);
}

static void cut_should_not_split_characters(void **state)
{
    /* No newline at all, 3-byte characters: every cut lands mid-character
     * unless the cutter moves to a boundary. */
    size_t len = 3 * 50000, n;
    char *in = malloc(len), *out;
    (void)state;
    for (size_t i = 0; i < len; i += 3)
        memcpy(in + i, "\xe2\x82\xac", 3);
    for (uint64_t max = 1000; max < 1100; max++) {
        assert_int_equal(al_cut(in, len, max, (void **)&out, &n), 0);
        assert_true(n <= max);
        assert_true(valid_utf8((unsigned char *)out, n));
        free(out);
    }
    free(in);
}

static void cut_should_keep_only_the_tail_when_the_bound_is_tiny(void **state)
{
    char *out;
    size_t n;
    (void)state;
    assert_int_equal(al_cut("0123456789abcdefghij", 20, 5, (void **)&out, &n), 0);
    assert_int_equal(n, 5);
    assert_memory_equal(out, "fghij", 5);
    free(out);
}

static void cut_should_refuse_a_zero_bound(void **state)
{
    void *out;
    size_t n;
    (void)state;
    assert_int_equal(al_cut("abc", 3, 0, &out, &n), EINVAL);
}

static void size_parse_should_take_suffixes(void **state)
{
    uint64_t v;
    (void)state;
    assert_int_equal(al_size_parse("123", &v), 0);
    assert_int_equal(v, 123);
    assert_int_equal(al_size_parse("64K", &v), 0);
    assert_int_equal(v, 65536);
    assert_int_equal(al_size_parse("3m", &v), 0);
    assert_int_equal(v, 3u << 20);
    assert_int_equal(al_size_parse("1G", &v), 0);
    assert_int_equal(v, 1u << 30);
}

static void size_parse_should_refuse_bad_sizes(void **state)
{
    const char *bad[] = {"", "12Q", "-5", "+5", "0", "0K", "1KB", " 1", "1 ",
                         "18446744073709551616", "17179869184G", "K", "1.5M"};
    uint64_t v = 7;
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(al_size_parse(bad[i], &v), AL_ESIZE);
        assert_int_equal(v, 7);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(text_info_should_count_code_points_and_lines),
        cmocka_unit_test(text_info_should_count_each_invalid_byte_as_one_char),
        cmocka_unit_test(text_info_should_count_the_same_at_any_alignment),
        cmocka_unit_test(cut_should_leave_results_within_the_bound_alone),
        cmocka_unit_test(cut_should_keep_head_and_tail_with_one_marker),
        cmocka_unit_test(cut_should_never_exceed_the_bound),
        cmocka_unit_test(cut_should_not_split_characters),
        cmocka_unit_test(cut_should_keep_only_the_tail_when_the_bound_is_tiny),
        cmocka_unit_test(cut_should_refuse_a_zero_bound),
        cmocka_unit_test(size_parse_should_take_suffixes),
        cmocka_unit_test(size_parse_should_refuse_bad_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
