/* wake.c -- the writer's half of read-your-writes (see store/wake.h).
 *
 * Why connect-only: the daemon needs no data from us, since the accept
 * itself orders its next read transaction after our commit. Sending nothing
 * means there is nothing to parse, forge or leak, and nothing to block on:
 * every socket is non-blocking, and the only wait is one poll() with one
 * deadline for every daemon together.
 */
#include "store/wake.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Fills *SA with the address of NAME in DIR/wake (whose descriptor is
 * DFD); a path too long for sun_path goes through /proc/self/fd. */
static int wake_addr(struct sockaddr_un *sa, socklen_t *len, const char *dir,
                     int dfd, const char *name)
{
    int n;
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    n = snprintf(sa->sun_path, sizeof sa->sun_path, "%s/" STORE_WAKE_DIR "/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof sa->sun_path)
        n = snprintf(sa->sun_path, sizeof sa->sun_path, "/proc/self/fd/%d/%s", dfd, name);
    if (n < 0 || (size_t)n >= sizeof sa->sun_path)
        return ENAMETOOLONG;
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + 1);
    return 0;
}

/* Connects to one daemon without blocking. Returns 0 and *FD, or the
 * errno value (ECONNREFUSED: nobody listens; EAGAIN: backlog full). */
static int wake_connect(const char *dir, int dfd, const char *name, int *fd)
{
    struct sockaddr_un sa;
    socklen_t len;
    int s, rc = wake_addr(&sa, &len, dir, dfd, name);
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

static int is_socket_name(const struct dirent *de)
{
    size_t n = strlen(de->d_name), k = sizeof STORE_WAKE_SUFFIX - 1;
    if (de->d_type != DT_SOCK && de->d_type != DT_UNKNOWN)
        return 0;
    return de->d_name[0] != '.' && n > k && !strcmp(de->d_name + n - k, STORE_WAKE_SUFFIX);
}

/* Connects to every daemon in the directory D; fills PFD, returns how
 * many. */
static unsigned connect_all(const char *dir, DIR *d, struct pollfd *pfd,
                            store_wake_result *r)
{
    struct dirent *de;
    unsigned n = 0;
    int fd = -1, rc;
    while (n < STORE_WAKE_MAX && (de = readdir(d))) {
        if (!is_socket_name(de))
            continue;
        rc = wake_connect(dir, dirfd(d), de->d_name, &fd);
        if (rc == 0) {
            pfd[n].fd = fd;
            pfd[n].events = POLLIN;
            pfd[n++].revents = 0;
        } else if (rc == ECONNREFUSED) {
            if (unlinkat(dirfd(d), de->d_name, 0) == 0) /* its daemon died */
                r->stale++;
        } else if (rc == EAGAIN) {
            r->busy++;
        } /* else gone since the listing (ENOENT), or not ours: skip */
    }
    return n;
}

static int64_t ms_left(const struct timespec *deadline)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return ((int64_t)(deadline->tv_sec - now.tv_sec) * 1000000000
            + (deadline->tv_nsec - now.tv_nsec) + 999999) / 1000000;
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

/* Waits until every connection in PFD answered or the deadline passed. */
static void wait_all(struct pollfd *pfd, unsigned n, uint64_t generation,
                     unsigned timeout_ms, store_wake_result *r)
{
    struct timespec deadline;
    unsigned left = n;
    int64_t ms;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += (time_t)(timeout_ms / 1000u);
    deadline.tv_nsec += (long)(timeout_ms % 1000u) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    while (left && (ms = ms_left(&deadline)) > 0) {
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
            close(pfd[i].fd);
            r->late++;
        }
}

int store_wake(const char *dir, uint64_t generation, unsigned timeout_ms,
               store_wake_result *res)
{
    struct pollfd pfd[STORE_WAKE_MAX];
    store_wake_result r;
    char path[4096];
    unsigned n;
    DIR *d;
    int dfd;
    memset(&r, 0, sizeof r);
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
    n = connect_all(dir, d, pfd, &r);
    closedir(d);
    r.daemons = n;
    wait_all(pfd, n, generation, timeout_ms, &r);
    if (res)
        *res = r;
    return r.late ? ETIMEDOUT : 0;
}

int store_wake_after(store *st, int rc, uint64_t generation)
{
    if (rc == 0)
        (void)store_wake(store_path(st), generation, STORE_WAKE_TIMEOUT_MS, NULL);
    return rc;
}
