/* config.c -- remote_open(): the s3:// URL, then endpoint, region and
 * credentials from the AWS conventions (variables first, then the profile
 * in the shared files). Nothing here touches the network. */
#include "remote/profile.h"
#include "remote/remote_int.h"
#include "common/env.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void say(char *msg, size_t msglen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *msg, size_t msglen, const char *fmt, ...)
{
    if (!msg || msglen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
}

/* AWS bucket rules (3-63 of a-z 0-9 . -, starting and ending with a letter
 * or digit), '_' also allowed for older buckets on other servers. */
static int bucket_ok(const char *b, size_t n)
{
    if (n < 3 || n > 63)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = b[i];
        int alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
        if (!alnum && ch != '.' && ch != '-' && ch != '_')
            return 0;
        if ((i == 0 || i == n - 1) && !alnum)
            return 0;
    }
    return 1;
}

/* Splits URL into a new bucket and prefix. 0, REMOTE_ECONFIG or ENOMEM. */
static int url_split(const char *url, char **bucket, char **prefix, char *msg, size_t msglen)
{
    *bucket = *prefix = NULL;
    if (!url || strncmp(url, "s3://", 5) != 0) {
        say(msg, msglen, "remote '%s' does not start with s3://", url ? url : "");
        return REMOTE_ECONFIG;
    }
    const char *b = url + 5, *slash = strchr(b, '/');
    size_t bn = slash ? (size_t)(slash - b) : strlen(b);
    if (!bucket_ok(b, bn)) {
        say(msg, msglen, "remote '%s': bucket name '%.*s' is not 3-63 of a-z, 0-9, '.', '-'",
            url, (int)bn, b);
        return REMOTE_ECONFIG;
    }
    const char *p = slash ? slash : b + bn;
    while (*p == '/')
        p++;
    size_t pn = strlen(p);
    while (pn > 0 && p[pn - 1] == '/')
        pn--;
    for (size_t i = 0; i < pn; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch < 0x20 || ch == 0x7f || (ch == '/' && p[i + 1] == '/')) {
            say(msg, msglen, "remote '%s': the prefix holds a control character or '//'", url);
            return REMOTE_ECONFIG;
        }
    }
    *bucket = strndup(b, bn);
    *prefix = strndup(p, pn);
    if (!*bucket || !*prefix) {
        free(*bucket);
        free(*prefix);
        *bucket = *prefix = NULL;
        return ENOMEM;
    }
    return 0;
}

int remote_url_check(const char *url, char *msg, size_t msglen)
{
    char *b, *p;
    int rc = url_split(url, &b, &p, msg, msglen);
    free(b);
    free(p);
    return rc;
}

enum { K_ID, K_SECRET, K_TOKEN, K_REGION, K_ENDPOINT, K_N };

/* Reads the profile's keys from the credentials file, then the config
 * file. 0, REMOTE_ECONFIG (a named profile found in neither, an
 * unreadable file) or ENOMEM. */
static int read_profile(profile_kv *kv, char *msg, size_t msglen)
{
    const char *name = common_env("AWS_PROFILE");
    if (!name)
        name = common_env("AWS_DEFAULT_PROFILE");
    int named = name != NULL, found_c = 0, found_f = 0, rc;
    if (!name)
        name = "default";
    char *cred = remote_profile_path("AWS_SHARED_CREDENTIALS_FILE", "credentials");
    char *conf = remote_profile_path("AWS_CONFIG_FILE", "config");
    char section[300];
    rc = cred ? remote_profile_read(cred, name, kv, K_N, &found_c) : 0;
    if (rc == 0 && conf) {
        if (strcmp(name, "default") == 0)
            snprintf(section, sizeof section, "default");
        else
            snprintf(section, sizeof section, "profile %s", name);
        rc = remote_profile_read(conf, section, kv, K_N, &found_f);
        if (rc == 0 && !found_f) /* some write [default] as [profile default] */
            rc = remote_profile_read(conf, section[0] == 'd' ? "profile default" : name, kv, K_N, &found_f);
    }
    if (rc != 0 && rc != ENOMEM) {
        say(msg, msglen, "cannot read the AWS files '%s', '%s': %s", cred ? cred : "-",
            conf ? conf : "-", strerror(rc));
        rc = REMOTE_ECONFIG;
    } else if (rc == 0 && named && !found_c && !found_f) {
        say(msg, msglen, "AWS profile '%s' is in neither '%s' nor '%s'", name, cred ? cred : "-",
            conf ? conf : "-");
        rc = REMOTE_ECONFIG;
    }
    free(cred);
    free(conf);
    return rc;
}

