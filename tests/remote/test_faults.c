/* test_faults.c -- remote/ when things go wrong on a real radosgw: wrong
 * credentials, a missing bucket, nothing listening, radosgw stopped with
 * SIGSTOP (the bound), and recovery on the same connection. */
#include "tests/remote/rfx.h"

#include <errno.h>
#include <signal.h>

static void assert_no_secret(const char *msg)
{
    assert_null(strstr(msg, getenv("AWS_SECRET_ACCESS_KEY")));
    assert_null(strstr(msg, getenv("AWS_ACCESS_KEY_ID")));
}

/* A 403 is an answer, not a failure to retry: one attempt. Connect and
 * stall limits far above any delay a loaded machine or valgrind gives, so
 * that no first attempt times out before it (which would rightly be
 * retried, and make two). */
static void wrong_secret_should_be_edenied_without_leaking(void **state)
{
    (void)state;
    char url[256], want[300], *saved = strdup(getenv("AWS_SECRET_ACCESS_KEY"));
    remote_options o = {.connect_ms = 30000, .stall_s = 30, .retries = 2};
    remote *r;
    remote_conn *c;
    rfx_url(url, sizeof url);
    setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret-key", 1);
    assert_int_equal(remote_open(&r, url, &o, NULL, 0), 0);
    setenv("AWS_SECRET_ACCESS_KEY", saved, 1);
    assert_int_equal(remote_conn_new(&c, r), 0);
    assert_int_equal(remote_check(c), REMOTE_EDENIED);
    snprintf(want, sizeof want, "CHECK %s: HTTP 403 SignatureDoesNotMatch", url);
    assert_string_equal(remote_conn_message(c), want);
    assert_int_equal(remote_conn_attempts(c), 1);
    assert_int_equal(remote_put_buf(c, "ns/k", "x", 1, NULL), REMOTE_EDENIED);
    assert_no_secret(remote_conn_message(c));
    assert_null(strstr(remote_conn_message(c), "not-the-secret-key"));
    remote_conn_free(c);
    remote_close(r);
    free(saved);
}

static void unknown_key_id_should_be_edenied(void **state)
{
    (void)state;
    char url[256], *saved = strdup(getenv("AWS_ACCESS_KEY_ID"));
    remote *r;
    remote_conn *c;
    rfx_url(url, sizeof url);
    setenv("AWS_ACCESS_KEY_ID", "NOSUCHKEYID", 1);
    assert_int_equal(remote_open(&r, url, NULL, NULL, 0), 0);
    setenv("AWS_ACCESS_KEY_ID", saved, 1);
    assert_int_equal(remote_conn_new(&c, r), 0);
    assert_int_equal(remote_check(c), REMOTE_EDENIED);
    assert_non_null(strstr(remote_conn_message(c), "HTTP 403 InvalidAccessKeyId"));
    assert_null(strstr(remote_conn_message(c), "NOSUCHKEYID"));
    remote_conn_free(c);
    remote_close(r);
    free(saved);
}

static void session_token_should_never_show(void **state)
{
    (void)state;
    char url[256];
    remote *r;
    remote_conn *c;
    snprintf(url, sizeof url, "s3://offloadfs-nosuch-%ld/p", (long)getpid());
    setenv("AWS_SESSION_TOKEN", "tok-SECRET-0123456789", 1);
    assert_int_equal(remote_open(&r, url, NULL, NULL, 0), 0);
    unsetenv("AWS_SESSION_TOKEN");
    assert_int_equal(remote_conn_new(&c, r), 0);
    /* radosgw signs the token in and ignores it for a plain user */
    assert_int_equal(remote_check(c), REMOTE_ENOBUCKET);
    assert_true(strlen(remote_conn_message(c)) > 0);
    assert_null(strstr(remote_conn_message(c), "tok-SECRET"));
    assert_no_secret(remote_conn_message(c));
    remote_conn_free(c);
    remote_close(r);
}

static void missing_bucket_should_be_enobucket(void **state)
{
    (void)state;
    char url[256], want[300];
    remote *r;
    remote_conn *c;
    snprintf(url, sizeof url, "s3://offloadfs-nosuch-%ld/p", (long)getpid());
    assert_int_equal(remote_open(&r, url, NULL, NULL, 0), 0);
    assert_int_equal(remote_conn_new(&c, r), 0);
    assert_int_equal(remote_check(c), REMOTE_ENOBUCKET);
    snprintf(want, sizeof want, "CHECK %s: HTTP 404 NoSuchBucket", url);
    assert_string_equal(remote_conn_message(c), want);
    assert_int_equal(remote_put_buf(c, "ns/k", "x", 1, NULL), REMOTE_ENOBUCKET);
    remote_conn_free(c);
    remote_close(r);
}

