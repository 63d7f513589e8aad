/* mountcheck.c -- which store and namespace the mount at a handle's mount
 * path serves, as the mount itself says (the root's user.offloadfs.*
 * attributes, fs/ops.c).
 *
 * The attributes are read in a thread of their own: a daemon that is
 * stopped or wedged blocks every request to its mount until it runs again,
 * and no caller may hang on it. A thread that answers in time is joined:
 * none is left running, so a process that forks next (the proxy starts its
 * server) has no block held only by a thread its child lacks. Past the
 * deadline the caller goes on and the thread is detached to finish (it
 * frees what it holds when the daemon answers or its mount is torn down). */
#include "agentlink/agentlink.h"
#include "common/clock.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>

#define XA_STORE "user.offloadfs.store"
#define XA_NS "user.offloadfs.namespace"
#define NS_MAX 255

/* Shared by the caller and the reading thread: the last one to let go
 * frees it. */
typedef struct probe {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int refs, done;
    char *path;                  /* the mount path */
    char store[PATH_MAX + 1];
    char ns[NS_MAX + 2];         /* one more: a longer value is ERANGE */
    int err;                     /* 0, or the errno of the first getxattr failed */
} probe;

static void probe_unref(probe *p)
{
    int last;
    pthread_mutex_lock(&p->lock);
    last = --p->refs == 0;
    pthread_mutex_unlock(&p->lock);
    if (last) {
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->cv);
        free(p->path);
        free(p);
    }
}

/* Reads NAME of PATH into BUF (SIZE bytes, NUL added). Returns 0 or errno. */
static int read_attr(const char *path, const char *name, char *buf, size_t size)
{
    ssize_t n;
    while ((n = getxattr(path, name, buf, size - 1)) < 0 && errno == EINTR)
        ;
    if (n < 0)
        return errno;
    buf[n] = '\0';
    return strlen(buf) == (size_t)n ? 0 : EINVAL; /* a NUL inside: not ours */
}

static void *probe_run(void *arg)
{
    probe *p = arg;
    int err = read_attr(p->path, XA_STORE, p->store, sizeof p->store);
    if (!err)
        err = read_attr(p->path, XA_NS, p->ns, sizeof p->ns);
    pthread_mutex_lock(&p->lock);
    p->err = err;
    p->done = 1;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->lock);
    probe_unref(p);
    return NULL;
}

/* Reads both attributes of MOUNT into *OUT (yours, probe_unref()) within
 * TIMEOUT_MS (<= 0: no bound). Returns 0 (the attributes' errno, if any, in
 * (*OUT)->err), ETIMEDOUT, ENOMEM, or the errno of pthread_create. */
static int probe_mount(const char *mount, int timeout_ms, probe **out)
{
    probe *p = calloc(1, sizeof *p);
    pthread_condattr_t ca;
    pthread_t t;
    struct timespec until;
    uint64_t at;
    int rc = 0;
    *out = NULL;
    if (!p || !(p->path = strdup(mount))) {
        free(p);
        return ENOMEM;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    p->refs = 2;
    if ((rc = pthread_create(&t, NULL, probe_run, p))) {
        p->refs = 1;
        probe_unref(p);
        return rc;
    }
    at = common_clock_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000u;
    until.tv_sec = (time_t)(at / 1000000000u);
    until.tv_nsec = (long)(at % 1000000000u);
    pthread_mutex_lock(&p->lock);
    while (!p->done && rc == 0)
        rc = timeout_ms > 0 ? pthread_cond_timedwait(&p->cv, &p->lock, &until)
                            : pthread_cond_wait(&p->cv, &p->lock);
    if (p->done)
        rc = 0;
    pthread_mutex_unlock(&p->lock);
    if (rc) {
        pthread_detach(t);
        probe_unref(p);
        return ETIMEDOUT;
    }
    pthread_join(t, NULL);
    *out = p;
    return 0;
}

/* Whether the directory the mount names (STORE, its real path as the
 * daemon saw it) is DIR: the same file (device and inode) when both can be
 * stat'ed, else the same real path. */
static int same_store(const char *store, const char *dir)
{
    struct stat a, b;
    char real[PATH_MAX];
    if (stat(store, &a) == 0 && stat(dir, &b) == 0)
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    if (realpath(dir, real))
        dir = real;
    return strcmp(store, dir) == 0;
}

static void say(char **why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(char **why, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(why, fmt, ap) < 0)
        *why = NULL;
    va_end(ap);
}

/* The verdict once the attributes are read (P->err 0) or refused. */
static int judge(const al_store *h, const probe *p, al_mount_info *info)
{
    const char *m = al_store_mount(h);
    if (p->err == ENODATA || p->err == ENOTSUP || p->err == ERANGE || p->err == EINVAL) {
        say(&info->why, "%s is not an offloadfs mount that says what it serves (no %s "
            "attribute: another filesystem, or an offloadfs older than that attribute)", m,
            p->err == ENODATA || p->err == ENOTSUP ? XA_STORE : "valid " XA_STORE);
        return AL_EMOUNT_NONE;
    }
    if (p->err == ENOTCONN || p->err == ECONNABORTED) {
        say(&info->why, "%s: the offloadfs daemon of that mount is gone (%s)", m,
            strerror(p->err));
        return p->err;
    }
    if (p->err) {
        say(&info->why, "%s: %s", m, strerror(p->err));
        return p->err;
    }
    if (!(info->store = strdup(p->store)) || !(info->ns = strdup(p->ns)))
        return ENOMEM;
    if (!same_store(p->store, al_store_dir(h)) || strcmp(p->ns, al_store_namespace(h))) {
        say(&info->why, "%s serves store '%s', namespace '%s', not store '%s', namespace '%s'",
            m, p->store, p->ns, al_store_dir(h), al_store_namespace(h));
        return AL_EMOUNT_OTHER;
    }
    say(&info->why, "%s serves store '%s', namespace '%s'", m, p->store, p->ns);
    return 0;
}

int al_store_mount_check(const al_store *h, int timeout_ms, al_mount_info *info)
{
    probe *p;
    int rc;
    if (!info)
        return EINVAL;
    memset(info, 0, sizeof *info);
    if (!h)
        return EINVAL;
    if ((rc = probe_mount(al_store_mount(h), timeout_ms, &p))) {
        if (rc == ETIMEDOUT)
            say(&info->why, "%s did not answer within %d ms (its offloadfs daemon is "
                "stopped or busy)", al_store_mount(h), timeout_ms);
        return rc;
    }
    rc = judge(h, p, info);
    probe_unref(p);
    if (rc == ENOMEM || !info->why) {
        al_mount_info_release(info);
        return ENOMEM;
    }
    return rc;
}

void al_mount_info_release(al_mount_info *info)
{
    if (!info)
        return;
    free(info->store);
    free(info->ns);
    free(info->why);
    memset(info, 0, sizeof *info);
}
