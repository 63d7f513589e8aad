/* relay.c -- the proxy's event loop: one poll() over the client's
 * stdin and stdout, the server's stdin and stdout, and a signal pipe.
 *
 * Each direction ("side") holds the bytes read and not yet sent, and at
 * most one message being written. A side reads only while it has nothing
 * to send, so a peer that stops reading stops only its own direction: the
 * loop never blocks on a write, and a message passed through is written straight from
 * the bytes read, never copied. Memory is the largest line in flight (its
 * buffer grows by a quarter at a time) plus what the rewriter needs for
 * it. Answers of the read tool go to the client between two messages of
 * the server, never inside one. A read tool search runs in a child: its
 * pipe is polled with the rest, so every other message keeps flowing
 * until its answer is ready. The server runs in its own process group;
 * signals passed on and the proxy's own stop go to that group. */
#include "agentlink/mcp/mcp.h"
#include "common/array.h"
#include "common/buf.h"
#include "common/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 65536u
/* After a big message, a buffer over this size is given back. */
#define KEEP_CAP (4u * CHUNK)
/* How long the server's output, left open by what it started, is read
 * after it exited: milliseconds of silence (see loop()). */
#define GRACE_MS 2000
/* The client's stdout stays blocking: O_NONBLOCK is a flag of the open
 * file description, shared with whoever else holds it (our stderr and the
 * server's after 2>&1, a terminal, the client itself), and they would get
 * EAGAIN and lose what they write. Instead it is written only when poll()
 * says POLLOUT, at most PIPE_BUF bytes at a time: a pipe that polls
 * writable takes that much without blocking (a terminal or socket may
 * block briefly, and so may a pipe another writer, such as the server's
 * stderr, filled in between: then the proxy waits for the client to read,
 * as that writer does). Our own pipe to the server is non-blocking. */

typedef struct side {
    int in, out;             /* descriptors, -1 once closed */
    int from_client;         /* which rewriter entry to use */
    char *buf;               /* bytes read: buf[start, start + len) unsent */
    size_t start, len, cap;
    size_t scanned;          /* of len, bytes known to hold no '\n' */
    int eof;                 /* IN reached its end */
    const char *op;          /* the message being written, OLEN bytes left */
    size_t olen;
    char *owned;             /* OP's storage when rewritten, else NULL */
    size_t consume;          /* bytes of buf to drop once OP is written */
    size_t written;          /* bytes of the current message written */
    int dead;                /* OUT failed: what comes is dropped */
    int gated;               /* OUT is blocking: write only what poll() allows */
    int unended;             /* the last message written had no newline */
    int skipping;            /* a line over the limit: drop up to its newline */
} side;

typedef struct relay {
    mcp_rewriter *rw;
    const char *cmd;
    uint64_t max;            /* the largest message taken (mcp_relay_opts) */
    side c2s, s2c;
    common_buf answers;          /* read tool answers for the client */
    size_t answers_off;      /* of answers, bytes written */
    pid_t child;             /* also the server's process group */
    int status, reaped;      /* reaped: it exited, and is held as a zombie
                                until the end, so that its pid cannot name
                                another process group while we signal it */
    int sigfd;               /* the signal pipe's read end */
    int client_closed;       /* the client closed stdin */
    int heard;               /* bytes came from the server since the last poll */
    long quiet_since;        /* since when the proxy waits for the server with
                                nothing in hand (common_clock_ms()), or -1 */
    int stop_step;           /* 0, 1 once sent SIGTERM, 2 once SIGKILL */
    long term_at;            /* when SIGTERM was sent (common_clock_ms()) */
    int sent;                /* the last signal the proxy sent the server, or 0 */
    mcp_later **later;       /* read tool answers whose search runs */
    size_t nlater, caplater;
} relay;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    va_list ap;
    fputs("agentlink: mcp-proxy: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ---- signals -------------------------------------------------------------- */
/* The signal pipe's write end: a handler can reach nothing else. */
static int sig_wfd = -1;

static void on_signal(int sig)
{
    int e = errno;
    unsigned char c = (unsigned char)sig;
    (void)!write(sig_wfd, &c, 1);
    errno = e;
}

static int signals_setup(relay *r)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD};
    struct sigaction sa = {.sa_handler = on_signal};
    int p[2];
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK))
        return errno;
    r->sigfd = p[0];
    sig_wfd = p[1];
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

