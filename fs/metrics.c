/* metrics.c -- the daemon's GET /metrics (-o metrics=HOST:PORT), in the
 * Prometheus text format (metrics/prom.h), served by libmicrohttpd.
 *
 * Why it is shaped this way:
 * - A scrape must never block or slow a FUSE request. The handlers only
 *   add to relaxed atomics (counters.h), and never call this file; the
 *   HTTP server runs on one
 *   thread of its own; a scrape loads the atomics and
 *   reads the store's figures (and its remote's URL) in two short
 *   read-only LMDB transactions of its own (readers never wait for each
 *   other or for writers). Nothing here takes a lock a handler takes.
 * - The remote tier: a fetch (counters.h defines it) is timed and counted
 *   by ofs_fetch_done() (counters.c), a few relaxed adds on the worker
 *   that made it. The pending uploads are
 *   the store's own marks (store_stats.pending), so agentlink stats
 *   --prometheus prints the same gauge and it is right after a restart.
 * - The socket is bound before mounting, so a taken port or an address
 *   that is not this host's is an error on the command line with nothing
 *   mounted; the server starts after fuse_daemonize() (threads do not
 *   survive fork(); the descriptor does).
 * - The address is always named by the user, in one of three plain forms:
 *   a dotted quad (inet_pton), an IPv6 address in brackets, or localhost
 *   (127.0.0.1). inet_aton()'s older forms, which getaddrinfo() takes too,
 *   are refused: "0" would be every interface, "127.1", "2130706433",
 *   "0x7f000001" and "0177.0.0.1" are 127.0.0.1, and a reader of the
 *   command line should not have to know it. Host names are refused as
 *   well: a name can stand for several addresses, and the one bound must
 *   be the one written. The log names the address bound, in its plain form
 *   (getsockname()), and warns when it is not a loopback one: the labels
 *   name the store's path and the namespace. [::] is IPv6 only
 *   (IPV6_V6ONLY), whatever the host's default: 0.0.0.0 is IPv4's.
 * - Slow clients: libmicrohttpd's timeout counts from the last byte
 *   received, so a client sending one byte a second keeps its place for
 *   ever, and 16 of them (the limit) kept every scrape out. Each place is
 *   now bounded three ways: 4 per client address (one Prometheus needs
 *   one); a request must be whole within 5 s of the connection's opening
 *   or of its previous answer, and within 1 s while every place is taken
 *   (a real client sends its request in one packet: milliseconds); and
 *   libmicrohttpd's 10 s of silence for the rest (an answer not read).
 *   Our thread runs libmicrohttpd's event loop (epoll, one thread for
 *   every connection: a slow one blocks nobody, since no handler blocks)
 *   and, between two rounds of it, cuts the connections past their time
 *   with shutdown(): libmicrohttpd then reads the end of the stream and
 *   closes them itself. The loop and every callback run on that one
 *   thread, so the places need no lock.
 * - The server's thread starts with every signal blocked: SIGINT and
 *   SIGTERM must reach the thread that runs the session loop.
 */
#include "common/clock.h"
#include "fs/fs.h"
#include "fs/counters.h"
#include "fs/metrics.h"
#include "metrics/prom.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define METRICS_PATH "/metrics"
#define METRICS_BACKLOG 16
#define METRICS_CONN_MAX 16u     /* connections at once (places) */
#define METRICS_PER_IP 4u        /* of them from one client address */
#define METRICS_CONN_TIMEOUT 10u /* seconds of silence that close a connection */
#define METRICS_REQUEST_MS 5000u /* a request must be whole within this ... */
#define METRICS_REQUEST_FULL_MS 1000u /* ... or this, while every place is taken */

/* The forms HOST may take, for the messages. */
#define METRICS_FORMS "write a.b.c.d (127.0.0.1:PORT for this host only, 0.0.0.0:PORT " \
    "for every interface), [IPv6] (such as [::1]:PORT) or localhost"

/* Splits "HOST:PORT" (HOST may be "[v6]": *BRACKETED is then 1 and HOST
 * the text inside) into HOST and PORT; prints why on failure. */
