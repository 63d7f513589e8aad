/* test_answer.c -- the readers of S3 answers (remote/answer.c) and the
 * escaping of network text (remote/text.c), without a server: each takes
 * the answer as hostile. (tests/remote/test_hostile_*.sh drive the same
 * logic through a real mount and a misbehaving server; fuzz_s3 fuzzes it.) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "remote/remote_int.h"

static void crange_should_accept_exactly_the_range_asked(void **state)
{
    crange cr;
    char why[256];
    (void)state;
    assert_int_equal(remote_crange_check("bytes 131072-393215/600000", 131072, 393215, &cr, why, sizeof why), 0);
    assert_true(cr.first == 131072 && cr.last == 393215 && cr.total == 600000);
    /* cut at the object's end, asked open-ended or past it */
    assert_int_equal(remote_crange_check("bytes 599990-599999/600000", 599990, UINT64_MAX, &cr, why, sizeof why), 0);
    assert_int_equal(remote_crange_check("bytes 599990-599999/600000", 599990, 700000, &cr, why, sizeof why), 0);
}

static void crange_should_refuse_another_range(void **state)
{
    crange cr;
    char why[256];
    (void)state;
    assert_int_equal(remote_crange_check("bytes 0-262143/600000", 131072, 393215, &cr, why, sizeof why), -1);
    assert_string_equal(why, "the server answered Content-Range 'bytes 0-262143/600000' to bytes=131072-393215");
    /* shorter than asked though the object goes on */
    assert_int_equal(remote_crange_check("bytes 131072-131073/600000", 131072, 393215, &cr, why, sizeof why), -1);
    /* longer than asked */
    assert_int_equal(remote_crange_check("bytes 0-99/600000", 0, 9, &cr, why, sizeof why), -1);
    /* past the length it gives */
    assert_int_equal(remote_crange_check("bytes 0-9/5", 0, 9, &cr, why, sizeof why), -1);
    assert_int_equal(remote_crange_check(NULL, 0, 9, &cr, why, sizeof why), -1);
    assert_string_equal(why, "a 206 answer to bytes=0-9 without a Content-Range");
}

static void crange_should_refuse_an_unknown_or_malformed_length(void **state)
{
    crange cr;
    char why[256];
    (void)state;
    assert_int_equal(remote_crange_check("bytes 0-10/*", 0, 131071, &cr, why, sizeof why), -1);
    assert_string_equal(why, "Content-Range 'bytes 0-10/*' answering bytes=0-131071 gives no object length");
    static const char *bad[] = {"bytes 0-9/1e3", "bytes -1-9/10", "bytes 0-9/", "bytes 0-9", "0-9/10",
                                "bytes 0-9/18446744073709551616", "bytes  0-9/10", "bytes 0-9/10 "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(remote_crange_check(bad[i], 0, 9, &cr, why, sizeof why), -1);
}

static void etag_should_be_printable_and_short(void **state)
{
    char long_tag[200];
    (void)state;
    assert_true(remote_etag_ok("\"9b2cf535f27731c974343645a3985328\""));
    assert_true(remote_etag_ok("W/\"x\""));
    assert_false(remote_etag_ok(""));
    assert_false(remote_etag_ok("\"a b\""));
    assert_false(remote_etag_ok("\"a\x1b\""));
    memset(long_tag, 'a', sizeof long_tag - 1);
    long_tag[sizeof long_tag - 1] = '\0';
    assert_false(remote_etag_ok(long_tag));
}

static void headers_should_read_numbers_strictly(void **state)
{
    remote_info in;
    int oom = 0;
    static const char *lines[] = {"Content-Length: 12\r\n", "ETag: \"a b\"\r\n", "x-amz-meta-size: 99x\r\n",
                                  "Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n",
                                  "x-amz-meta-created: -5\r\n"};
    (void)state;
    memset(&in, 0, sizeof in);
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        remote_hdr_info(&in, lines[i], strlen(lines[i]), &oom);
    assert_int_equal(oom, 0);
    assert_int_equal(in.length, 12);
    assert_null(in.etag); /* unusable in an If-Match: none */
    assert_int_equal(in.size, 0);
    assert_int_equal(in.created, 0);
    assert_int_equal(in.mtime, 784111777);
    remote_info_clear(&in);
}

typedef struct names {
    char v[8][64];
    unsigned n;
} names;

static int take(void *arg, const char *name, uint64_t size, int64_t mtime)
{
    names *l = arg;
    (void)size;
    (void)mtime;
    if (l->n < 8)
        snprintf(l->v[l->n], sizeof l->v[0], "%s", name);
    l->n++;
    return 0;
}

static void page_should_hand_on_only_keys_under_the_prefix(void **state)
{
    static const char body[] =
        "<ListBucketResult><Contents><Key>pfx/a</Key></Contents><Contents><Key>pfx</Key></Contents>"
        "<Contents><Key>pfx/defaultXb</Key></Contents><Contents><Key>pfx/default/</Key></Contents>"
        "<Contents><Key>other/default/x</Key></Contents><Contents><Key>pfx/default/k1</Key>"
        "<Size>5</Size></Contents><IsTruncated>false</IsTruncated></ListBucketResult>";
    names l = {0};
    char *token = (char *)1, why[160];
    (void)state;
    assert_int_equal(remote_list_page_parse(body, strlen(body), "pfx/default/", 4, take, &l, &token, why, sizeof why), 0);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.v[0], "default/k1");
    assert_null(token);
}

