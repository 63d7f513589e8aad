/* wake.c -- the writer's half of read-your-writes (see store/wake.h), and
 * the one piece of state it keeps: the daemons found late (wake_memory).
 *
 * Why connect-only: the daemon needs no data from us, since the accept
 * itself orders its next read transaction after our commit. Sending nothing
 * means there is nothing to parse, forge or leak, and nothing to block on:
 * every socket is non-blocking, and the only wait is one poll() with one
 * deadline for every daemon together.
 */
#include "store/wake.h"
#include "store/store_int.h"
#include "common/clock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* A daemon whose wake-up went unanswered within the bound: the connection,
 * kept open, tells when it has run again (its answer, or the close). Until
 * then this process's writes wake it without waiting, so a stopped daemon
 * costs one bound per process, not one per write. A slot is free while
 * NAME is empty. */
#define WAKE_LATE_MAX 16u
#define WAKE_NAME_MAX 64u
struct wake_late {
    int fd;
    char name[WAKE_NAME_MAX]; /* its socket in STORE/wake */
};

/* The late daemons of one shared environment (store_int.h). */
struct wake_memory {
    pthread_mutex_t lock; /* guards late */
    struct wake_late late[WAKE_LATE_MAX];
};

struct wake_memory *store_wake_memory_new(void)
{
    struct wake_memory *m = calloc(1, sizeof *m);
    if (m)
        pthread_mutex_init(&m->lock, NULL);
    return m;
}

/* Fills *SA with the address of NAME in the wake directory DFD, reached
 * through /proc/self/fd/DFD: the directory we opened and listed, whatever
 * its path leads to by now (the store's owner may have swapped STORE/wake
 * for a symlink since: a root writer would then connect elsewhere). */
static int wake_addr(struct sockaddr_un *sa, socklen_t *len, int dfd, const char *name)
{
    int n;
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    n = snprintf(sa->sun_path, sizeof sa->sun_path, "/proc/self/fd/%d/%s", dfd, name);
    if (n < 0 || (size_t)n >= sizeof sa->sun_path)
        return ENAMETOOLONG;
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + 1);
    return 0;
}

/* Connects to one daemon without blocking. Returns 0 and *FD, or the
 * errno value (ECONNREFUSED: nobody listens; EAGAIN: backlog full). */
