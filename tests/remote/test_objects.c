/* test_objects.c -- remote/ against a real radosgw: put, ranged get,
 * head, list, delete, multipart, names that need encoding. */
#include "tests/remote/rfx.h"

#include <errno.h>

typedef struct sinkbuf {
    unsigned char *p;
    size_t len, cap;
    unsigned calls;
} sinkbuf;

static int to_buf(void *arg, const void *data, size_t n)
{
    sinkbuf *b = arg;
    if (n > b->cap - b->len)
        return -1;
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->calls++;
    return 0;
}

static void put_get_should_round_trip_exact_bytes(void **state)
{
    struct rfx *f = *state;
    size_t n = 1u << 20;
    unsigned char *data = rfx_bytes(n, 1), *back = malloc(n + 16);
    size_t got = 0;
    /* How many attempts it took is the machine's load, not the code's: a
     * radosgw just started can stall past the first attempt's limit. */
    assert_int_equal(remote_put_buf(f->c, "default/one", data, n, NULL), 0);
    assert_string_equal(remote_conn_message(f->c), "");
    assert_int_equal(remote_get_buf(f->c, "default/one", 0, back, n + 16, &got), 0);
    assert_int_equal(got, n);
    assert_memory_equal(back, data, n);
    free(data);
    free(back);
}

static void get_should_stream_any_range(void **state)
{
    struct rfx *f = *state;
    size_t n = 300000;
    unsigned char *data = rfx_bytes(n, 2);
    assert_int_equal(remote_put_buf(f->c, "ns/r", data, n, NULL), 0);
    const struct { uint64_t off, len, want; } cases[] = {
        {0, 1, 1},        {1, 10, 10},         {4095, 4097, 4097}, {n - 5, 100, 5},
        {n - 1, 1, 1},    {n, 10, 0},          {n + 100, 10, 0},   {12345, UINT64_MAX, n - 12345},
        {0, UINT64_MAX, n},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sinkbuf b = {malloc(n + 1), 0, n + 1, 0};
        uint64_t got = 99;
        assert_int_equal(remote_get(f->c, "ns/r", cases[i].off, cases[i].len, to_buf, &b, &got), 0);
        assert_int_equal(got, cases[i].want);
        assert_int_equal(b.len, cases[i].want);
        if (b.len)
            assert_memory_equal(b.p, data + cases[i].off, b.len);
        free(b.p);
    }
    /* a large range arrives in pieces, not as one buffer */
    sinkbuf b = {malloc(n), 0, n, 0};
    assert_int_equal(remote_get(f->c, "ns/r", 0, n, to_buf, &b, NULL), 0);
    assert_true(b.calls > 1);
    free(b.p);
    free(data);
}

static void get_of_empty_object_should_deliver_nothing(void **state)
{
    struct rfx *f = *state;
    char buf[8];
    size_t got = 7;
    assert_int_equal(remote_put_buf(f->c, "ns/empty", "", 0, NULL), 0);
    assert_int_equal(remote_get_buf(f->c, "ns/empty", 0, buf, sizeof buf, &got), 0);
    assert_int_equal(got, 0);
}

static void head_should_return_metadata(void **state)
{
    struct rfx *f = *state;
    const char *tool = "web search \xc3\xa9t\xc3\xa9 100% \"q\"\n";
    const char *call = "call_\x01\xff/../x";
    remote_meta m = {tool, call, 123456, 1700000000};
    remote_info in;
    assert_int_equal(remote_put_buf(f->c, "ns/meta", "abc", 3, &m), 0);
    assert_int_equal(remote_head(f->c, "ns/meta", &in), 0);
    assert_int_equal(in.length, 3);
    assert_string_equal(in.tool, tool);
    assert_string_equal(in.call_id, call);
    assert_int_equal(in.size, 123456);
    assert_int_equal(in.created, 1700000000);
    assert_non_null(in.etag);
    assert_true(in.mtime > 1700000000);
    remote_info_clear(&in);
    /* without metadata: the object's own length and time */
    assert_int_equal(remote_put_buf(f->c, "ns/plain", "abcdef", 6, NULL), 0);
    assert_int_equal(remote_head(f->c, "ns/plain", &in), 0);
    assert_null(in.tool);
    assert_null(in.call_id);
    assert_int_equal(in.size, 6);
    assert_int_equal(in.created, in.mtime);
    remote_info_clear(&in);
    remote_info_clear(NULL);
}