/* Credentials: both variables, or neither (then the profile). */
static int take_credentials(remote *r, profile_kv *kv, char *msg, size_t msglen)
{
    const char *id = common_env("AWS_ACCESS_KEY_ID"), *sec = common_env("AWS_SECRET_ACCESS_KEY");
    if ((id != NULL) != (sec != NULL)) {
        say(msg, msglen, "%s is set but %s is not", id ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
            id ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
        return REMOTE_ECONFIG;
    }
    if (id) {
        const char *tok = common_env("AWS_SESSION_TOKEN");
        r->access = strdup(id);
        r->secret = strdup(sec);
        r->token = tok ? strdup(tok) : NULL;
        if (!r->access || !r->secret || (tok && !r->token))
            return ENOMEM;
        return 0;
    }
    if (!kv[K_ID].value || !kv[K_SECRET].value) {
        say(msg, msglen, "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                         "or AWS_PROFILE with ~/.aws/credentials");
        return REMOTE_ECONFIG;
    }
    r->access = kv[K_ID].value;
    r->secret = kv[K_SECRET].value;
    r->token = kv[K_TOKEN].value;
    kv[K_ID].value = kv[K_SECRET].value = kv[K_TOKEN].value = NULL;
    return 0;
}

/* Endpoint and addressing: a custom endpoint path-style, AWS vhost. */
static int take_endpoint(remote *r, const char *region, const char *conf_ep, char *msg, size_t msglen)
{
    const char *ep = common_env("AWS_ENDPOINT_URL_S3");
    if (!ep)
        ep = common_env("AWS_ENDPOINT_URL");
    if (!ep)
        ep = conf_ep;
    size_t n;
    if (ep) {
        if (strncmp(ep, "http://", 7) != 0 && strncmp(ep, "https://", 8) != 0) {
            say(msg, msglen, "S3 endpoint '%s' is not an http:// or https:// URL", ep);
            return REMOTE_ECONFIG;
        }
        n = strlen(ep);
        while (n > 0 && ep[n - 1] == '/')
            n--;
        r->endpoint = strndup(ep, n);
        r->vhost = 0;
    } else {
        n = strlen(r->bucket) + strlen(region) + 32;
        r->endpoint = malloc(n);
        if (r->endpoint)
            snprintf(r->endpoint, n, "https://%s.s3.%s.amazonaws.com", r->bucket, region);
        r->vhost = 1;
    }
    n = strlen(region) + 16;
    r->sigv4 = malloc(n);
    if (r->sigv4)
        snprintf(r->sigv4, n, "aws:amz:%s:s3", region);
    return r->endpoint && r->sigv4 ? 0 : ENOMEM;
}

/* $NAME as a whole number of at most MAX, or 0 when unset or not one. */
int remote_open(remote **out, const char *url, const remote_options *opt, char *msg, size_t msglen)
{
    *out = NULL;
    say(msg, msglen, "%s", "");
    const rcurl_api *cu;
    int rc = remote_curl_load(&cu, msg, msglen); /* libcurl: loaded here, once, not at start */
    if (rc)
        return rc;
    remote *r = calloc(1, sizeof *r);
    if (!r)
        return ENOMEM;
    r->cu = cu;
    profile_kv kv[K_N] = {{"aws_access_key_id", NULL}, {"aws_secret_access_key", NULL},
                          {"aws_session_token", NULL}, {"region", NULL},
                          {"endpoint_url", NULL}};
    rc = url_split(url, &r->bucket, &r->prefix, msg, msglen);
    if (rc == 0)
        rc = read_profile(kv, msg, msglen);
    if (rc == 0)
        rc = take_credentials(r, kv, msg, msglen);
    if (rc == 0) {
        const char *region = common_env("AWS_REGION");
        if (!region)
            region = common_env("AWS_DEFAULT_REGION");
        if (!region)
            region = kv[K_REGION].value ? kv[K_REGION].value : "us-east-1";
        rc = take_endpoint(r, region, kv[K_ENDPOINT].value, msg, msglen);
    }
    for (int i = 0; i < K_N; i++)
        free(kv[i].value);
    if (rc != 0) {
        remote_close(r);
        return rc;
    }
    remote_options_resolve(&r->opt, opt);
    *out = r;
    return 0;
}

void remote_close(remote *r)
{
    if (!r)
        return;
    free(r->bucket);
    free(r->prefix);
    free(r->endpoint);
    free(r->sigv4);
    free(r->access);
    if (r->secret)
        memset(r->secret, 0, strlen(r->secret));
    free(r->secret);
    free(r->token);
    free(r);
}

const char *remote_bucket(const remote *r) { return r->bucket; }
const char *remote_prefix(const remote *r) { return r->prefix; }
const char *remote_endpoint(const remote *r) { return r->endpoint; }

uint64_t remote_bound_ms(const remote *r)
{
    return remote_options_bound_ms(&r->opt);
}
