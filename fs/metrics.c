/* metrics.c -- the daemon's GET /metrics (-o metrics=HOST:PORT), in the
 * Prometheus text format (metrics/prom.h), served by libmicrohttpd.
 *
 * Why it is shaped this way:
 * - A scrape must never block or slow a FUSE request. The handlers only
 *   add to relaxed atomics (fs.h: ofs_count); the HTTP server runs on
 *   libmicrohttpd's one internal thread; a scrape loads the atomics and
 *   reads the store's figures (and its remote's URL) in two short
 *   read-only LMDB transactions of its own (readers never wait for each
 *   other or for writers). Nothing here takes a lock a handler takes.
 * - The remote tier: a fetch (one ranged GET of a remote result's bytes:
 *   a read's in remote_read.c, a lookup's first bytes in remote.c) is
 *   timed and counted by ofs_metrics_fetch_done(), a few relaxed adds on
 *   the worker that made it. The pending uploads are
 *   the store's own marks (store_stats.pending), so agentlink stats
 *   --prometheus prints the same gauge and it is right after a restart.
 * - The socket is bound before mounting, so a taken port or an address
 *   that is not this host's is an error on the command line with nothing
 *   mounted; the server starts after fuse_daemonize() (threads do not
 *   survive fork(); the descriptor does).
 * - The address is always named by the user: HOST:PORT, no default host,
 *   so the endpoint is on loopback (127.0.0.1:PORT) unless the user writes
 *   another address (0.0.0.0:PORT for every interface).
 * - The server's thread starts with every signal blocked: SIGINT and
 *   SIGTERM must reach the thread that runs the session loop.
 */
#include "fs/fs.h"
#include "metrics/prom.h"

#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define METRICS_PATH "/metrics"
#define METRICS_BACKLOG 16
#define METRICS_CONN_MAX 16u     /* connections at once */
#define METRICS_CONN_TIMEOUT 10u /* seconds an idle connection is kept */

/* Splits "HOST:PORT" (HOST may be "[v6]") into HOST and PORT; prints why
 * on failure. */
static int split_addr(const char *arg, char *host, size_t hostsz, char *port,
                      size_t portsz)
{
    const char *colon = strrchr(arg, ':'), *h = arg, *p;
    size_t hlen;
    char *end;
    unsigned long v;
    if (!colon || colon == arg) {
        fprintf(stderr, "offloadfs: metrics '%s': name the address as HOST:PORT "
                "(127.0.0.1:PORT for this host only, 0.0.0.0:PORT for every interface)\n",
                arg);
        return EINVAL;
    }
    hlen = (size_t)(colon - arg);
    if (h[0] == '[' && hlen >= 2 && h[hlen - 1] == ']') { /* [::1]:9464 */
        h++;
        hlen -= 2;
    }
    p = colon + 1;
    errno = 0;
    v = strtoul(p, &end, 10);
    if (!*p || *end || errno || v > 65535 || *p == '-' || *p == '+' || hlen == 0
        || hlen >= hostsz || strlen(p) >= portsz) {
        fprintf(stderr, "offloadfs: metrics '%s': not HOST:PORT (PORT 0-65535; 0: any free port)\n",
                arg);
        return EINVAL;
    }
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    snprintf(port, portsz, "%lu", v);
    return 0;
}

/* Makes a listening TCP socket on AI; 0 or an errno value. */
static int listen_on(const struct addrinfo *ai, int *fd)
{
    int one = 1, s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                            ai->ai_protocol);
    if (s < 0)
        return errno;
    if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one)
        || bind(s, ai->ai_addr, ai->ai_addrlen) || listen(s, METRICS_BACKLOG)) {
        int rc = errno;
        close(s);
        return rc;
    }
    *fd = s;
    return 0;
}