static void get_first_should_answer_head_and_the_first_bytes(void **state)
{
    struct rfx *f = *state;
    size_t n = 300001;
    unsigned char *data = rfx_bytes(n, 7);
    sinkbuf b = {malloc(n), 0, n, 0};
    remote_meta m = {"grep", "c1", 400000, 1700000001};
    remote_info in, head;
    uint64_t got = 9;
    assert_int_equal(remote_put_buf(f->c, "ns/first", data, n, &m), 0);
    assert_int_equal(remote_head(f->c, "ns/first", &head), 0);
    /* a prefix: the bytes, and the object's length, not the part's */
    assert_int_equal(remote_get_first(f->c, "ns/first", 131072, to_buf, &b, &got, &in), 0);
    assert_int_equal(got, 131072);
    assert_int_equal(b.len, 131072);
    assert_memory_equal(b.p, data, 131072);
    assert_int_equal(in.length, n);
    assert_string_equal(in.etag, head.etag);
    assert_string_equal(in.tool, "grep");
    assert_string_equal(in.call_id, "c1");
    assert_int_equal(in.size, 400000);
    assert_int_equal(in.created, 1700000001);
    assert_int_equal(in.mtime, head.mtime);
    remote_info_clear(&in);
    /* more than the object holds: all of it */
    b.len = 0;
    assert_int_equal(remote_get_first(f->c, "ns/first", 1u << 20, to_buf, &b, &got, &in), 0);
    assert_int_equal(got, n);
    assert_memory_equal(b.p, data, n);
    assert_int_equal(in.length, n);
    remote_info_clear(&in);
    /* empty: no byte, length 0 */
    assert_int_equal(remote_put_buf(f->c, "ns/first0", "", 0, NULL), 0);
    b.len = 0;
    assert_int_equal(remote_get_first(f->c, "ns/first0", 4096, to_buf, &b, &got, &in), 0);
    assert_int_equal(got, 0);
    assert_int_equal(b.len, 0);
    assert_int_equal(in.length, 0);
    assert_non_null(in.etag);
    remote_info_clear(&in);
    assert_int_equal(remote_get_first(f->c, "ns/nothing", 4096, to_buf, &b, &got, &in), REMOTE_ENOTFOUND);
    assert_null(in.etag);
    remote_info_clear(&head);
    free(b.p);
    free(data);
}

static void missing_object_should_be_enotfound_with_message(void **state)
{
    struct rfx *f = *state;
    remote_info in;
    char buf[4];
    char want[300];
    assert_int_equal(remote_head(f->c, "ns/nothing", &in), REMOTE_ENOTFOUND);
    assert_int_equal(remote_get_buf(f->c, "ns/nothing", 0, buf, 4, NULL), REMOTE_ENOTFOUND);
    snprintf(want, sizeof want, "GET %s/ns/nothing: HTTP 404 NoSuchKey", f->url);
    assert_string_equal(remote_conn_message(f->c), want);
    assert_int_equal(remote_conn_attempts(f->c), 1); /* a 404 is not retried */
}

static void replace_should_serve_new_bytes(void **state)
{
    struct rfx *f = *state;
    char buf[16];
    size_t got;
    assert_int_equal(remote_put_buf(f->c, "ns/k", "first version", 13, NULL), 0);
    assert_int_equal(remote_put_buf(f->c, "ns/k", "second", 6, NULL), 0);
    assert_int_equal(remote_get_buf(f->c, "ns/k", 0, buf, sizeof buf, &got), 0);
    assert_int_equal(got, 6);
    assert_memory_equal(buf, "second", 6);
}

