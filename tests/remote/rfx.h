/* rfx.h -- fixtures of the remote tests: a remote on the radosgw that
 * tests/run.sh started (scripts/s3-server.sh; its env lines are in the
 * environment), under a prefix of its own per test so runs never meet. */
#ifndef OFFLOADFS_TEST_RFX_H
#define OFFLOADFS_TEST_RFX_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <signal.h>
#include <cmocka.h>

#include "remote/remote.h"

struct rfx {
    char url[256];
    remote *r;
    remote_conn *c;
};

/* The server's env must be there: a remote suite run without it fails
 * loudly rather than skipping. */
static inline const char *rfx_bucket(void)
{
    const char *b = getenv("OFFLOADFS_S3_BUCKET");
    if (!b || !getenv("AWS_ENDPOINT_URL")) {
        fprintf(stderr, "no S3 server: run through tests/run.sh (it starts scripts/s3-server.sh)\n");
        exit(1);
    }
    return b;
}

/* s3://BUCKET/t-PID-NANOS: unique per call. */
static inline void rfx_url(char *out, size_t n)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(out, n, "s3://%s/t-%ld-%ld%09ld", rfx_bucket(), (long)getpid(), (long)ts.tv_sec,
             ts.tv_nsec);
}

static inline int rfx_setup_opt(void **state, const remote_options *opt)
{
    struct rfx *f = calloc(1, sizeof *f);
    char msg[256];
    assert_non_null(f);
    rfx_url(f->url, sizeof f->url);
    int rc = remote_open(&f->r, f->url, opt, msg, sizeof msg);
    if (rc)
        fprintf(stderr, "remote_open: %s\n", msg);
    assert_int_equal(rc, 0);
    assert_int_equal(remote_conn_new(&f->c, f->r), 0);
    *state = f;
    return 0;
}

static inline int rfx_setup(void **state)
{
    return rfx_setup_opt(state, NULL);
}

static inline int rfx_teardown(void **state)
{
    struct rfx *f = *state;
    remote_conn_free(f->c);
    remote_close(f->r);
    free(f);
    return 0;
}

/* N bytes of a fixed pseudo-random pattern (SEED) in a new buffer. */
static inline unsigned char *rfx_bytes(size_t n, unsigned seed)
{
    unsigned char *p = malloc(n ? n : 1);
    uint64_t x = 0x9e3779b97f4a7c15ull * (seed + 1);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (unsigned char)x;
    }
    return p;
}

static inline double rfx_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* SIGSTOPs PID and waits (2 s at most) until every thread of it is
 * stopped: kill() returns before a busy process has taken the stop. */
static inline void rfx_stop(pid_t pid)
{
    char dir[64];
    assert_int_equal(kill(pid, SIGSTOP), 0);
    snprintf(dir, sizeof dir, "/proc/%ld/task", (long)pid);
    for (int i = 0; i < 100; i++) {
        DIR *d = opendir(dir);
        struct dirent *de;
        int all = d != NULL;
        while (d && (de = readdir(d))) {
            char path[400], buf[512];
            if (de->d_name[0] == '.')
                continue;
            snprintf(path, sizeof path, "%s/%s/stat", dir, de->d_name);
            FILE *fp = fopen(path, "r");
            size_t n = fp ? fread(buf, 1, sizeof buf - 1, fp) : 0;
            if (fp)
                fclose(fp);
            buf[n] = '\0';
            const char *paren = strrchr(buf, ')');
            if (!paren || paren[1] != ' ' || paren[2] != 'T')
                all = 0;
        }
        if (d)
            closedir(d);
        if (all)
            return;
        usleep(20000);
    }
    fail_msg("radosgw %ld did not stop", (long)pid);
}

#endif