static void nothing_listening_should_be_edown_after_retries(void **state)
{
    (void)state;
    char url[256], *saved = strdup(getenv("AWS_ENDPOINT_URL"));
    remote_options o = {.retries = 2, .backoff_ms = 50};
    remote *r;
    remote_conn *c;
    rfx_url(url, sizeof url);
    /* port 1 on loopback: refused at once */
    setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1", 1);
    assert_int_equal(remote_open(&r, url, &o, NULL, 0), 0);
    setenv("AWS_ENDPOINT_URL", saved, 1);
    assert_int_equal(remote_conn_new(&c, r), 0);
    double t0 = rfx_now();
    assert_int_equal(remote_put_buf(c, "ns/k", "x", 1, NULL), REMOTE_EDOWN);
    double dt = rfx_now() - t0;
    assert_true(dt >= 0.25 && dt < 10.0); /* 50 + 200 ms of backoff; above: a hang guard */
    assert_int_equal(remote_conn_attempts(c), 3);
    assert_non_null(strstr(remote_conn_message(c), "(curl 7), 3 attempts"));
    remote_conn_free(c);
    remote_close(r);
    free(saved);
}

static pid_t rgw_pid(void)
{
    char path[512];
    long pid = 0;
    snprintf(path, sizeof path, "%s/run/client.rgw.offloadfs.pid", getenv("OFFLOADFS_S3_DIR"));
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    assert_int_equal(fscanf(fp, "%ld", &pid), 1);
    fclose(fp);
    assert_true(pid > 1);
    return (pid_t)pid;
}

static int cont_teardown(void **state)
{
    kill(rgw_pid(), SIGCONT); /* whatever failed, the server runs on */
    return rfx_teardown(state);
}

static int stop_setup(void **state)
{
    remote_options o = {.connect_ms = 500, .stall_s = 1, .retries = 1, .backoff_ms = 100};
    return rfx_setup_opt(state, &o);
}

/* The bound: 2 attempts x (0.5 s connect + 1 s stall) + 0.1 s = 3.1 s. A
 * stopped radosgw still accepts connections (the kernel does), so it is
 * the stall limit that ends each attempt. The time is checked from below
 * exactly (two stalls of 1 s) and from above only as "bounded" (10 x the
 * bound): a loaded machine or valgrind adds its own delays; the attempts
 * are counted exactly. */
static void stopped_server_should_fail_within_the_bound_and_recover(void **state)
{
    struct rfx *f = *state;
    size_t n = 200000, got;
    unsigned char *data = rfx_bytes(n, 4), *back = malloc(n);
    assert_int_equal(remote_bound_ms(f->r), 3100);
    assert_int_equal(remote_put_buf(f->c, "ns/k", data, n, NULL), 0);
    pid_t pid = rgw_pid();
    rfx_stop(pid);
    double t0 = rfx_now();
    assert_int_equal(remote_get_buf(f->c, "ns/k", 0, back, n, &got), REMOTE_EDOWN);
    double dt = rfx_now() - t0;
    fprintf(stderr, "GET on a stopped radosgw failed after %.2f s: %s\n", dt, remote_conn_message(f->c));
    assert_true(dt >= 1.9 && dt <= 31.0);
    assert_int_equal(remote_conn_attempts(f->c), 2);
    assert_non_null(strstr(remote_conn_message(f->c), "stalled, nothing moved for 1 s, 2 attempts"));
    t0 = rfx_now();
    assert_int_equal(remote_put_buf(f->c, "ns/k2", data, n, NULL), REMOTE_EDOWN);
    dt = rfx_now() - t0;
    fprintf(stderr, "PUT on a stopped radosgw failed after %.2f s: %s\n", dt, remote_conn_message(f->c));
    assert_true(dt >= 1.9 && dt <= 31.0);
    assert_int_equal(kill(pid, SIGCONT), 0);
    /* the same connection works again, no reopen */
    assert_int_equal(remote_get_buf(f->c, "ns/k", 0, back, n, &got), 0);
    assert_int_equal(got, n);
    assert_memory_equal(back, data, n);
    assert_int_equal(remote_put_buf(f->c, "ns/k2", data, 10, NULL), 0);
    free(data);
    free(back);
}

int main(void)
{
    rfx_bucket();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wrong_secret_should_be_edenied_without_leaking),
        cmocka_unit_test(unknown_key_id_should_be_edenied),
        cmocka_unit_test(session_token_should_never_show),
        cmocka_unit_test(missing_bucket_should_be_enobucket),
        cmocka_unit_test(nothing_listening_should_be_edown_after_retries),
        cmocka_unit_test_setup_teardown(stopped_server_should_fail_within_the_bound_and_recover, stop_setup,
                                        cont_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