static void page_should_refuse_what_is_not_a_listing(void **state)
{
    static const char err[] = "<Error><Code>NoSuchBucket</Code></Error>";
    static const char notoken[] = "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>";
    static const char token[] = "<ListBucketResult><IsTruncated>true</IsTruncated>"
                                "<NextContinuationToken>t1</NextContinuationToken></ListBucketResult>";
    names l = {0};
    char *t, why[160];
    (void)state;
    assert_int_equal(remote_list_page_parse(err, strlen(err), "", 0, take, &l, &t, why, sizeof why), REMOTE_EPROTO);
    assert_string_equal(why, "the answer is not a ListBucketResult");
    assert_int_equal(remote_list_page_parse(notoken, strlen(notoken), "", 0, take, &l, &t, why, sizeof why),
                     REMOTE_EPROTO);
    assert_null(t);
    assert_int_equal(remote_list_page_parse(token, strlen(token), "", 0, take, &l, &t, why, sizeof why), 0);
    assert_string_equal(t, "t1");
    free(t);
}

static void escape_should_leave_no_control_character(void **state)
{
    char out[128], small[8];
    (void)state;
    remote_text_escape(out, sizeof out, "\x1b[31mAccessDenied\noffloadfs: forged\\");
    assert_string_equal(out, "\\x1b[31mAccessDenied\\noffloadfs: forged\\\\");
    /* C1 (CSI as U+009B), a bidi override, invalid bytes; plain UTF-8 kept */
    remote_text_escape(out, sizeof out, "a\xc2\x9b" "b\xe2\x80\xae" "c\xff\xc3\xa9");
    assert_string_equal(out, "a\\u009bb\\u202ec\\xff\xc3\xa9");
    /* cut between escapes, never inside one */
    assert_int_equal(remote_text_escape(small, sizeof small, "ab\x1b\x1b"), 6);
    assert_string_equal(small, "ab\\x1b");
}

static void s3_error_code_should_be_escaped_when_shown(void **state)
{
    static const char body[] = "<Error><Code>\x1b[31mX&#10;Y</Code></Error>";
    char code[64], out[128];
    (void)state;
    remote_s3_error_code(body, strlen(body), code, sizeof code);
    assert_string_equal(code, "\x1b[31mX\nY");
    remote_text_escape(out, sizeof out, code);
    assert_string_equal(out, "\\x1b[31mX\\nY");
}

static void numbers_should_be_digits_only(void **state)
{
    uint64_t v;
    (void)state;
    assert_int_equal(remote_dec_parse("18446744073709551615", 20, &v), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(remote_dec_parse("18446744073709551616", 20, &v), -1);
    assert_int_equal(remote_dec_parse("+1", 2, &v), -1);
    assert_int_equal(remote_dec_parse("", 0, &v), -1);
    assert_int_equal(remote_http_date_parse("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777);
    assert_int_equal(remote_http_date_parse("Sun, 06 Nov 1994 08:49:37 UTC"), 0);
    assert_int_equal(remote_http_date_parse("Sun, 06 Xyz 1994 08:49:37 GMT"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(crange_should_accept_exactly_the_range_asked),
        cmocka_unit_test(crange_should_refuse_another_range),
        cmocka_unit_test(crange_should_refuse_an_unknown_or_malformed_length),
        cmocka_unit_test(etag_should_be_printable_and_short),
        cmocka_unit_test(headers_should_read_numbers_strictly),
        cmocka_unit_test(page_should_hand_on_only_keys_under_the_prefix),
        cmocka_unit_test(page_should_refuse_what_is_not_a_listing),
        cmocka_unit_test(escape_should_leave_no_control_character),
        cmocka_unit_test(s3_error_code_should_be_escaped_when_shown),
        cmocka_unit_test(numbers_should_be_digits_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