static int split_addr(const char *arg, char *host, size_t hostsz, int *bracketed, char *port,
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
    *bracketed = h[0] == '[' && hlen >= 2 && h[hlen - 1] == ']'; /* [::1]:9464 */
    if (*bracketed) {
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

/* Checks that HOST (split from ARG) has one of the forms taken (the top of
 * this file), rewriting localhost as 127.0.0.1, and sets *FAMILY to its
 * address family. 0, or EINVAL after printing why. */
static int host_check(const char *arg, char *host, size_t hostsz, int bracketed, int *family)
{
    char addr[INET6_ADDRSTRLEN];
    unsigned char buf[sizeof(struct in6_addr)];
    size_t len = strcspn(host, "%"); /* fe80::1%eth0: the zone is getaddrinfo()'s */
    if (bracketed) {
        if (len < sizeof addr) {
            memcpy(addr, host, len);
            addr[len] = '\0';
            if (inet_pton(AF_INET6, addr, buf) == 1) {
                *family = AF_INET6;
                return 0;
            }
        }
        fprintf(stderr, "offloadfs: metrics '%s': HOST '[%s]' is not an IPv6 address; "
                METRICS_FORMS "\n", arg, host);
        return EINVAL;
    }
    *family = AF_INET;
    if (!strcasecmp(host, "localhost")) {
        snprintf(host, hostsz, "127.0.0.1");
        return 0;
    }
    if (inet_pton(AF_INET, host, buf) == 1) /* four decimal parts, nothing else */
        return 0;
    if (strchr(host, ':'))
        fprintf(stderr, "offloadfs: metrics '%s': HOST '%s' looks like an IPv6 address: "
                "write it in brackets, as in [::1]:PORT\n", arg, host);
    else
        fprintf(stderr, "offloadfs: metrics '%s': HOST '%s' is not an address in a form "
                "offloadfs takes (host names and shorthands such as 0 or 127.1 are refused); "
                METRICS_FORMS "\n", arg, host);
    return EINVAL;
}

/* Makes a listening TCP socket on AI; 0 or an errno value. */
static int listen_on(const struct addrinfo *ai, int *fd)
{
    int one = 1, s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                            ai->ai_protocol);
    if (s < 0)
        return errno;
    if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one)
        || (ai->ai_family == AF_INET6
            && setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one))
        || bind(s, ai->ai_addr, ai->ai_addrlen) || listen(s, METRICS_BACKLOG)) {
        int rc = errno;
        close(s);
        return rc;
    }
    *fd = s;
    return 0;
}

/* Whether the bound address SS is a loopback one (127.0.0.0/8, ::1, or
 * ::ffff:127.x.y.z). */
static int is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    }
    if (ss->ss_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
    return 0;
}

/* Records the address the socket is bound to, as getsockname() gives it
 * (the port the kernel gave for 0 too), in M->url, and whether it is a
 * loopback one in M->loopback. */
static void url_record(struct ofs_metrics *m)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    char host[INET6_ADDRSTRLEN + 1 + 16] = "?", sport[8] = "?"; /* %zone: an interface */
    int v6 = 0;
    memset(&ss, 0, sizeof ss);
    if (!getsockname(m->listen_fd, (struct sockaddr *)&ss, &len)) {
        getnameinfo((struct sockaddr *)&ss, len, host, sizeof host, sport, sizeof sport,
                    NI_NUMERICHOST | NI_NUMERICSERV);
        v6 = ss.ss_family == AF_INET6;
        m->loopback = is_loopback(&ss);
    }
    snprintf(m->url, sizeof m->url, "http://%s%s%s:%s" METRICS_PATH, v6 ? "[" : "", host,
             v6 ? "]" : "", sport);
}

int ofs_metrics_listen(struct ofs_metrics *m, const char *arg)
{
    char host[256], port[8];
    struct addrinfo hints, *res = NULL;
    int rc, bracketed, family;
    if ((rc = split_addr(arg, host, sizeof host, &bracketed, port, sizeof port))
        || (rc = host_check(arg, host, sizeof host, bracketed, &family)))
        return rc;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = family;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV; /* never the resolver */
    if ((rc = getaddrinfo(host, port, &hints, &res))) {
        fprintf(stderr, "offloadfs: metrics '%s': host '%s': %s\n", arg, host, gai_strerror(rc));
        return EINVAL;
    }
    rc = listen_on(res, &m->listen_fd); /* a numeric host: one address */
    freeaddrinfo(res);
    if (rc) {
        fprintf(stderr, "offloadfs: metrics '%s': cannot listen: %s; nothing was mounted\n",
                arg, strerror(rc));
        return rc;
    }
    m->bound = 1;
    url_record(m);
    return 0;
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
        load(&fs->count.window_bytes),
        {ofs_fetch_bounds(), buckets, OFS_FETCH_BOUNDS, (double)load(&fs->count.fetch_ns) / 1e9},
        load(&fs->count.fetch_bytes), load(&fs->count.cache_hits), load(&fs->count.cache_misses),
    };
    if ((rc = prom_pending_write(f, s->pending, store_path(fs->st))) ||
        (rc = prom_cached_write(f, s->cached_entries, s->cached_bytes, store_path(fs->st))))
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
    if (atomic_load(&fs->lock_changed))
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

