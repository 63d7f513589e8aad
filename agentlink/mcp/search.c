/* search.c -- the read tool's pattern search, bounded in time (see
 * mcp_search_run() in mcp.h).
 *
 * glibc's regexec() has no bound on its time: for some patterns it tries
 * every start in a line and runs on from each, so its time grows with the
 * square of the line's length ("a+b" over one line of 64,000 'a' took
 * 4.4 s; a result that is one 64 MB line would take weeks), while the proxy
 * answers the whole session from one thread. A short text is no bound
 * either: "(.{1,99}){1,100}b" took 15 s over 16,000 bytes, and
 * "a{1,3000}a{1,3000}a{1,3000}b" 0.5 s over 64. Every search therefore
 * runs in a forked child (a fork costs about a millisecond), which writes
 * each matching line number, then how far it has searched, into an
 * anonymous shared mapping. The parent waits for the child's end
 * (the hang-up of a pipe only the child holds) until the deadline, then
 * kills it and keeps what it had found. The child touches the text and the
 * compiled pattern only (never LMDB: an environment is not to be used
 * across fork), dies with its parent (PR_SET_PDEATHSIG) and leaves with
 * _exit().
 */
#include "agentlink/mcp/mcp.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What the search found; in the child case, shared with the child. */
typedef struct found {
    uint64_t n;        /* matching lines in line[] */
    uint64_t searched; /* every line up to this one was searched */
    uint64_t line[];
} found;

static void publish(uint64_t *at, uint64_t v)
{
    __atomic_store_n(at, v, __ATOMIC_RELEASE);
}

/* Searches the lines of DATA (LEN bytes) from line OFFSET on for RE, until
 * MAX lines match or the text ends. */
static void search(const char *data, size_t len, const regex_t *re, uint64_t offset,
                   uint64_t max, found *f)
{
    uint64_t lineno = 0;
    size_t pos = 0;
    while (pos < len && f->n < max) {
        const char *nl = memchr(data + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - data) : len;
        if (++lineno >= offset) {
            regmatch_t m[1] = {{0, (regoff_t)(end - pos)}};
            if (regexec(re, data + pos, 1, m, REG_STARTEND) == 0) {
                f->line[f->n] = lineno;
                publish(&f->n, f->n + 1);
            }
        }
        publish(&f->searched, lineno);
        pos = nl ? end + 1 : len;
    }
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Waits until the child holding the write end of RFD ends or SECONDS pass;
 * returns 1 when it ended. */
static int wait_end(int rfd, double seconds)
{
    double until = now_s() + seconds;
    for (;;) {
        double left = until - now_s();
        struct pollfd p = {.fd = rfd, .events = POLLIN};
        if (left <= 0)
            return 0;
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r > 0)
            return 1;
        if (r < 0 && errno != EINTR)
            return 0;
    }
}

/* The child: searches, then leaves without running anything of the
 * parent's (atexit handlers, stdio buffers, sanitizer reports). */
static void child(int wfd, pid_t parent, const char *data, size_t len, const regex_t *re,
                  uint64_t offset, uint64_t max, found *f)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL); /* never the parent's handlers */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* the parent died before the line above */
        _exit(1);
    search(data, len, re, offset, max, f);
    (void)wfd; /* closed by _exit: the parent's poll sees the hang-up */
    _exit(0);
}

/* Runs the search in a child for at most SECONDS; F is shared with it. */
static int search_forked(const char *data, size_t len, const regex_t *re, uint64_t offset,
                         uint64_t max, double seconds, found *f, int *stopped)
{
    int p[2], st;
    pid_t pid, self = getpid();
    if (pipe2(p, O_CLOEXEC))
        return errno;
    pid = fork();
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        return e;
    }
    if (pid == 0) {
        close(p[0]);
        child(p[1], self, data, len, re, offset, max, f);
    }
    close(p[1]);
    *stopped = !wait_end(p[0], seconds);
    if (*stopped)
        kill(pid, SIGKILL);
    close(p[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    /* A child that ended on its own before the end of the text or MAX
     * matches died (the OOM killer, say): as good as stopped. */
    if (!*stopped && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
        *stopped = 1;
    return 0;
}

int mcp_search_run(const char *data, size_t len, const regex_t *re, uint64_t offset,
                   uint64_t max, double seconds, mcp_search *out)
{
    size_t size = sizeof(found) + max * sizeof(uint64_t);
    int rc;
    found *f;
    memset(out, 0, sizeof *out);
    if (max > (SIZE_MAX - sizeof(found)) / sizeof(uint64_t))
        return ENOMEM;
    f = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (f == MAP_FAILED)
        return errno;
    double t0 = now_s();
    rc = search_forked(data, len, re, offset, max, seconds, f, &out->stopped);
    out->seconds = now_s() - t0;
    out->searched = __atomic_load_n(&f->searched, __ATOMIC_ACQUIRE);
    out->n = __atomic_load_n(&f->n, __ATOMIC_ACQUIRE);
    if (out->searched + 1 < offset) /* stopped before the offset */
        out->searched = offset - 1;
    /* A match recorded just before the kill, its line not yet counted. */
    while (out->n && f->line[out->n - 1] > out->searched)
        out->n--;
    if (!rc && out->n && !(out->line = malloc(out->n * sizeof *out->line)))
        rc = ENOMEM;
    if (!rc && out->n)
        memcpy(out->line, f->line, out->n * sizeof *out->line);
    munmap(f, size);
    if (rc)
        mcp_search_release(out);
    return rc;
}

void mcp_search_release(mcp_search *s)
{
    free(s->line);
    memset(s, 0, sizeof *s);
}