/* Records "HOST:PORT" as bound (the port the kernel gave for 0) in M->url. */
static void url_record(struct ofs_metrics *m, const char *host)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    char sport[16] = "?";
    int v6 = strchr(host, ':') != NULL;
    if (!getsockname(m->listen_fd, (struct sockaddr *)&ss, &len))
        getnameinfo((struct sockaddr *)&ss, len, NULL, 0, sport, sizeof sport, NI_NUMERICSERV);
    snprintf(m->url, sizeof m->url, "http://%s%s%s:%s" METRICS_PATH, v6 ? "[" : "", host,
             v6 ? "]" : "", sport);
}

int ofs_metrics_listen(struct ofs_metrics *m, const char *arg)
{
    char host[256], port[8];
    struct addrinfo hints, *res = NULL;
    int rc;
    if ((rc = split_addr(arg, host, sizeof host, port, sizeof port)))
        return rc;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    if ((rc = getaddrinfo(host, port, &hints, &res))) {
        fprintf(stderr, "offloadfs: metrics '%s': host '%s': %s\n", arg, host, gai_strerror(rc));
        return EINVAL;
    }
    rc = EADDRNOTAVAIL;
    for (const struct addrinfo *ai = res; ai && rc; ai = ai->ai_next)
        rc = listen_on(ai, &m->listen_fd);
    freeaddrinfo(res);
    if (rc) {
        fprintf(stderr, "offloadfs: metrics '%s': cannot listen: %s; nothing was mounted\n",
                arg, strerror(rc));
        return rc;
    }
    m->bound = 1;
    url_record(m, host);
    return 0;
}

/* ---- the remote tier's fetches ----------------------------------------- */

/* Upper bounds of offloadfs_remote_fetch_seconds' buckets: a GET from a
 * server on the same network answers in a few ms, one across a region in
 * tens, and a failing one takes up to remote_bound_ms() (9.5 s by
 * default), so 1 ms to 10 s in 1-2.5-5 steps. Read-only. */
static const double fetch_bounds[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                      0.25,  0.5,    1.0,   2.5,  5.0,   10.0};
_Static_assert(sizeof fetch_bounds / sizeof fetch_bounds[0] == OFS_FETCH_BOUNDS,
               "fs.h's OFS_FETCH_BOUNDS counts fetch_bounds");

uint64_t ofs_metrics_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void ofs_metrics_fetch_done(struct ofs *fs, uint64_t start, int failed)
{
    uint64_t now = ofs_metrics_clock(), ns = now > start ? now - start : 0;
    double s = (double)ns / 1e9;
    unsigned i = 0;
    while (i < OFS_FETCH_BOUNDS && s > fetch_bounds[i]) /* le: a bound holds itself */
        i++;
    ofs_count(&fs->count.fetch_buckets[i], 1);
    ofs_count(&fs->count.fetch_ns, ns);
    if (failed)
        ofs_count(&fs->count.fetch_errors, 1);
    ofs_count(&fs->count.fetches, 1);
}

/* ---- one scrape --------------------------------------------------------- */