/* ---- the places, and the loop ---------------------------------------- */

/* One connection's place. Its next request must be whole, and answered,
 * within request_ms() of SINCE: an answer is a few KiB, handed to the
 * kernel at once, so the rule is in fact about the request. */
struct metrics_place {
    struct MHD_Connection *conn; /* NULL: free */
    int fd;                      /* its socket, for shutdown() */
    int cut;                     /* shut down: libmicrohttpd closes it next */
    uint64_t since;              /* ms: it opened, or its last answer went out */
};

/* The server (ofs_metrics.srv): libmicrohttpd in external-poll mode and
 * the thread that runs it. Every field but stop_fd is used by that thread
 * only, and by ofs_metrics_stop() once it has ended. */
struct ofs_metrics_server {
    struct MHD_Daemon *httpd;
    pthread_t thread;
    int stop_fd;                 /* eventfd: written to end the loop */
    int listen_fd;               /* libmicrohttpd's listening socket (it owns it) */
    unsigned used;               /* places taken */
    struct metrics_place place[METRICS_CONN_MAX];
};

/* How long a request may take to arrive, now: shorter when no place is free. */
static uint64_t request_ms(const struct ofs_metrics_server *srv)
{
    return srv->used >= METRICS_CONN_MAX ? METRICS_REQUEST_FULL_MS : METRICS_REQUEST_MS;
}

/* libmicrohttpd: a connection opened (takes a place) or closed (frees it). */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct ofs_metrics_server *srv = cls;
    struct metrics_place *p = *socket_context;
    const union MHD_ConnectionInfo *ci;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        if (p) {
            p->conn = NULL;
            srv->used--;
        }
        return;
    }
    ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    for (unsigned i = 0; i < METRICS_CONN_MAX && ci; i++) {
        if (!srv->place[i].conn) {
            srv->place[i] = (struct metrics_place){conn, ci->connect_fd, 0, common_clock_ms()};
            srv->used++;
            *socket_context = &srv->place[i];
            return;
        }
    }
    /* No place (libmicrohttpd's limit is the number of places: not
     * expected): not kept. */
    if (ci)
        shutdown(ci->connect_fd, SHUT_RDWR);
}

/* The place of CONN (NULL for one on_connection() did not keep). */
static struct metrics_place *place_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* libmicrohttpd: a request has been answered (or abandoned); on a
 * connection kept alive, the next one is timed from now. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct metrics_place *p = place_of(conn);
    (void)cls;
    (void)req_cls;
    (void)toe;
    if (p)
        p->since = common_clock_ms();
}

/* Cuts every connection whose request is late at NOW; returns the ms until
 * the next one is due (-1: no connection). */
static int cut_late(struct ofs_metrics_server *srv, uint64_t now)
{
    uint64_t limit = request_ms(srv), next = UINT64_MAX;
    for (unsigned i = 0; i < METRICS_CONN_MAX; i++) {
        struct metrics_place *p = &srv->place[i];
        if (!p->conn || p->cut)
            continue;
        if (now - p->since >= limit) {
            shutdown(p->fd, SHUT_RDWR); /* libmicrohttpd reads EOF and closes it */
            p->cut = 1;
        } else if (p->since + limit - now < next) {
            next = p->since + limit - now;
        }
    }
    return next == UINT64_MAX ? -1 : (int)next;
}

/* The server's thread: libmicrohttpd's rounds, and the cuts between them,
 * until stop_fd is written.
 * At its connection limit libmicrohttpd takes the listening socket out of
 * its epoll set, and puts it back only at the start of a later round. A
 * round that closes the last connections therefore leaves nothing in the
 * set to wake the loop: the next client would wait in the backlog for
 * ever. So while a place is free the loop also polls the listening socket
 * itself (not while every place is taken: it would be ready at once, and
 * the loop would spin). */
