/* test_config.c -- remote_open(): the URL, and endpoint, region and
 * credentials from the AWS variables and shared files. The profile case
 * also signs real requests with what it read. */
#include "tests/remote/rfx.h"

#include <errno.h>
#include <sys/stat.h>

static const char *vars[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                             "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL_S3",
                             "AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
                             "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "HOME"};
#define NVARS (sizeof vars / sizeof vars[0])

struct cfx {
    char *saved[NVARS];
    char home[64];
};

static int cfx_setup(void **state)
{
    struct cfx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    rfx_bucket();
    for (size_t i = 0; i < NVARS; i++) {
        const char *v = getenv(vars[i]);
        f->saved[i] = v ? strdup(v) : NULL;
    }
    snprintf(f->home, sizeof f->home, "/tmp/offloadfs-rc.XXXXXX");
    assert_non_null(mkdtemp(f->home));
    setenv("HOME", f->home, 1);
    *state = f;
    return 0;
}

static int cfx_teardown(void **state)
{
    struct cfx *f = *state;
    char cmd[128];
    for (size_t i = 0; i < NVARS; i++) {
        if (f->saved[i])
            setenv(vars[i], f->saved[i], 1);
        else
            unsetenv(vars[i]);
        free(f->saved[i]);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->home);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/.aws", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/.aws/%s", dir, name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    assert_int_equal(fclose(fp), 0);
}

static void url_check_should_name_the_rule(void **state)
{
    (void)state;
    char msg[200];
    const char *bad[] = {"", "http://bucket/x", "s3://", "s3://ab", "s3://Bucket", "s3://-bucket",
                         "s3://b_c/x//y", "s3://bucket/a\tb"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        msg[0] = '\0';
        assert_int_equal(remote_url_check(bad[i], msg, sizeof msg), REMOTE_ECONFIG);
        assert_true(strlen(msg) > 10);
    }
    assert_int_equal(remote_url_check("s3://abc", msg, sizeof msg), 0);
    assert_int_equal(remote_url_check("s3://my.bucket-1/a/b/", msg, sizeof msg), 0);
    assert_int_equal(remote_url_check("s3://bucket", NULL, 0), 0);
    remote_url_check("s3://Bucket/x", msg, sizeof msg);
    assert_string_equal(msg, "remote 's3://Bucket/x': bucket name 'Bucket' is not 3-63 of a-z, 0-9, '.', '-'");
}

static void open_should_split_bucket_and_prefix(void **state)
{
    (void)state;
    remote *r;
    assert_int_equal(remote_open(&r, "s3://abc/one//two", NULL, NULL, 0), REMOTE_ECONFIG);
    assert_int_equal(remote_open(&r, "s3://abc//one/two/", NULL, NULL, 0), 0);
    assert_string_equal(remote_bucket(r), "abc");
    assert_string_equal(remote_prefix(r), "one/two");
    remote_close(r);
    assert_int_equal(remote_open(&r, "s3://abc", NULL, NULL, 0), 0);
    assert_string_equal(remote_prefix(r), "");
    remote_close(r);
    remote_close(NULL);
}

static void endpoint_and_region_should_follow_precedence(void **state)
{
    (void)state;
    remote *r;
    setenv("AWS_ENDPOINT_URL", "http://one.example:1/", 1);
    setenv("AWS_ENDPOINT_URL_S3", "http://two.example:2", 1);
    assert_int_equal(remote_open(&r, "s3://abc", NULL, NULL, 0), 0);
    assert_string_equal(remote_endpoint(r), "http://two.example:2");
    remote_close(r);
    unsetenv("AWS_ENDPOINT_URL_S3");
    assert_int_equal(remote_open(&r, "s3://abc", NULL, NULL, 0), 0);
    assert_string_equal(remote_endpoint(r), "http://one.example:1");
    remote_close(r);
    /* AWS itself: virtual-hosted, in the region's endpoint */
    unsetenv("AWS_ENDPOINT_URL");
    setenv("AWS_DEFAULT_REGION", "ap-south-1", 1);
    setenv("AWS_REGION", "eu-west-3", 1);
    assert_int_equal(remote_open(&r, "s3://abc/p", NULL, NULL, 0), 0);
    assert_string_equal(remote_endpoint(r), "https://abc.s3.eu-west-3.amazonaws.com");
    remote_close(r);
    unsetenv("AWS_REGION");
    assert_int_equal(remote_open(&r, "s3://abc/p", NULL, NULL, 0), 0);
    assert_string_equal(remote_endpoint(r), "https://abc.s3.ap-south-1.amazonaws.com");
    remote_close(r);
    char msg[200];
    setenv("AWS_ENDPOINT_URL", "ftp://x", 1);
    assert_int_equal(remote_open(&r, "s3://abc/p", NULL, msg, sizeof msg), REMOTE_ECONFIG);
    assert_string_equal(msg, "S3 endpoint 'ftp://x' is not an http:// or https:// URL");
}

static void missing_credentials_should_say_what_to_set(void **state)
{
    (void)state;
    remote *r = (remote *)1;
    char msg[200];
    unsetenv("AWS_SECRET_ACCESS_KEY");
    assert_int_equal(remote_open(&r, "s3://abc", NULL, msg, sizeof msg), REMOTE_ECONFIG);
    assert_null(r);
    assert_string_equal(msg, "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
    unsetenv("AWS_ACCESS_KEY_ID");
    assert_int_equal(remote_open(&r, "s3://abc", NULL, msg, sizeof msg), REMOTE_ECONFIG);
    assert_non_null(strstr(msg, "no S3 credentials"));
    setenv("AWS_PROFILE", "nope", 1);
    assert_int_equal(remote_open(&r, "s3://abc", NULL, msg, sizeof msg), REMOTE_ECONFIG);
    assert_non_null(strstr(msg, "AWS profile 'nope' is in neither"));
}

/* The keys from the server's env go into the files; the variables go. */
static void profile_should_supply_credentials_region_and_endpoint(void **state)
{
    struct cfx *f = *state;
    char text[1024], url[256], buf[8];
    size_t got;
    remote *r;
    remote_conn *c;
    snprintf(text, sizeof text,
             "# test\n[default]\naws_access_key_id = wrong\naws_secret_access_key = wrong\n\n"
             "[dev]\n  aws_access_key_id=%s\naws_secret_access_key = %s \n",
             getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY"));
    write_file(f->home, "credentials", text);
    snprintf(text, sizeof text, "[profile dev]\nregion = us-east-1\nendpoint_url = %s\n",
             getenv("AWS_ENDPOINT_URL"));
    write_file(f->home, "config", text);
    const char *endpoint = getenv("AWS_ENDPOINT_URL");
    char ep[128];
    snprintf(ep, sizeof ep, "%s", endpoint);
    rfx_url(url, sizeof url);
    for (size_t i = 0; i < NVARS - 1; i++) /* all but HOME */
        unsetenv(vars[i]);
    setenv("AWS_PROFILE", "dev", 1);
    assert_int_equal(remote_open(&r, url, NULL, NULL, 0), 0);
    assert_string_equal(remote_endpoint(r), ep);
    assert_int_equal(remote_conn_new(&c, r), 0);
    assert_int_equal(remote_put_buf(c, "ns/p", "pro", 3, NULL), 0);
    assert_int_equal(remote_get_buf(c, "ns/p", 0, buf, sizeof buf, &got), 0);
    assert_int_equal(got, 3);
    assert_memory_equal(buf, "pro", 3);
    remote_conn_free(c);
    remote_close(r);
    /* the default profile's keys are wrong: the server says so */
    unsetenv("AWS_PROFILE");
    setenv("AWS_ENDPOINT_URL", ep, 1);
    assert_int_equal(remote_open(&r, url, NULL, NULL, 0), 0);
    assert_int_equal(remote_conn_new(&c, r), 0);
    assert_int_equal(remote_check(c), REMOTE_EDENIED);
    remote_conn_free(c);
    remote_close(r);
}

static void strerror_should_describe_every_code(void **state)
{
    (void)state;
    for (int e = REMOTE_ERR_BASE - 9; e <= REMOTE_ERR_BASE - 1; e++)
        assert_string_not_equal(remote_strerror(e), "unknown remote error");
    assert_string_equal(remote_strerror(REMOTE_ERR_BASE - 10), "unknown remote error");
    assert_string_equal(remote_strerror(ENOMEM), strerror(ENOMEM));
    assert_true(remote_err_transient(REMOTE_EDOWN));
    assert_false(remote_err_transient(REMOTE_EDENIED));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(url_check_should_name_the_rule, cfx_setup, cfx_teardown),
        cmocka_unit_test_setup_teardown(open_should_split_bucket_and_prefix, cfx_setup, cfx_teardown),
        cmocka_unit_test_setup_teardown(endpoint_and_region_should_follow_precedence, cfx_setup, cfx_teardown),
        cmocka_unit_test_setup_teardown(missing_credentials_should_say_what_to_set, cfx_setup, cfx_teardown),
        cmocka_unit_test_setup_teardown(profile_should_supply_credentials_region_and_endpoint, cfx_setup,
                                        cfx_teardown),
        cmocka_unit_test_setup_teardown(strerror_should_describe_every_code, cfx_setup, cfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