static void get_if_should_refuse_another_version(void **state)
{
    struct rfx *f = *state;
    remote_info in;
    sinkbuf b = {malloc(64), 0, 64, 0};
    assert_int_equal(remote_put_buf(f->c, "ns/v", "version one", 11, NULL), 0);
    assert_int_equal(remote_head(f->c, "ns/v", &in), 0);
    assert_int_equal(remote_get_if(f->c, "ns/v", in.etag, 8, 3, to_buf, &b, NULL), 0);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.p, "one", 3);
    assert_int_equal(remote_put_buf(f->c, "ns/v", "version two", 11, NULL), 0);
    b.len = 0;
    assert_int_equal(remote_get_if(f->c, "ns/v", in.etag, 0, 11, to_buf, &b, NULL), REMOTE_ECHANGED);
    assert_int_equal(b.len, 0);
    assert_non_null(strstr(remote_conn_message(f->c), "ns/v: the object was replaced"));
    assert_int_equal(remote_get_if(f->c, "ns/v", NULL, 8, 3, to_buf, &b, NULL), 0);
    assert_memory_equal(b.p, "two", 3);
    remote_info_clear(&in);
    free(b.p);
}

static void delete_should_remove_and_tolerate_missing(void **state)
{
    struct rfx *f = *state;
    remote_info in;
    assert_int_equal(remote_put_buf(f->c, "ns/d", "x", 1, NULL), 0);
    assert_int_equal(remote_delete(f->c, "ns/d"), 0);
    assert_int_equal(remote_head(f->c, "ns/d", &in), REMOTE_ENOTFOUND);
    assert_int_equal(remote_delete(f->c, "ns/d"), 0);
}

typedef struct names {
    char got[64][300];
    uint64_t size[64];
    int64_t mtime[64];
    unsigned n;
} names;

static int collect(void *arg, const char *name, uint64_t size, int64_t mtime)
{
    names *l = arg;
    if (l->n >= 64)
        return 77;
    snprintf(l->got[l->n], sizeof l->got[0], "%s", name);
    l->size[l->n] = size;
    l->mtime[l->n++] = mtime;
    return 0;
}

static void names_needing_encoding_should_round_trip(void **state)
{
    struct rfx *f = *state;
    /* keys may hold anything but '/', NUL and control bytes */
    const char *keys[] = {"ns/a b", "ns/p%41+&=?#", "ns/\xc3\xa9t\xc3\xa9~*!'()", "ns/x<y>&amp;"};
    names l = {0};
    for (size_t i = 0; i < 4; i++) {
        char buf[8];
        size_t got;
        assert_int_equal(remote_put_buf(f->c, keys[i], keys[i], 3, NULL), 0);
        assert_int_equal(remote_get_buf(f->c, keys[i], 0, buf, sizeof buf, &got), 0);
        assert_int_equal(got, 3);
    }
    assert_int_equal(remote_list(f->c, "ns/", collect, &l), 0);
    assert_int_equal(l.n, 4);
    int seen[4] = {0};
    for (unsigned i = 0; i < l.n; i++)
        for (size_t k = 0; k < 4; k++)
            seen[k] += strcmp(l.got[i], keys[k]) == 0;
    for (size_t k = 0; k < 4; k++)
        assert_int_equal(seen[k], 1);
}

static void list_should_page_through_everything(void **state)
{
    remote_options o = {.list_page = 3};
    struct rfx *f;
    rfx_setup_opt(state, &o);
    f = *state;
    names l = {0};
    char name[32];
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof name, "ns/k%02d", i);
        assert_int_equal(remote_put_buf(f->c, name, "0123456789", (size_t)i, NULL), 0);
    }
    assert_int_equal(remote_put_buf(f->c, "other/k", "z", 1, NULL), 0);
    assert_int_equal(remote_list(f->c, "ns/", collect, &l), 0);
    assert_int_equal(l.n, 10);
    for (unsigned i = 0; i < 10; i++) {
        snprintf(name, sizeof name, "ns/k%02u", i);
        assert_string_equal(l.got[i], name);
        assert_int_equal(l.size[i], i);
        assert_true(l.mtime[i] > 1700000000);
    }
    memset(&l, 0, sizeof l);
    assert_int_equal(remote_list(f->c, "", collect, &l), 0);
    assert_int_equal(l.n, 11);
    memset(&l, 0, sizeof l);
    assert_int_equal(remote_list(f->c, "none/", collect, &l), 0);
    assert_int_equal(l.n, 0);
    assert_int_equal(remote_check(f->c), 0);
    rfx_teardown(state);
}

