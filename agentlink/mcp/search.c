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
 * kills it and keeps what it had found. The relay does not wait: it polls
 * that pipe with its other descriptors (mcp_search_start/finish), so other
 * messages flow while a search runs. The child touches the text and the
 * compiled pattern only (never LMDB: an environment is not to be used
 * across fork), dies with its parent (PR_SET_PDEATHSIG) and leaves with
 * _exit().
 */
#include "agentlink/mcp/mcp.h"
#include "common/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
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

/* Waits until the child holding the write end of RFD ends or SECONDS pass
 * (0: only looks); returns 1 when it ended. */
static int wait_end(int rfd, double seconds)
{
    double until = mcp_search_now() + seconds;
    for (;;) {
        double left = until - mcp_search_now();
        struct pollfd p = {.fd = rfd, .events = POLLIN};
        int r = poll(&p, 1, left > 0 ? (int)(left * 1000) + 1 : 0);
        if (r > 0)
            return 1;
        if ((r < 0 && errno != EINTR) || left <= 0)
            return 0;
    }
}

/* The child: searches, then leaves without running anything of the
 * parent's (atexit handlers, stdio buffers, sanitizer reports). */
static void child(int wfd, pid_t parent, const char *data, size_t len, const regex_t *re,
                  uint64_t offset, uint64_t max, found *f)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE};
    struct rlimit rl;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL); /* never the parent's handlers */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* the parent died before the line above */
        _exit(1);
    /* None of the relay's pipes: the end of the server's stdin held here
     * would keep the server from seeing its input end while the search
     * runs. The standard descriptors stay (the client's, which the relay
     * holds until every search has answered anyway; under valgrind the
     * child fails without them). */
    if (wfd > 3)
        close_range(3, (unsigned)wfd - 1, 0);
    /* Up to the descriptor limit only: a tool such as valgrind keeps its
     * own descriptors above it, and dies without them. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur > (rlim_t)wfd + 1)
        close_range((unsigned)wfd + 1, (unsigned)(rl.rlim_cur - 1), 0);
    search(data, len, re, offset, max, f);
    _exit(0); /* closes WFD: the parent's poll sees the hang-up */
}

/* A search under way: its child, the shared table, the pipe whose
 * hang-up says the child ended, and when it must end. */
struct mcp_search_job {
    pid_t pid;
    int fd;
    found *f;
    size_t size;
    uint64_t offset;
    double started, deadline;
};

int mcp_search_start(const char *data, size_t len, const regex_t *re, uint64_t offset,
                     uint64_t max, double seconds, mcp_search_job **out)
{
    mcp_search_job *j = NULL; /* set once the child runs (gcc -O1 cannot see it) */
    size_t size;
    found *f;
    int p[2], e;
    pid_t pid, self = getpid();
    double started;
    *out = NULL;
    if (max > (SIZE_MAX - sizeof(found)) / sizeof(uint64_t))
        return ENOMEM;
    size = sizeof(found) + max * sizeof(uint64_t);
    f = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (f == MAP_FAILED)
        return errno;
    if (pipe2(p, O_CLOEXEC)) {
        e = errno;
        munmap(f, size);
        return e;
    }
    started = mcp_search_now();
    /* The job is allocated after the fork, in the parent only: a block the
     * child cannot reach would count as a leak in its exit's report. */
    pid = fork();
    if (pid == 0) {
        close(p[0]);
        child(p[1], self, data, len, re, offset, max, f);
    }
    e = pid < 0 ? errno : 0;
    close(p[1]);
    if (pid > 0 && !(j = calloc(1, sizeof *j))) {
        e = ENOMEM;
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    if (e) {
        close(p[0]);
        munmap(f, size);
        return e;
    }
    *j = (mcp_search_job){pid, p[0], f, size, offset, started, started + seconds};
    *out = j;
    return 0;
}

int mcp_search_job_fd(const mcp_search_job *j)
{
    return j->fd;
}

double mcp_search_job_deadline(const mcp_search_job *j)
{
    return j->deadline;
}

double mcp_search_now(void)
{
    return (double)common_clock_ns() / 1e9;
}

int mcp_search_finish(mcp_search_job *j, int wait, mcp_search *out)
{
    double left = j->deadline - mcp_search_now();
    int st = 0, stopped, rc = 0;
    memset(out, 0, sizeof *out);
    stopped = !wait_end(j->fd, wait && left > 0 ? left : 0);
    if (stopped)
        kill(j->pid, SIGKILL);
    close(j->fd);
    while (waitpid(j->pid, &st, 0) < 0 && errno == EINTR)
        ;
    /* A child that ended on its own before the end of the text or MAX
     * matches died (the OOM killer, say): as good as stopped. */
    if (!stopped && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
        stopped = 1;
    out->stopped = stopped;
    out->seconds = mcp_search_now() - j->started;
    out->searched = __atomic_load_n(&j->f->searched, __ATOMIC_ACQUIRE);
    out->n = __atomic_load_n(&j->f->n, __ATOMIC_ACQUIRE);
    if (out->searched + 1 < j->offset) /* stopped before the offset */
        out->searched = j->offset - 1;
    /* A match recorded just before the kill, its line not yet counted. */
    while (out->n && j->f->line[out->n - 1] > out->searched)
        out->n--;
    if (out->n && !(out->line = malloc(out->n * sizeof *out->line)))
        rc = ENOMEM;
    if (!rc && out->n)
        memcpy(out->line, j->f->line, out->n * sizeof *out->line);
    munmap(j->f, j->size);
    free(j);
    if (rc)
        mcp_search_release(out);
    return rc;
}

void mcp_search_cancel(mcp_search_job *j)
{
    mcp_search s;
    if (!j)
        return;
    j->deadline = 0; /* stop it now */
    mcp_search_finish(j, 0, &s);
    mcp_search_release(&s);
}

int mcp_search_run(const char *data, size_t len, const regex_t *re, uint64_t offset,
                   uint64_t max, double seconds, mcp_search *out)
{
    mcp_search_job *j;
    int rc = mcp_search_start(data, len, re, offset, max, seconds, &j);
    memset(out, 0, sizeof *out);
    return rc ? rc : mcp_search_finish(j, 1, out);
}

void mcp_search_release(mcp_search *s)
{
    free(s->line);
    memset(s, 0, sizeof *s);
}