static void signals_reset(relay *r)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
    if (r->sigfd >= 0)
        close(r->sigfd);
    if (sig_wfd >= 0)
        close(sig_wfd);
    r->sigfd = sig_wfd = -1;
}

/* Notes that the server exited, leaving it a zombie (WNOWAIT): its status
 * is collected by mcp_relay_run() once the group is stopped. */
static void reap(relay *r)
{
    siginfo_t si;
    if (r->reaped)
        return;
    si.si_pid = 0;
    while (waitid(P_PID, (id_t)r->child, &si, WEXITED | WNOHANG | WNOWAIT) < 0 &&
           errno == EINTR)
        ;
    if (si.si_pid == r->child)
        r->reaped = 1;
}

static void signals_drain(relay *r)
{
    unsigned char c[64];
    ssize_t n;
    while ((n = read(r->sigfd, c, sizeof c)) > 0)
        for (ssize_t i = 0; i < n; i++) {
            if (c[i] == SIGCHLD)
                reap(r);
            else { /* SIGINT, SIGTERM, SIGHUP: the server's group's to handle, as
                      a terminal sends them to its whole foreground group */
                r->sent = c[i];
                kill(-r->child, c[i]);
            }
        }
}

/* ---- the server ----------------------------------------------------------- */
/* Starts the server (spawn.c). Returns 0 or the errno of the failed start. */
static int spawn(relay *r, char *const *argv)
{
    int to = -1, from = -1, rc = mcp_spawn(argv, &r->child, &to, &from);
    if (rc)
        return rc;
    r->c2s.out = to;
    r->s2c.in = from;
    fcntl(r->c2s.out, F_SETFL, fcntl(r->c2s.out, F_GETFL) | O_NONBLOCK);
    return 0;
}

/* ---- one direction --------------------------------------------------------- */
static void side_close_out(side *d)
{
    if (d->out >= 0 && d->out > STDERR_FILENO)
        close(d->out);
    d->out = -1;
}

/* The message in flight is done (written, or dropped). */
static void side_done(side *d)
{
    d->start += d->consume;
    d->len -= d->consume;
    if (d->len == 0)
        d->start = 0;
    d->consume = 0;
    d->op = NULL;
    d->olen = 0;
    d->written = 0;
    free(d->owned);
    d->owned = NULL;
}

/* write() that never blocks on D's OUT: for a gated one, only after
 * poll() says it is writable (or failed), and at most PIPE_BUF bytes. */
static ssize_t side_put(const side *d, const char *p, size_t n)
{
    if (d->gated) {
        struct pollfd pf = {d->out, POLLOUT, 0};
        if (poll(&pf, 1, 0) <= 0 || pf.revents == 0) {
            errno = EAGAIN;
            return -1;
        }
        if (n > PIPE_BUF)
            n = PIPE_BUF;
    }
    return write(d->out, p, n);
}

/* Writes what it can of D's message. Returns 0, or -1 when OUT failed. */
static int side_write(side *d)
{
    while (d->op && d->olen > 0) {
        if (d->dead) {
            d->olen = 0;
            break;
        }
        ssize_t n = side_put(d, d->op, d->olen);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            d->dead = 1;
            return -1;
        }
        d->op += n;
        d->olen -= (size_t)n;
        d->written += (size_t)n;
    }
    if (d->op) {
        if (d->written)
            d->unended = d->op[-1] != '\n';
        side_done(d);
    }
    return 0;
}