static uint64_t load(_Atomic uint64_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

/* The remote families: the store's pending uploads (from S), then this
 * mount's fetches. The counters are loaded one by one, so a fetch ending
 * during the scrape may show in one and not yet in another; each alone
 * never goes backwards. */
static int scrape_remote(struct ofs *fs, FILE *f, const store_stats *s)
{
    uint64_t buckets[OFS_FETCH_BOUNDS + 1];
    prom_remote_figures rf;
    int rc;
    for (unsigned i = 0; i <= OFS_FETCH_BOUNDS; i++)
        buckets[i] = load(&fs->count.fetch_buckets[i]);
    rf = (prom_remote_figures){
        load(&fs->count.fetches), load(&fs->count.fetch_errors), load(&fs->count.lookup_errors),
        {fetch_bounds, buckets, OFS_FETCH_BOUNDS, (double)load(&fs->count.fetch_ns) / 1e9},
    };
    if ((rc = prom_pending_write(f, s->pending, store_path(fs->st))))
        return rc;
    return prom_remote_write(f, &rf, fs->ns);
}

/* Writes the whole exposition into F; 0 or a store code / errno value. */
static int scrape(struct ofs *fs, FILE *f)
{
    prom_mount_figures mf = {
        load(&fs->count.reads), load(&fs->count.read_bytes),
        load(&fs->count.evicted_reads), load(&fs->count.missing_lookups),
    };
    prom_store_figures sf;
    store_stats s;
    char url[STORE_REMOTE_MAX + 1];
    int rc;
    /* lock.mdb damaged under us (fs.h): LMDB must not be touched again. */
    if (ofs_watch_lock_changed(fs))
        return STORE_ECORRUPT;
    if ((rc = store_stats_get(fs->st, &s))) /* one short read-only transaction */
        return rc;
    if ((rc = store_remote_get(fs->st, url, sizeof url))) /* and another */
        return rc;
    sf = (prom_store_figures){s.entries, s.bytes, s.stored_bytes, s.max_total_bytes,
                              s.puts, s.evictions, s.removals};
    if ((rc = prom_build_info_write(f, OFFLOADFS_VERSION))
        || (rc = prom_mount_write(f, &mf, fs->ns))
        || (rc = prom_store_write(f, &sf, store_path(fs->st))))
        return rc;
    /* The remote families whenever the store names a remote, also when
     * this daemon could not open it (its fetches are then 0). */
    return url[0] ? scrape_remote(fs, f, &s) : 0;
}

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned status,
                               const char *type, char *body, size_t len)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    enum MHD_Result ret;
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* A short plain-text answer (errors, wrong paths). */
static enum MHD_Result respond_text(struct MHD_Connection *conn, unsigned status,
                                    const char *msg)
{
    char *body = strdup(msg);
    return body ? respond(conn, status, "text/plain; charset=utf-8", body, strlen(body))
                : MHD_NO;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **req_cls)
{
    struct ofs *fs = cls;
    char *body = NULL, msg[256];
    size_t len = 0;
    FILE *f;
    int rc;
    (void)version;
    (void)upload;
    (void)upload_size;
    (void)req_cls;
    if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
        return respond_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET " METRICS_PATH "\n");
    if (strcmp(url, METRICS_PATH))
        return respond_text(conn, MHD_HTTP_NOT_FOUND, "not found: try " METRICS_PATH "\n");
    if (!(f = open_memstream(&body, &len)))
        return respond_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    rc = scrape(fs, f);
    if (fclose(f) && !rc)
        rc = ENOMEM;
    if (!rc)
        return respond(conn, MHD_HTTP_OK, PROM_CONTENT_TYPE, body, len);
    free(body);
    /* No partial exposition: a scrape that fails shows as the target
     * failing (Prometheus' up == 0), never as series that vanish. */
    snprintf(msg, sizeof msg, "offloadfs: reading the store's figures: %s\n",
             store_strerror(rc));
    fuse_log(FUSE_LOG_ERR, "%s", msg);
    return respond_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
}

/* ---- start and stop --------------------------------------------------- */

int ofs_metrics_start(struct ofs *fs)
{
    struct ofs_metrics *m = &fs->metrics;
    sigset_t all, old;
    if (!m->bound)
        return 0;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* the server's thread inherits it */
    m->httpd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO, 0, NULL, NULL,
                                on_request, fs, MHD_OPTION_LISTEN_SOCKET, m->listen_fd,
                                MHD_OPTION_CONNECTION_LIMIT, METRICS_CONN_MAX,
                                MHD_OPTION_CONNECTION_TIMEOUT, METRICS_CONN_TIMEOUT,
                                MHD_OPTION_END);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!m->httpd)
        return EIO;
    fuse_log(FUSE_LOG_INFO, "offloadfs: metrics at %s\n", m->url);
    return 0;
}

void ofs_metrics_stop(struct ofs *fs)
{
    struct ofs_metrics *m = &fs->metrics;
    if (m->httpd) {
        MHD_stop_daemon(m->httpd); /* closes the listening socket too */
        m->httpd = NULL;
    } else if (m->bound) {
        close(m->listen_fd);
    }
    m->bound = 0;
}