static void *serve_loop(void *arg)
{
    struct ofs_metrics_server *srv = arg;
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(srv->httpd, MHD_DAEMON_INFO_EPOLL_FD);
    struct pollfd pfd[3] = {{di ? di->epoll_fd : -1, POLLIN, 0}, {srv->stop_fd, POLLIN, 0},
                            {-1, POLLIN, 0}};
    for (;;) {
        MHD_UNSIGNED_LONG_LONG mhd_ms;
        int wait = cut_late(srv, common_clock_ms()); /* at most METRICS_REQUEST_MS */
        if (MHD_get_timeout(srv->httpd, &mhd_ms) == MHD_YES
            && (wait < 0 || mhd_ms < (MHD_UNSIGNED_LONG_LONG)wait))
            wait = mhd_ms < 60000 ? (int)mhd_ms : 60000;
        pfd[2].fd = srv->used < METRICS_CONN_MAX ? srv->listen_fd : -1;
        if (poll(pfd, 3, wait) < 0 && errno != EINTR)
            break; /* not expected: the daemon goes on without metrics */
        if (pfd[1].revents)
            break;
        MHD_run(srv->httpd);
    }
    return NULL;
}

/* ---- start and stop --------------------------------------------------- */

/* Starts libmicrohttpd on M's socket (which it then owns) and the thread
 * that runs it; 0 or an errno value (SRV is then as it was). */
static int server_start(struct ofs_metrics_server *srv, struct ofs *fs, int listen_fd)
{
    sigset_t all, old;
    int rc;
    srv->httpd = MHD_start_daemon(
        MHD_USE_EPOLL, 0, NULL, NULL, on_request, fs, MHD_OPTION_LISTEN_SOCKET, listen_fd,
        MHD_OPTION_CONNECTION_LIMIT, METRICS_CONN_MAX, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        METRICS_PER_IP, MHD_OPTION_CONNECTION_TIMEOUT, METRICS_CONN_TIMEOUT,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, srv, MHD_OPTION_END);
    if (!srv->httpd)
        return EIO;
    srv->listen_fd = listen_fd;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* the server's thread inherits it */
    rc = pthread_create(&srv->thread, NULL, serve_loop, srv);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        MHD_stop_daemon(srv->httpd);
        srv->httpd = NULL;
    }
    return rc;
}

int ofs_metrics_start(struct ofs *fs)
{
    struct ofs_metrics *m = &fs->metrics;
    struct ofs_metrics_server *srv;
    int rc;
    if (!m->bound)
        return 0;
    if (!(srv = calloc(1, sizeof *srv)))
        return ENOMEM;
    if ((srv->stop_fd = eventfd(0, EFD_CLOEXEC)) < 0) {
        rc = errno;
        free(srv);
        return rc;
    }
    m->bound = 0; /* libmicrohttpd owns the socket now, and closes it, even when it fails */
    if ((rc = server_start(srv, fs, m->listen_fd))) {
        close(srv->stop_fd);
        free(srv);
        return rc;
    }
    m->srv = srv;
    fuse_log(FUSE_LOG_INFO, "offloadfs: metrics at %s\n", m->url);
    if (!m->loopback)
        fuse_log(FUSE_LOG_WARNING, "offloadfs: warning: metrics at %s, not a loopback address: "
                 "every network that reaches it reads the store's path and the namespace in "
                 "the labels (no TLS, no authentication)\n", m->url);
    return 0;
}

void ofs_metrics_stop(struct ofs *fs)
{
    struct ofs_metrics *m = &fs->metrics;
    struct ofs_metrics_server *srv = m->srv;
    if (srv) {
        uint64_t one = 1;
        if (write(srv->stop_fd, &one, sizeof one) != sizeof one)
            fuse_log(FUSE_LOG_ERR, "offloadfs: stopping the metrics server: %s\n",
                     strerror(errno));
        pthread_join(srv->thread, NULL);
        MHD_stop_daemon(srv->httpd); /* closes the listening socket too */
        close(srv->stop_fd);
        free(srv);
        m->srv = NULL;
    } else if (m->bound) {
        close(m->listen_fd);
    }
    m->bound = 0;
}