/* Writes what it can of the read tool's answers to the client; first a
 * newline when the server's last message had none (it ended mid-line), so
 * that an answer never joins it. */
static void answers_write(relay *r)
{
    side *d = &r->s2c;
    while (d->unended && !d->dead) {
        ssize_t n = side_put(d, "\n", 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            d->dead = 1;
        if (n <= 0)
            return;
        d->unended = 0;
    }
    while (r->answers_off < r->answers.len) {
        if (d->dead) {
            r->answers_off = r->answers.len;
            break;
        }
        ssize_t n = side_put(d, r->answers.p + r->answers_off, r->answers.len - r->answers_off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                d->dead = 1;
            return;
        }
        r->answers_off += (size_t)n;
    }
    r->answers.len = r->answers_off = 0;
}

/* The client's output: answers between the server's messages. */
static void client_write(relay *r)
{
    side *d = &r->s2c;
    if (r->answers.len && (r->answers_off > 0 || !d->op || d->written == 0))
        answers_write(r);
    if (r->answers_off == 0 || r->answers.len == 0)
        side_write(d);
}

/* Queues an answer TEXT (LEN bytes, a message) for the client. */
static void answer_queue(relay *r, const char *text, size_t len)
{
    common_buf_add(&r->answers, text, len);
    common_buf_addc(&r->answers, '\n');
    if (r->answers.failed) {
        logf_("out of memory queueing an answer for the client");
        common_buf_release(&r->answers);
        r->answers_off = 0;
    }
}

/* Keeps L until its search ends. */
static void later_add(relay *r, mcp_later *l)
{
    if (r->nlater == MCP_SEARCHES) { /* the rewriter allows no more: cannot happen */
        char *text = NULL;
        size_t len = 0;
        if (mcp_later_answer(l, &text, &len) == 0)
            answer_queue(r, text, len);
        free(text);
        return;
    }
    mcp_later **nl = common_array_grow(r->later, r->nlater, &r->caplater, sizeof *nl, 4);
    if (!nl) {
        logf_("out of memory keeping a read tool answer; it is dropped");
        mcp_later_free(l);
        return;
    }
    r->later = nl;
    r->later[r->nlater++] = l;
}

/* Answers the read tool calls whose search has ended (READY[i]) or whose
 * deadline has passed. */
static void later_pump(relay *r, const int *ready)
{
    double now = mcp_search_now();
    for (size_t i = r->nlater; i-- > 0;) {
        mcp_later *l = r->later[i];
        char *text = NULL;
        size_t len = 0;
        if (!(ready && ready[i]) && now < mcp_later_deadline(l))
            continue;
        r->later[i] = r->later[--r->nlater];
        if (mcp_later_answer(l, &text, &len))
            logf_("out of memory answering a read tool call; it is dropped");
        else
            answer_queue(r, text, len);
        free(text);
    }
}

/* The poll timeout (ms) until the first search deadline, or -1. */
static int later_timeout(const relay *r)
{
    double now = mcp_search_now(), first = -1;
    for (size_t i = 0; i < r->nlater; i++) {
        double left = mcp_later_deadline(r->later[i]) - now;
        if (first < 0 || left < first)
            first = left < 0 ? 0 : left;
    }
    return first < 0 ? -1 : (int)(first * 1000) + 1;
}

/* Decides what to send for the line of LL bytes at the front of D (plus
 * its newline when NL). */
static void side_take(relay *r, side *d, size_t ll, int nl)
{
    char *line = d->buf + d->start;
    mcp_verdict v;
    int rc = d->from_client ? mcp_rewriter_client(r->rw, line, ll, &v)
                            : mcp_rewriter_server(r->rw, line, ll, &v);
    if (rc == ENOMEM)
        logf_("out of memory rewriting a message of %zu bytes from the %s: passed through "
              "unchanged", ll, d->from_client ? "client" : "server");
    if (v.note)
        logf_("%s", v.note);
    d->written = 0;
    d->scanned = 0;
    if (v.action == MCP_REPLACE && v.text) {
        /* Room for the newline: the text is NUL-terminated, so len + 1 fits. */
        v.text[v.len] = '\n';
        d->owned = v.text;
        d->op = v.text;
        d->olen = v.len + 1;
        d->consume = ll + (size_t)nl;
        v.text = NULL;
    } else if (v.action == MCP_DEFER && v.later) {
        later_add(r, v.later);
        v.later = NULL;
        d->op = line; /* nothing to send on: drop the line */
        d->olen = 0;
        d->consume = ll + (size_t)nl;
    } else if (v.action == MCP_ANSWER && v.text) {
        answer_queue(r, v.text, v.len);
        d->op = line; /* nothing to send on: drop the line */
        d->olen = 0;
        d->consume = ll + (size_t)nl;
    } else {
        d->op = line;
        d->olen = ll + (size_t)nl;
        d->consume = d->olen;
    }
    mcp_verdict_release(&v);
}

/* D's line (its first LL bytes read, ENDED when its newline follows them)
 * is over the limit: it is dropped, and the rest of it as it comes
 * (SKIPPING); the client gets a JSON-RPC error in its place when its start
 * names a request (mcp.h). */
static void side_oversize(relay *r, side *d, size_t ll, int ended)
{
    char *out = NULL;
    size_t outlen = 0;
    if (mcp_rewriter_oversized(r->rw, d->from_client, d->buf + d->start, ll, r->max, &out,
                               &outlen))
        logf_("out of memory answering a message over the size limit");
    logf_("a message from the %s is longer than the maximum message size, %llu bytes (%s): "
          "dropped up to its newline%s", d->from_client ? "client" : "server",
          (unsigned long long)r->max, MCP_MAX_MESSAGE_ENV,
          out ? "; the client gets a JSON-RPC error with its id instead" : "");
    if (out)
        answer_queue(r, out, outlen);
    free(out);
    ll += (size_t)ended;
    d->start += ll;
    d->len -= ll;
    if (d->len == 0)
        d->start = 0;
    d->scanned = 0;
    d->skipping = !ended;
}

/* In SKIPPING: drops D's bytes up to and with the next newline. */
static void side_skip(side *d)
{
    char *p = d->buf + d->start, *nl = memchr(p, '\n', d->len);
    size_t drop = nl ? (size_t)(nl - p) + 1 : d->len;
    d->start += drop;
    d->len -= drop;
    if (d->len == 0)
        d->start = 0;
    d->scanned = 0;
    d->skipping = nl == NULL;
}

/* Turns complete lines into messages while D has nothing in flight. */
static void side_pump(relay *r, side *d)
{
    if (d->skipping && d->len > 0 && !d->op)
        side_skip(d);
    if (d->dead) { /* nowhere to send it: drop what was read, unread */
        if (d->op)
            side_done(d);
        d->len = d->start = d->scanned = 0;
        return;
    }
    while (!d->op && d->len > 0) {
        /* Read tool answers the client has not taken yet: the calls after
         * them wait in the buffer, as unread input would (one read can hold
         * hundreds of calls, each answer up to the budget). */
        if (d == &r->c2s && r->answers.len >= KEEP_CAP)
            return;
        char *p = d->buf + d->start;
        char *nl = memchr(p + d->scanned, '\n', d->len - d->scanned);
        if (!nl) {
            d->scanned = d->len;
            if (d->len > r->max) {
                side_oversize(r, d, d->len, 0);
                return;
            }
            if (!d->eof)
                return;
            logf_("the %s's last message has no newline (%zu bytes): passed through",
                  d->from_client ? "client" : "server", d->len);
            side_take(r, d, d->len, 0);
        } else if ((size_t)(nl - p) > r->max) {
            side_oversize(r, d, (size_t)(nl - p), 1); /* it ended in the read that crossed it */
            continue;
        } else {
            side_take(r, d, (size_t)(nl - p), 1);
        }
        if (d == &r->s2c)
            client_write(r);
        else
            side_write(d);
    }
}

/* Reads into D. Returns the bytes read, 0 at the end, -1 on EAGAIN/EINTR. */
static ssize_t side_read(side *d)
{
    ssize_t n;
    if (d->start > 0 && !d->op) { /* nothing points into buf: move to its front */
        memmove(d->buf, d->buf + d->start, d->len);
        d->start = 0;
    }
    if (d->cap > KEEP_CAP && d->len + CHUNK < KEEP_CAP) { /* a big message has gone */
        char *nb = realloc(d->buf, KEEP_CAP);
        if (nb) {
            d->buf = nb;
            d->cap = KEEP_CAP;
        }
    }
    if (d->cap - d->start - d->len < CHUNK / 4) {
        size_t ncap = d->cap + (d->cap / 4 > CHUNK ? d->cap / 4 : CHUNK);
        char *nb = realloc(d->buf, ncap);
        if (!nb) {
            logf_("out of memory buffering a message of %zu bytes; closing the %s's side",
                  d->len, d->from_client ? "client" : "server");
            return 0;
        }
        d->buf = nb;
        d->cap = ncap;
    }
    n = read(d->in, d->buf + d->start + d->len, d->cap - d->start - d->len);
    if (n < 0)
        return errno == EAGAIN || errno == EINTR ? -1 : 0;
    d->len += (size_t)n;
    return n;
}

/* ---- the loop -------------------------------------------------------------- */
static int finished(relay *r)
{
    return r->reaped && r->s2c.eof && r->s2c.len == 0 && !r->s2c.op && r->answers.len == 0 &&
           r->nlater == 0;
}

/* Closes the server's stdin once the client's side has nothing left to
 * send (a dead side has dropped what it had: side_pump). */
static void maybe_close_child_in(relay *r)
{
    side *d = &r->c2s;
    if (d->out >= 0 && (d->eof || d->dead) && d->len == 0 && !d->op)
        side_close_out(d);
}

/* The server did not exit after its stdin closed: SIGTERM, then SIGKILL,
 * to its whole process group (mcp.h). SIGTERM comes once the server has
 * been quiet since its stdin closed for MCP_TERM_AFTER_MS, or for
 * MCP_ANSWER_WAIT_MS while answers to the client's requests are due: a
 * server still writing (an answer in flight), or still to answer, is not
 * cut, and time the proxy spends rewriting or waiting for the client to
 * read is not the server's. SIGKILL follows MCP_KILL_AFTER_MS after
 * SIGTERM. NOW is common_clock_ms(). Returns the poll timeout until the next step,
 * or -1. */
static int stop_server(relay *r, long closed_at, long now)
{
    long quiet = now - (r->quiet_since > closed_at ? r->quiet_since : closed_at);
    int due = mcp_rewriter_awaited(r->rw) > 0;
    long wait = due ? MCP_ANSWER_WAIT_MS : MCP_TERM_AFTER_MS;
    if (r->stop_step == 0 && quiet >= wait) {
        logf_("the server '%s' did not exit %ld ms after its stdin closed%s: sending SIGTERM",
              r->cmd, quiet, due ? ", nor answer the requests still due" : "");
        r->sent = SIGTERM;
        kill(-r->child, SIGTERM);
        r->stop_step = 1;
        r->term_at = now;
    }
    if (r->stop_step == 1 && now - r->term_at >= MCP_KILL_AFTER_MS) {
        logf_("the server '%s' did not exit %d ms after SIGTERM: sending SIGKILL", r->cmd,
              MCP_KILL_AFTER_MS);
        r->sent = SIGKILL;
        kill(-r->child, SIGKILL);
        r->stop_step = 2;
    }
    if (r->stop_step == 2)
        return -1;
    return (int)(r->stop_step == 0 ? wait - quiet
                                   : MCP_KILL_AFTER_MS - (now - r->term_at)) + 1;
}

static void loop(relay *r)
{
    long reaped_at = -1, closed_at = -1, now;
    for (;;) {
        struct pollfd pf[5 + MCP_SEARCHES];
        int npf = 0, ic = -1, oc = -1, is = -1, os = -1, timeout = -1, lt, fl = -1;
        int ready[MCP_SEARCHES] = {0};

        side_pump(r, &r->c2s);
        side_pump(r, &r->s2c);
        if (r->s2c.dead) { /* the client is gone: what the server says is dropped */
            r->answers.len = r->answers_off = 0;
            r->c2s.eof = 1; /* and end the session for the server */
            r->client_closed = 1;
            if (r->c2s.op)
                side_done(&r->c2s);
            r->c2s.len = r->c2s.start = r->c2s.scanned = 0;
        }
        maybe_close_child_in(r);
        if (finished(r))
            return;

        pf[npf] = (struct pollfd){r->sigfd, POLLIN, 0};
        npf++;
        if (!r->c2s.eof && !r->c2s.op && r->c2s.in >= 0 && r->answers.len < KEEP_CAP) {
            ic = npf;
            pf[npf++] = (struct pollfd){r->c2s.in, POLLIN, 0};
        }
        if (r->c2s.op && r->c2s.out >= 0) {
            oc = npf;
            pf[npf++] = (struct pollfd){r->c2s.out, POLLOUT, 0};
        }
        if (!r->s2c.eof && !r->s2c.op && r->s2c.in >= 0) {
            is = npf;
            pf[npf++] = (struct pollfd){r->s2c.in, POLLIN, 0};
        }
        if (!r->s2c.dead) { /* always: POLLERR says the client stopped reading */
            os = npf;
            pf[npf++] = (struct pollfd){r->s2c.out, (short)(r->s2c.op || r->answers.len ? POLLOUT : 0), 0};
        }
        fl = npf; /* the searches: their pipes hang up when they end */
        for (size_t i = 0; i < r->nlater; i++)
            pf[npf++] = (struct pollfd){mcp_later_fd(r->later[i]), POLLIN, 0};

        /* The server's silence is counted only while the proxy waits for it
         * with nothing of its in hand: from the last bytes it wrote, or from
         * when the proxy last delivered or rewrote something of it. */
        now = (long)common_clock_ms();
        if (r->heard || r->s2c.op || r->quiet_since < 0)
            r->quiet_since = now;
        r->heard = 0;
        if (r->reaped && reaped_at < 0)
            reaped_at = now;
        if (r->c2s.out < 0 && closed_at < 0)
            closed_at = now;
        if (!r->reaped && closed_at >= 0)
            timeout = stop_server(r, closed_at, now);
        if (r->reaped) { /* what it started may hold its stdout open */
            long quiet = now - (r->quiet_since > reaped_at ? r->quiet_since : reaped_at);
            long left = GRACE_MS - quiet;
            if (left <= 0 && !r->s2c.op && r->answers.len == 0 && r->nlater == 0)
                return;
            timeout = left > 0 ? (int)left + 1 : 100;
        }
        lt = later_timeout(r);
        if (lt >= 0 && (timeout < 0 || lt < timeout))
            timeout = lt;
        if (poll(pf, (nfds_t)npf, timeout) < 0) {
            if (errno != EINTR) {
                logf_("poll: %s", strerror(errno));
                return;
            }
            continue;
        }
        if (pf[0].revents)
            signals_drain(r);
        if (ic >= 0 && pf[ic].revents) {
            if (side_read(&r->c2s) == 0) {
                r->c2s.eof = 1;
                r->client_closed = 1;
            }
        }
        if (is >= 0 && pf[is].revents) {
            ssize_t got = side_read(&r->s2c);
            if (got == 0)
                r->s2c.eof = 1;
            else if (got > 0 && !r->s2c.dead) /* for the client: it still reads */
                r->heard = 1;
        }
        if (oc >= 0 && pf[oc].revents)
            side_write(&r->c2s);
        if (os >= 0 && (pf[os].revents & POLLOUT))
            client_write(r);
        else if (os >= 0 && (pf[os].revents & (POLLERR | POLLHUP | POLLNVAL)))
            r->s2c.dead = 1;
        for (size_t i = 0; i < r->nlater; i++)
            ready[i] = pf[fl + (int)i].revents != 0;
        if (r->nlater)
            later_pump(r, ready);
    }
}

static const char *signame(int sig)
{
    const char *s = sigabbrev_np(sig);
    return s ? s : "?";
}

int mcp_relay_run(const mcp_relay_opts *o)
{
    relay r = {.rw = o->rw, .cmd = o->argv[0], .sigfd = -1, .quiet_since = -1};
    int rc, ex;

    r.max = o->max_message ? o->max_message : MCP_MAX_MESSAGE_DEFAULT;
    r.c2s = (side){.in = o->in_fd, .out = -1, .from_client = 1};
    r.s2c = (side){.in = -1, .out = o->out_fd, .from_client = 0, .gated = 1};
    if ((rc = signals_setup(&r))) {
        logf_("cannot set up signals: %s", strerror(rc));
        return 1;
    }
    if ((rc = spawn(&r, o->argv))) {
        logf_("cannot run the server '%s': %s", r.cmd, strerror(rc));
        signals_reset(&r);
        return rc == ENOENT ? 127 : 126;
    }
    reap(&r); /* a SIGCHLD may have come before the pipe was read */

    loop(&r);

    side_close_out(&r.c2s);
    if (r.s2c.in >= 0)
        close(r.s2c.in);
    r.s2c.in = -1;
    /* Wait for the server; what is left of the client's input is moot. */
    while (!r.reaped) {
        siginfo_t si = {.si_pid = 0};
        if (waitid(P_PID, (id_t)r.child, &si, WEXITED | WNOWAIT) == 0)
            r.reaped = 1;
        else if (errno != EINTR)
            break;
    }
    /* What it started and left running goes with it (held as a zombie, its
     * pid still names the group). */
    mcp_group_stop(r.child, r.cmd, MCP_KILL_AFTER_MS);
    while (waitpid(r.child, &r.status, 0) < 0 && errno == EINTR)
        ;
    signals_reset(&r);
    if (WIFSIGNALED(r.status) && WTERMSIG(r.status) == r.sent) {
        /* The end of a session: the client's SIGTERM (or a Ctrl-C) passed
         * on, or the proxy's own after the client closed. */
        ex = 128 + WTERMSIG(r.status);
        logf_("the server '%s' stopped on SIG%s, %s", r.cmd, signame(r.sent),
              r.stop_step ? "sent by the proxy as the session ended (it had not exited after "
                            "its stdin closed)"
                          : "passed on by the proxy, which received it");
    } else if (WIFSIGNALED(r.status)) {
        ex = 128 + WTERMSIG(r.status);
        logf_("the server '%s' was killed by signal %d (SIG%s)", r.cmd, WTERMSIG(r.status),
              signame(WTERMSIG(r.status)));
    } else {
        ex = WEXITSTATUS(r.status);
        if (ex != 0 || !r.client_closed)
            logf_("the server '%s' exited with status %d%s", r.cmd, ex,
                  r.client_closed ? "" : " while the client was still connected");
    }
    free(r.c2s.buf);
    free(r.s2c.buf);
    free(r.c2s.owned);
    free(r.s2c.owned);
    common_buf_release(&r.answers);
    for (size_t i = 0; i < r.nlater; i++)
        mcp_later_free(r.later[i]);
    free(r.later);
    return ex;
}