static int wake_connect(int dfd, const char *name, int *fd)
{
    struct sockaddr_un sa;
    socklen_t len;
    int s, rc = wake_addr(&sa, &len, dfd, name);
    if (rc)
        return rc;
    if ((s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
        return errno;
    if (connect(s, (struct sockaddr *)&sa, len) == 0) {
        *fd = s;
        return 0;
    }
    rc = errno;
    close(s);
    return rc;
}

/* 1 when NAME in DFD is a socket itself (not a link to one). */
static int is_socket_at(int dfd, const char *name)
{
    struct stat sb;
    return fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(sb.st_mode);
}

/* 1 for a daemon's socket "*.sock" in the directory DFD. Where listings
 * carry no type (DT_UNKNOWN: ext4 without "filetype", XFS with ftype=0),
 * one fstatat() tells: connecting would follow a symlink, and a regular
 * file or a FIFO answers ECONNREFUSED like a dead daemon's socket. */
static int is_socket_name(int dfd, const struct dirent *de)
{
    size_t n = strlen(de->d_name), k = sizeof STORE_WAKE_SUFFIX - 1;
    if (de->d_type != DT_SOCK && de->d_type != DT_UNKNOWN)
        return 0;
    if (de->d_name[0] == '.' || n <= k || strcmp(de->d_name + n - k, STORE_WAKE_SUFFIX))
        return 0;
    return de->d_type == DT_SOCK || is_socket_at(dfd, de->d_name);
}

/* The connections of one store_wake(): PFD[i] to the socket NAME[i] ("":
 * a name too long to remember). */
struct wake_set {
    struct pollfd pfd[STORE_WAKE_MAX];
    char name[STORE_WAKE_MAX][WAKE_NAME_MAX];
    unsigned n;
};

/* The slot of M's late daemon NAME, or -1. */
static int late_find(const struct wake_memory *m, const char *name)
{
    for (unsigned k = 0; k < WAKE_LATE_MAX; k++)
        if (m->late[k].name[0] && !strcmp(m->late[k].name, name))
            return (int)k;
    return -1;
}

static void late_drop(struct wake_memory *m, unsigned k)
{
    close(m->late[k].fd);
    m->late[k].name[0] = '\0';
}

/* 1 while the kept connection FD has neither an answer nor an end: its
 * daemon has not run since. */
static int late_pending(int fd)
{
    uint64_t got;
    ssize_t n = recv(fd, &got, sizeof got, MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* Keeps FD, the unanswered connection to NAME, in M; 0 when it could not
 * (no free slot, or another thread keeps one for NAME already). */
static int late_keep(struct wake_memory *m, const char *name, int fd)
{
    int kept = 0;
    pthread_mutex_lock(&m->lock);
    if (late_find(m, name) < 0)
        for (unsigned k = 0; k < WAKE_LATE_MAX && !kept; k++)
            if (!m->late[k].name[0]) {
                m->late[k].fd = fd;
                snprintf(m->late[k].name, sizeof m->late[k].name, "%s", name);
                kept = 1;
            }
    pthread_mutex_unlock(&m->lock);
    return kept;
}

void store_wake_memory_free(struct wake_memory *m)
{
    if (!m)
        return;
    for (unsigned k = 0; k < WAKE_LATE_MAX; k++)
        if (m->late[k].name[0])
            late_drop(m, k);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

/* Decides about the socket NAME that M (may be NULL) remembers as late:
 * 1 when its daemon still has not answered (do not wait for it again),
 * 0 to connect as usual. Sets bit K of *SEEN for the slot K it holds. */
static int late_skip(struct wake_memory *m, const char *name, uint32_t *seen)
{
    int k;
    if (!m || (k = late_find(m, name)) < 0)
        return 0;
    if (late_pending(m->late[k].fd)) {
        *seen |= UINT32_C(1) << k;
        return 1;
    }
    late_drop(m, (unsigned)k); /* it ran again: wait for it as for any */
    return 0;
}

/* Connects to every daemon in the directory D but those M (may be NULL)
 * knows to be late still; fills W. */
static void connect_all(DIR *d, struct wake_set *w, struct wake_memory *m,
                        store_wake_result *r)
{
    struct dirent *de = NULL;
    uint32_t seen = 0;
    int fd = -1, rc;
    if (m)
        pthread_mutex_lock(&m->lock);
    while (w->n < STORE_WAKE_MAX && (de = readdir(d))) {
        if (!is_socket_name(dirfd(d), de))
            continue;
        if (late_skip(m, de->d_name, &seen)) {
            r->late++;
            continue;
        }
        rc = wake_connect(dirfd(d), de->d_name, &fd);
        if (rc == 0) {
            w->pfd[w->n].fd = fd;
            w->pfd[w->n].events = POLLIN;
            w->pfd[w->n].revents = 0;
            if (strlen(de->d_name) < WAKE_NAME_MAX)
                memcpy(w->name[w->n], de->d_name, strlen(de->d_name) + 1);
            else
                w->name[w->n][0] = '\0';
            w->n++;
        } else if (rc == ECONNREFUSED) {
            /* Its daemon died; checked again just before the unlink: only a
             * socket is ever removed, whatever took the name meanwhile. */
            if (is_socket_at(dirfd(d), de->d_name) && unlinkat(dirfd(d), de->d_name, 0) == 0)
                r->stale++;
        } else if (rc == EAGAIN) {
            r->busy++;
        } /* else gone since the listing (ENOENT), or not ours: skip */
    }
    if (m) {
        /* A late daemon whose socket has gone (it stopped) is forgotten. */
        for (unsigned k = 0; !de && k < WAKE_LATE_MAX; k++)
            if (m->late[k].name[0] && !(seen & (UINT32_C(1) << k)))
                late_drop(m, k);
        pthread_mutex_unlock(&m->lock);
    }
}

/* Milliseconds until DEADLINE (common_clock_ns() time), rounded up, so a
 * poll() never wakes just before it; <= 0 once it passed. */
static int64_t ms_left(uint64_t deadline)
{
    return ((int64_t)deadline - (int64_t)common_clock_ns() + 999999) / 1000000;
}

/* Reads the answer on PFD (ready) and closes it. */
static void take_answer(struct pollfd *pfd, uint64_t generation, store_wake_result *r)
{
    uint64_t got = 0;
    ssize_t n = 0;
    if (pfd->revents & POLLIN)
        n = recv(pfd->fd, &got, sizeof got, MSG_DONTWAIT);
    if (n == (ssize_t)sizeof got && got >= generation)
        r->acked++;
    else
        r->gone++;
    close(pfd->fd);
    pfd->fd = -1;
}

/* Waits until every connection in W answered or the deadline passed; the
 * connections still unanswered then are kept in M (may be NULL). */
static void wait_all(struct wake_set *w, struct wake_memory *m, uint64_t generation,
                     unsigned timeout_ms, store_wake_result *r)
{
    struct pollfd *pfd = w->pfd;
    uint64_t deadline = common_clock_ns() + (uint64_t)timeout_ms * 1000000u;
    unsigned n = w->n, left = n;
    int64_t ms;
    while (left && (ms = ms_left(deadline)) > 0) {
        int k = poll(pfd, n, (int)ms);
        if (k < 0 && errno != EINTR)
            break;
        for (unsigned i = 0; k > 0 && i < n; i++) {
            if (pfd[i].fd < 0 || !pfd[i].revents)
                continue;
            take_answer(&pfd[i], generation, r);
            left--;
        }
    }
    for (unsigned i = 0; i < n; i++)
        if (pfd[i].fd >= 0) {
            if (!m || !w->name[i][0] || !late_keep(m, w->name[i], pfd[i].fd))
                close(pfd[i].fd);
            r->late++;
        }
}

int store_wake_run(const char *dir, uint64_t generation, unsigned timeout_ms,
                   struct wake_memory *m, store_wake_result *res)
{
    struct wake_set w;
    store_wake_result r;
    char path[4096];
    DIR *d;
    int dfd;
    memset(&r, 0, sizeof r);
    w.n = 0;
    if (res)
        *res = r;
    if ((size_t)snprintf(path, sizeof path, "%s/" STORE_WAKE_DIR, dir) >= sizeof path)
        return ENAMETOOLONG;
    /* Not through a symlink: its target is no wake directory of ours, and
     * what refuses a connection there is not ours to remove. */
    if ((dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return errno == ENOENT ? 0 : errno;
    if (!(d = fdopendir(dfd))) {
        int rc = errno;
        close(dfd);
        return rc;
    }
    connect_all(d, &w, m, &r);
    closedir(d);
    r.daemons = w.n;
    wait_all(&w, m, generation, timeout_ms, &r);
    if (res)
        *res = r;
    return r.late ? ETIMEDOUT : 0;
}

int store_wake(const char *dir, uint64_t generation, unsigned timeout_ms,
               store_wake_result *res)
{
    return store_wake_run(dir, generation, timeout_ms, NULL, res);
}