static int stop_after_two(void *arg, const char *name, uint64_t size, int64_t mtime)
{
    (void)name;
    (void)size;
    (void)mtime;
    return ++*(int *)arg == 2 ? 42 : 0;
}

static void list_should_stop_when_the_callback_says(void **state)
{
    struct rfx *f = *state;
    int n = 0;
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "s/%d", i);
        assert_int_equal(remote_put_buf(f->c, name, "", 0, NULL), 0);
    }
    assert_int_equal(remote_list(f->c, "s/", stop_after_two, &n), 42);
    assert_int_equal(n, 2);
}

static void multipart_should_store_exact_bytes(void **state)
{
    remote_options o = {.part_bytes = 5u << 20, .multipart_over = 6u << 20};
    struct rfx *f;
    rfx_setup_opt(state, &o);
    f = *state;
    size_t n = (13u << 20) + 17; /* 3 parts, the last one short */
    unsigned char *data = rfx_bytes(n, 3);
    sinkbuf b = {malloc(n), 0, n, 0};
    remote_meta m = {"big", "c1", n, 1700000001};
    remote_info in;
    assert_int_equal(remote_put_buf(f->c, "ns/big", data, n, &m), 0);
    assert_int_equal(remote_head(f->c, "ns/big", &in), 0);
    assert_int_equal(in.length, n);
    assert_string_equal(in.tool, "big");
    assert_int_equal(in.created, 1700000001);
    assert_non_null(strchr(in.etag, '-')); /* a multipart ETag: "md5-3" */
    remote_info_clear(&in);
    assert_int_equal(remote_get(f->c, "ns/big", 0, UINT64_MAX, to_buf, &b, NULL), 0);
    assert_int_equal(b.len, n);
    assert_memory_equal(b.p, data, n);
    free(b.p);
    free(data);
    rfx_teardown(state);
}

static int failing_source(void *arg, uint64_t off, void *buf, size_t len)
{
    (void)arg;
    memset(buf, 'a', len);
    return off > 100000 ? -1 : 0;
}

static void failing_source_should_be_esource_and_store_nothing(void **state)
{
    struct rfx *f = *state;
    remote_info in;
    assert_int_equal(remote_put(f->c, "ns/fail", 1u << 20, failing_source, NULL, NULL), REMOTE_ESOURCE);
    assert_int_equal(remote_conn_attempts(f->c), 1);
    assert_non_null(strstr(remote_conn_message(f->c), "ns/fail: the data source failed"));
    assert_int_equal(remote_head(f->c, "ns/fail", &in), REMOTE_ENOTFOUND);
}

static int failing_sink(void *arg, const void *data, size_t n)
{
    (void)arg;
    (void)data;
    (void)n;
    return 1;
}

static void failing_sink_should_be_esource(void **state)
{
    struct rfx *f = *state;
    assert_int_equal(remote_put_buf(f->c, "ns/s", "abc", 3, NULL), 0);
    assert_int_equal(remote_get(f->c, "ns/s", 0, 3, failing_sink, NULL, NULL), REMOTE_ESOURCE);
    assert_int_equal(remote_conn_attempts(f->c), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(put_get_should_round_trip_exact_bytes, rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(get_should_stream_any_range, rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(get_of_empty_object_should_deliver_nothing, rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(head_should_return_metadata, rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(get_first_should_answer_head_and_the_first_bytes, rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(missing_object_should_be_enotfound_with_message, rfx_setup,
                                        rfx_teardown),
        cmocka_unit_test_setup_teardown(replace_should_serve_new_bytes, rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(get_if_should_refuse_another_version, rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(delete_should_remove_and_tolerate_missing, rfx_setup, rfx_teardown),
        cmocka_unit_test_setup_teardown(names_needing_encoding_should_round_trip, rfx_setup, rfx_teardown),
        cmocka_unit_test(list_should_page_through_everything),
        cmocka_unit_test_setup_teardown(list_should_stop_when_the_callback_says, rfx_setup, rfx_teardown),
        cmocka_unit_test(multipart_should_store_exact_bytes),
        cmocka_unit_test_setup_teardown(failing_source_should_be_esource_and_store_nothing, rfx_setup,
                                        rfx_teardown),
        cmocka_unit_test_setup_teardown(failing_sink_should_be_esource, rfx_setup, rfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
