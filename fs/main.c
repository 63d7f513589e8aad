/* main.c -- offloadfs: mounts one namespace of a result store read-only.
 *
 *   offloadfs [-f] [-d] [-o OPTIONS] STORE MOUNTPOINT
 *
 * Startup order matters: everything a user can get wrong (options, the
 * namespace, the store, the mountpoint) is checked before mounting, so a bad
 * invocation never leaves a mount behind. The store is probed once before
 * mounting (and closed again) only to report problems clearly; the handle
 * the daemon serves from is opened after fuse_daemonize(), because LMDB
 * handles must not cross fork().
 *
 * Readiness: under systemd (Type=notify), $NOTIFY_SOCKET names a datagram
 * socket; once the mount exists and the store is open, "READY=1" goes there,
 * before the first request is served, so units ordered after ours find the
 * mount up. No libsystemd: the protocol is one sendto().
 *
 * Exit status: 0 after an unmount, SIGINT, SIGTERM or SIGHUP, or after -h
 * and -V; 2 for a bad invocation; 1 when the store or the mount fails, and
 * when lock.mdb was damaged under the running daemon (the watcher then
 * logs what happened and stops the session; the daemon unmounts).
 */
#include "fs/fs.h"
#include "fs/conn.h"
#include "fs/decode.h"
#include "fs/fill.h"
#include "fs/listing.h"
#include "fs/lookup.h"
#include "fs/metrics.h"
#include "fs/mount.h"
#include "fs/ops.h"
#include "fs/pin.h"
#include "fs/prefetch.h"
#include "fs/wake.h"
#include "fs/watch.h"
#include "fs/window.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#define EXIT_USAGE 2

/* What our own option pass collects before libfuse sees the rest. */
struct cli {
    char *ns;          /* -o namespace=NS (fuse_opt strdup's it) */
    char *prefetch;    /* -o prefetch=SIZE */
    char *remote_ttl;  /* -o remote_ttl=SECONDS */
    char *remote_stall;   /* -o remote_stall=SECONDS */
    char *remote_retries; /* -o remote_retries=N */
    char *remote_list_max; /* -o remote_list_max=NAMES */
    char *remote_list_s;   /* -o remote_list_seconds=SECONDS */
    char *metrics;     /* -o metrics=HOST:PORT */
    char *decode_ahead; /* -o decode_ahead=SIZE */
    char *store;       /* first positional */
    char *mountpoint;  /* second positional */
    int extra_args;    /* positionals beyond two */
    int stack;         /* -o stack: mount over an offloadfs mount */
    int has_fsname;
    int has_subtype;
    uint64_t prefetch_max; /* parsed from prefetch */
    uint64_t decode_ahead_max; /* parsed from decode_ahead */
    unsigned remote_ttl_s; /* parsed from remote_ttl */
    unsigned remote_stall_s, remote_retries_n; /* 0: the default */
    unsigned remote_list_max_n, remote_list_s_n; /* 0: the default */
};

enum { KEY_DROP, KEY_FSNAME, KEY_SUBTYPE };

static const struct fuse_opt cli_opts[] = {
    {"namespace=%s", offsetof(struct cli, ns), 0},
    {"prefetch=%s", offsetof(struct cli, prefetch), 0},
    {"remote_ttl=%s", offsetof(struct cli, remote_ttl), 0},
    {"remote_stall=%s", offsetof(struct cli, remote_stall), 0},
    {"remote_retries=%s", offsetof(struct cli, remote_retries), 0},
    {"remote_list_max=%s", offsetof(struct cli, remote_list_max), 0},
    {"remote_list_seconds=%s", offsetof(struct cli, remote_list_s), 0},
    {"metrics=%s", offsetof(struct cli, metrics), 0},
    {"decode_ahead=%s", offsetof(struct cli, decode_ahead), 0},
    {"stack", offsetof(struct cli, stack), 1},
    FUSE_OPT_KEY("fsname=", KEY_FSNAME),
    FUSE_OPT_KEY("subtype=", KEY_SUBTYPE),
    /* Options mount(8) and mount.fuse3 pass from fstab that mean nothing
     * here (or, like rw, that a read-only mount overrides): accepted and
     * dropped, never fatal. */
    FUSE_OPT_KEY("rw", KEY_DROP),
    FUSE_OPT_KEY("defaults", KEY_DROP),
    FUSE_OPT_KEY("nofail", KEY_DROP),
    FUSE_OPT_KEY("auto", KEY_DROP),
    FUSE_OPT_KEY("noauto", KEY_DROP),
    FUSE_OPT_KEY("user", KEY_DROP),
    FUSE_OPT_KEY("nouser", KEY_DROP),
    FUSE_OPT_KEY("users", KEY_DROP),
    FUSE_OPT_KEY("owner", KEY_DROP),
    FUSE_OPT_KEY("group", KEY_DROP),
    FUSE_OPT_KEY("_netdev", KEY_DROP),
    FUSE_OPT_KEY("dev", KEY_DROP),
    FUSE_OPT_KEY("suid", KEY_DROP),
    FUSE_OPT_KEY("exec", KEY_DROP),
    FUSE_OPT_KEY("relatime", KEY_DROP),
    FUSE_OPT_KEY("norelatime", KEY_DROP),
    FUSE_OPT_KEY("strictatime", KEY_DROP),
    FUSE_OPT_KEY("lazytime", KEY_DROP),
    FUSE_OPT_KEY("nolazytime", KEY_DROP),
    FUSE_OPT_KEY("diratime", KEY_DROP),
    FUSE_OPT_KEY("nodiratime", KEY_DROP),
    FUSE_OPT_KEY("comment=", KEY_DROP),
    FUSE_OPT_END
};

static int cli_proc(void *data, const char *arg, int key, struct fuse_args *out)
{
    struct cli *c = data;
    (void)out;
    switch (key) {
    case KEY_DROP:
        return 0;
    case KEY_FSNAME:
        c->has_fsname = 1;
        return 1;
    case KEY_SUBTYPE:
        c->has_subtype = 1;
        return 1;
    case FUSE_OPT_KEY_OPT:
        return strncmp(arg, "x-", 2) != 0; /* x-systemd.* and friends */
    case FUSE_OPT_KEY_NONOPT:
        if (!c->store)
            c->store = strdup(arg);
        else if (!c->mountpoint)
            c->mountpoint = strdup(arg);
        else
            c->extra_args++;
        return 0;
    default:
        return 1;
    }
}

static void usage(FILE *f, const char *prog)
{
    fprintf(f, "usage: %s [-f] [-d] [-o OPTIONS] STORE MOUNTPOINT\n", prog);
}

static void help(const char *prog)
{
    usage(stdout, prog);
    printf("\nMounts the live results of one namespace of an offloadfs store,\n"
           "read-only, one regular file per key.\n\n"
           "offloadfs options:\n"
           "    -o namespace=NS        namespace to show (default: $OFFLOADFS_NAMESPACE,\n"
           "                           else the \"namespace\" of the policy file\n"
           "                           $OFFLOADFS_CONFIG, else \"default\")\n"
           "    -o fsname=NAME         defaults to the store path\n"
           "    -o subtype=NAME        defaults to \"offloadfs\"\n"
           "    -o prefetch=SIZE       push each result written while mounted, up to\n"
           "                           SIZE bytes (K, M, G: powers of 1024), into the\n"
           "                           page cache for its first read (default 64M;\n"
           "                           0: never)\n"
           "    -o remote_ttl=SECONDS  with a remote tier (agentlink init --remote): how\n"
           "                           long a remote answer (a name found or not) is\n"
           "                           reused (default 2; 0: every open asks)\n"
           "    -o remote_stall=SECONDS  a remote request that moves no byte this long\n"
           "                           fails (default 2)\n"
           "    -o remote_retries=N    retries of a failed remote request (default 2):\n"
           "                           a read of a remote result on a dead remote fails\n"
           "                           with EIO within a bound the mount logs\n"
           "    -o remote_list_max=NAMES  ls lists the remote's names when they are at\n"
           "                           most NAMES (default 1000000), else local ones only\n"
           "    -o remote_list_seconds=S  a listing of the remote ends within S seconds\n"
           "                           (default 30), else ls shows local names only\n"
           "    -o metrics=HOST:PORT   serve Prometheus metrics at http://HOST:PORT/metrics\n"
           "                           (off by default; name the address: 127.0.0.1:PORT\n"
           "                           or localhost:PORT for this host only, 0.0.0.0:PORT\n"
           "                           for every interface, [IPv6]:PORT; no other form;\n"
           "                           PORT 0: any free port; the address bound is logged)\n"
           "    -o decode_ahead=SIZE   decode up to SIZE bytes of a compressed result\n"
           "                           ahead of a sequential reader, on a thread of\n"
           "                           its own (default 1M; 0: decode each read's\n"
           "                           frames as it comes, keeping none)\n"
           "    -o stack               mount even where an offloadfs mount already is\n"
           "                           (else refused)\n"
           "    The mount is always read-only; rw, dev, suid, nofail, _netdev and\n"
           "    other fstab-only options are accepted and ignored.\n\n"
           "FUSE options:\n");
    fuse_cmdline_help();
    fuse_lowlevel_help();
}

/* Parses SIZE (bytes, or with K, M, G: powers of 1024) into *OUT; prints
 * why on failure. */
static int parse_size(const char *what, const char *arg, uint64_t *out)
{
    char *end;
    unsigned shift = 0;
    unsigned long long v;
    errno = 0;
    v = strtoull(arg, &end, 10);
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    if (shift)
        end++;
    if (errno || end == arg || *end || arg[0] == '-' || (v << shift) >> shift != v) {
        fprintf(stderr, "offloadfs: %s '%s': not a size (bytes, or with K, M, G)\n", what, arg);
        return 1;
    }
    *out = (uint64_t)v << shift;
    return 0;
}

/* Checks the namespace rules; prints why on failure. */
static int check_namespace(const char *ns)
{
    int rc = store_name_check(ns, strlen(ns));
    if (rc)
        fprintf(stderr, "offloadfs: namespace '%s': %s\n", ns, store_strerror(rc));
    return rc;
}

/* Resolves DIR into ABS and opens it once as the daemon will; prints what is
 * wrong on failure. */
static int probe_store(struct ofs_pin *pin, const char *dir, char *abs)
{
    store *st = NULL;
    char why[512];
    int rc;
    if (ofs_pin_open(pin, dir, abs, why, sizeof why)) {
        fprintf(stderr, "offloadfs: store '%s': %s; nothing was mounted\n", dir, why);
        return 1;
    }
    rc = store_open(&st, pin->files, STORE_RDONLY | STORE_VERIFY); /* every page, once */
    if (!rc) { /* one read, so a store that opens but cannot be read fails here */
        store_stats stats;
        rc = store_stats_get(st, &stats);
    }
    store_close(st);
    if (rc == STORE_ENOSTORE)
        fprintf(stderr, "offloadfs: store '%s': %s (make one with: agentlink init --store %s)\n",
                dir, store_strerror(rc), dir);
    else if (rc)
        fprintf(stderr, "offloadfs: store '%s': %s\n", dir, store_strerror(rc));
    return rc ? 1 : 0;
}

static int check_mountpoint(const char *dir, char *abs)
{
    struct stat sb;
    if (!realpath(dir, abs) || stat(abs, &sb) != 0) {
        fprintf(stderr, "offloadfs: mountpoint '%s': %s\n", dir, strerror(errno));
        return 1;
    }
    if (!S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "offloadfs: mountpoint '%s': %s\n", dir, strerror(ENOTDIR));
        return 1;
    }
    return 0;
}

/* Appends the options every mount gets: read-only, kernel permission checks,
 * and fsname/subtype unless given. */
static int add_mount_opts(struct fuse_args *args, const struct cli *c,
                          const char *store_abs)
{
    char fsname[PATH_MAX + 8], *opts = NULL;
    int rc = fuse_opt_add_opt(&opts, "ro,default_permissions");
    if (!rc && !c->has_fsname) {
        snprintf(fsname, sizeof fsname, "fsname=%s", store_abs);
        rc = fuse_opt_add_opt_escaped(&opts, fsname); /* commas in paths */
    }
    if (!rc && !c->has_subtype)
        rc = fuse_opt_add_opt(&opts, "subtype=offloadfs");
    if (!rc)
        rc = fuse_opt_add_arg(args, "-o");
    if (!rc)
        rc = fuse_opt_add_arg(args, opts);
    free(opts);
    return rc;
}

/* Runs the session until unmount or a signal; returns the exit status. */
static int serve(struct fuse_session *se, const struct fuse_cmdline_opts *o)
{
    struct fuse_loop_config *cfg;
    int ret;
    if (o->singlethread) {
        ret = fuse_session_loop(se);
    } else {
        if (!(cfg = fuse_loop_cfg_create()))
            return 1;
        fuse_loop_cfg_set_clone_fd(cfg, (unsigned)o->clone_fd);
        if (o->max_idle_threads != UINT_MAX) /* UINT_MAX: not given */
            fuse_loop_cfg_set_idle_threads(cfg, o->max_idle_threads);
        fuse_loop_cfg_set_max_threads(cfg, o->max_threads);
        ret = fuse_session_loop_mt(se, cfg);
        fuse_loop_cfg_destroy(cfg);
    }
    /* A positive value is the signal that ended the loop: a clean stop. */
    if (ret == SIGINT || ret == SIGTERM || ret == SIGHUP)
        ret = 0;
    return ret ? 1 : 0;
}

/* After daemonizing, stderr is /dev/null: messages go to syslog instead.
 * FUSE's log levels are syslog's priorities. */
__attribute__((format(printf, 2, 0)))
static void log_syslog(enum fuse_log_level level, const char *fmt, va_list ap)
{
    vsyslog((int)level, fmt, ap);
}

/* Sends MSG ("READY=1", "STOPPING=1") to the service manager when
 * $NOTIFY_SOCKET names one: an AF_UNIX datagram socket, in the abstract
 * namespace when the name starts with '@'. Does nothing without the
 * variable. A failure is logged and otherwise ignored: the mount works
 * either way, and systemd reports a unit that never gets ready. */
static void notify_systemd(const char *msg)
{
    const char *name = getenv("NOTIFY_SOCKET");
    struct sockaddr_un sa;
    size_t len;
    int fd, rc = 0;
    if (!name || !*name)
        return;
    len = strlen(name);
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    if ((name[0] != '/' && name[0] != '@') || len >= sizeof sa.sun_path) {
        fuse_log(FUSE_LOG_ERR, "offloadfs: NOTIFY_SOCKET '%s': not an AF_UNIX socket path\n",
                 name);
        return;
    }
    memcpy(sa.sun_path, name, len);
    if (name[0] == '@')
        sa.sun_path[0] = '\0';
    if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0) {
        rc = errno;
    } else {
        if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
                   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0)
            rc = errno;
        close(fd);
    }
    if (rc)
        fuse_log(FUSE_LOG_ERR, "offloadfs: telling systemd %s on '%s': %s\n", msg,
                 name, strerror(rc));
}

/* Answers requests until the watcher and the prefetcher have stopped. Both
 * may be waiting for an answer only this daemon can give (the prefetcher's
 * lookup, a page being read that it pushes to, the directory lock a lookup
 * holds while the watcher invalidates a name), so joining them with nobody
 * serving could hang. Returns when both are done, or when the connection is
 * gone (the kernel then fails whatever was waiting). */
static void drain(struct ofs *fs)
{
    struct fuse_session *se = fs->se;
    struct fuse_buf fbuf = {.mem = NULL};
    struct pollfd pfd = {.fd = fuse_session_fd(se), .events = POLLIN};
    int res;
    while (!ofs_watch_done(fs) || !ofs_prefetch_done(fs)) {
        /* A request read while the session counts as exited would be
         * dropped unanswered: the loop's end has reset it; a signal since
         * sets it again. */
        fuse_session_reset(se);
        if (poll(&pfd, 1, 10) <= 0)
            continue;
        if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))
            break;
        res = fuse_session_receive_buf(se, &fbuf);
        if (res > 0)
            fuse_session_process_buf(se, &fbuf);
        else if (res < 0 && res != -EINTR && res != -EAGAIN)
            break;
    }
    free(fbuf.mem);
}

/* Leaves ST open on purpose, for the exit to reclaim; a sanitizer build
 * tells LeakSanitizer so. */
static void store_leave_open(store *st)
{
#if defined(__SANITIZE_ADDRESS__)
    __lsan_ignore_object(st);
#endif
    (void)st;
}

/* Closes the store and releases the lock mark, in that order: closing the
 * mark's descriptor drops this process's fcntl() locks on lock.mdb, which
 * LMDB holds until its environment is closed. After the watcher found
 * lock.mdb changed, a lock file now shorter than at the start makes LMDB's
 * close (it clears our slots in the mapped reader table) die of SIGBUS:
 * the store is then left open. */
static void store_close_unless_damaged(struct ofs *fs)
{
    if (!atomic_load(&fs->lock_changed) || store_lock_closable(&fs->lock))
        store_close(fs->st);
    else
        store_leave_open(fs->st);
    store_lock_unmark(&fs->lock);
    fs->st = NULL;
}

/* Once the store is open through the pinned files (fs/pin.c) and lock.mdb
 * marked from them: the handle takes the store's real name (metrics, log
 * lines), the mark's later checks look at STORE/lock.mdb in the directory
 * we hold (a file put in its place is a change), and the private links go,
 * unless the daemon keeps copies: the child that writes a large one opens
 * the store through them (keep.c). Returns 0 or ENOMEM. */
static int store_named(struct ofs *fs, const char *store_abs)
{
    char path[sizeof fs->pin.dir + sizeof "/lock.mdb"], *p;
    int rc = store_path_set(fs->st, store_abs);
    if (!rc && fs->lock.path) {
        snprintf(path, sizeof path, "%s/lock.mdb", fs->pin.dir);
        if (!(p = strdup(path)))
            return ENOMEM;
        free(fs->lock.path);
        fs->lock.path = p;
    }
    if (!fs->keep)
        ofs_pin_release(&fs->pin);
    return rc;
}

/* Opens fs->st: read-only, as the daemon serves it; for writing too
 * (fs->keep) when the store names a remote, so that what the mount fetches
 * is kept as cached copies (keep.h: without an fsync, waking no one). A
 * store the daemon may not write (permissions, a read-only file system)
 * is served read-only, without copies. 0 or a store code. */
static int store_open_daemon(struct ofs *fs)
{
    char url[STORE_REMOTE_MAX + 1] = "";
    int rc = store_open(&fs->st, fs->pin.files, STORE_RDONLY);
    fs->keep = 0;
    if (rc || store_remote_get(fs->st, url, sizeof url) != 0 || !url[0])
        return rc;
    store_close(fs->st); /* the last handle: the next open decides the flags */
    if (store_open(&fs->st, fs->pin.files, STORE_NOSYNC | STORE_NOWAKE) == 0) {
        fs->keep = 1;
        return 0;
    }
    return store_open(&fs->st, fs->pin.files, STORE_RDONLY);
}

/* Everything after the session exists: mount, daemonize, open the store,
 * mark its lock file, watch it, serve, tear down in reverse. */
static int run_mounted(struct ofs *fs, const char *store_abs,
                       const struct fuse_cmdline_opts *o)
{
    struct fuse_session *se = fs->se;
    int ret = 1, rc;
    /* A shell without job control starts background commands with SIGINT
     * ignored, and libfuse leaves ignored signals alone: stopping on SIGINT
     * and SIGTERM is part of our interface, so take them back. SIGHUP keeps
     * its disposition (nohup). */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (fuse_set_signal_handlers(se) != 0)
        return 1;
    if (ofs_mount(se, fs->mountpoint) != 0)
        goto out_signals;
    fuse_daemonize(o->foreground);
    if (!o->foreground) {
        openlog("offloadfs", LOG_PID, LOG_DAEMON);
        fuse_set_log_func(log_syslog);
    }
    if ((rc = store_open_daemon(fs))) {
        fuse_log(FUSE_LOG_ERR, "offloadfs: store '%s': %s\n", store_abs, store_strerror(rc));
        goto out_unmount;
    }
    /* Right after the open, which sized and initialised lock.mdb if we are
     * its first user: from here on nothing healthy changes it. */
    if ((rc = store_lock_mark(fs->st, &fs->lock)) || (rc = store_named(fs, store_abs))) {
        fuse_log(FUSE_LOG_ERR, "offloadfs: store '%s': lock.mdb: %s\n", store_abs,
                 store_strerror(rc));
        goto out_store;
    }
    ofs_conn_open(fs); /* logs why when it cannot: local results are served anyway */
    if (fs->tier && ((rc = ofs_lookup_init(fs)) || (rc = ofs_window_init(fs)) ||
                     (rc = ofs_fill_init(fs)) || (rc = ofs_listing_init(fs)))) {
        fuse_log(FUSE_LOG_ERR, "offloadfs: remote read buffers: %s\n", strerror(rc));
        goto out_store;
    }
    fs->loop_thread = pthread_self();
    if ((rc = ofs_decode_start(fs))) {
        fuse_log(FUSE_LOG_ERR, "offloadfs: starting the decoder: %s\n", strerror(rc));
        goto out_store;
    }
    /* The prefetcher first: the watcher feeds it. */
    if ((rc = ofs_prefetch_start(fs))) {
        fuse_log(FUSE_LOG_ERR, "offloadfs: starting the prefetcher: %s\n", strerror(rc));
        goto out_decode;
    }
    /* Writers wait for us only once this exists; without it, the poll
     * alone shows their writes (read-your-writes is then lost, not the
     * mount). */
    if ((rc = ofs_wake_open(fs, fs->pin.dir)))
        fuse_log(FUSE_LOG_ERR, "offloadfs: store '%s': no wake-up socket in %s/wake (%s): "
                 "writers will not wait for this mount; it shows their writes within "
                 "%u ms\n", store_abs, store_abs, strerror(rc), OFS_WATCH_INTERVAL_MS);
    if ((rc = ofs_metrics_start(fs))) {
        fuse_log(FUSE_LOG_ERR, "offloadfs: starting the metrics server at %s: %s\n",
                 fs->metrics.url, strerror(rc));
        goto out_prefetch;
    }
    if ((rc = ofs_watch_start(fs))) {
        fuse_log(FUSE_LOG_ERR, "offloadfs: starting the change watcher: %s\n",
                 strerror(rc));
        goto out_prefetch;
    }
    notify_systemd("READY=1");
    ret = serve(se, o);
    ofs_metrics_stop(fs); /* no scrape reads the store from here on */
    if (atomic_load(&fs->lock_changed))
        ret = 1; /* the watcher's SIGTERM is not a clean stop */
    notify_systemd("STOPPING=1");
    ofs_watch_stop_begin(fs);
    ofs_prefetch_stop_begin(fs);
    drain(fs);
    ofs_watch_stop(fs);
out_prefetch:
    ofs_metrics_stop(fs); /* (again: a no-op) before the store closes */
    ofs_wake_close(fs); /* the watcher closed it, unless it never ran */
    ofs_prefetch_stop(fs);
out_decode:
    ofs_decode_stop(fs); /* no read is in flight any more */
out_store:
    ofs_listing_free(fs); /* first: its lister thread uses the tier */
    ofs_fill_free(fs);    /* and its helpers */
    ofs_window_free(fs);
    ofs_lookup_free(fs);
    ofs_conn_close(fs);
    store_close_unless_damaged(fs);
out_unmount:
    fuse_session_unmount(se);
out_signals:
    fuse_remove_signal_handlers(se);
    return ret;
}

/* Parses TEXT (-o NAME=TEXT) as a whole number of at most MAX into *OUT;
 * 1 after a message when it is not one. */
static int parse_uint(const char *name, const char *text, unsigned long max, unsigned *out)
{
    char *end;
    unsigned long v = strtoul(text, &end, 10);
    if (!*text || *end || text[0] == '-' || v > max) {
        fprintf(stderr, "offloadfs: %s '%s' is not a whole number from 0 to %lu\n", name, text, max);
        return 1;
    }
    *out = (unsigned)v;
    return 0;
}

/* Parses the command line into C and O; returns -1 to go on, else the exit
 * status (help, version, or a usage error already reported). */
static int parse(struct fuse_args *args, struct cli *c, struct fuse_cmdline_opts *o)
{
    const char *prog = args->argv[0];
    if (fuse_opt_parse(args, c, cli_opts, cli_proc) != 0)
        return EXIT_USAGE;
    if (fuse_parse_cmdline(args, o) != 0)
        return EXIT_USAGE;
    if (o->show_help) {
        help(prog);
        return 0;
    }
    if (o->show_version) {
        printf("offloadfs %s\nFUSE library version %s\n", OFFLOADFS_VERSION,
               fuse_pkgversion());
        return 0;
    }
    if (!c->store || !c->mountpoint || c->extra_args) {
        fprintf(stderr, "offloadfs: %s\n", !c->store ? "missing STORE and MOUNTPOINT"
                : !c->mountpoint ? "missing MOUNTPOINT" : "too many arguments");
        usage(stderr, prog);
        return EXIT_USAGE;
    }
    if (c->prefetch && parse_size("prefetch", c->prefetch, &c->prefetch_max))
        return EXIT_USAGE;
    if (c->decode_ahead
        && parse_size("decode_ahead", c->decode_ahead, &c->decode_ahead_max))
        return EXIT_USAGE;
    c->remote_ttl_s = OFS_REMOTE_TTL_DEFAULT;
    if ((c->remote_ttl && parse_uint("remote_ttl", c->remote_ttl, 86400, &c->remote_ttl_s)) ||
        (c->remote_stall && parse_uint("remote_stall", c->remote_stall, 3600, &c->remote_stall_s)) ||
        (c->remote_retries && parse_uint("remote_retries", c->remote_retries, 10, &c->remote_retries_n)) ||
        (c->remote_list_max &&
         parse_uint("remote_list_max", c->remote_list_max, 100000000, &c->remote_list_max_n)) ||
        (c->remote_list_s && parse_uint("remote_list_seconds", c->remote_list_s, 86400, &c->remote_list_s_n)))
        return EXIT_USAGE;
    if ((c->remote_list_max && !c->remote_list_max_n) || (c->remote_list_s && !c->remote_list_s_n)) {
        fprintf(stderr, "offloadfs: remote_list_max and remote_list_seconds must be at least 1\n");
        return EXIT_USAGE;
    }
    if (c->remote_stall && c->remote_stall_s == 0) {
        fprintf(stderr, "offloadfs: remote_stall must be at least 1 second\n");
        return EXIT_USAGE;
    }
    if (c->remote_retries && c->remote_retries_n == 0)
        c->remote_retries_n = OFS_REMOTE_NO_RETRY;
    if (ofs_namespace_resolve(&c->ns)) /* -o > environment > policy file (config.c) */
        return EXIT_USAGE;
    return check_namespace(c->ns) ? EXIT_USAGE : -1;
}

static void state_init(struct ofs *fs, const struct cli *c,
                       const struct fuse_cmdline_opts *o, const char *mnt_abs,
                       struct fuse_conn_info_opts *conn_opts)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    fs->ns = c->ns;
    fs->mountpoint = mnt_abs;
    fs->debug = o->debug;
    fs->uid = getuid();
    fs->gid = getgid();
    fs->timeout = OFS_CACHE_TIMEOUT;
    fs->conn_opts = conn_opts;
    fs->prefetch_max = c->prefetch ? c->prefetch_max : OFS_PREFETCH_DEFAULT;
    fs->decode_ahead = c->decode_ahead ? c->decode_ahead_max : OFS_DECODE_AHEAD_DEFAULT;
    fs->start_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    atomic_store(&fs->root_mtime_ns, fs->start_ns);
    fs->remote_ttl = c->remote_ttl_s;
    fs->remote_stall = c->remote_stall_s;
    fs->remote_retries = c->remote_retries_n;
    fs->remote_list_max = c->remote_list_max_n;
    fs->remote_list_s = c->remote_list_s_n;
}

int main(int argc, char *argv[])
{
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    struct fuse_cmdline_opts o;
    struct fuse_conn_info_opts *conn_opts = NULL;
    struct cli c;
    struct ofs fs;
    char store_abs[PATH_MAX], mnt_abs[PATH_MAX];
    int ret;

    memset(&c, 0, sizeof c);
    memset(&o, 0, sizeof o);
    memset(&fs, 0, sizeof fs);
    if ((ret = parse(&args, &c, &o)) >= 0)
        goto out;
    ret = 1;
    if (probe_store(&fs.pin, c.store, store_abs) || check_mountpoint(c.mountpoint, mnt_abs) ||
        ofs_conn_probe(fs.pin.files, store_abs))
        goto out;
    ret = EXIT_USAGE;
    /* Before mounting: places where a mount would hang or hide (startup.c). */
    if (ofs_check_store_outside(c.store, fs.pin.dir, c.mountpoint, mnt_abs) ||
        (!c.stack && ofs_check_not_stacked(c.mountpoint, mnt_abs)))
        goto out;
    if (!(conn_opts = fuse_parse_conn_info_opts(&args)) ||
        add_mount_opts(&args, &c, store_abs) != 0)
        goto out;
    state_init(&fs, &c, &o, mnt_abs, conn_opts);
    fs.store_path = store_abs;
    /* Bound now, so a taken port leaves nothing mounted (metrics.c). */
    if (c.metrics && (ret = ofs_metrics_listen(&fs.metrics, c.metrics))) {
        ret = ret == EINVAL ? EXIT_USAGE : 1;
        goto out;
    }
    ret = EXIT_USAGE;
    /* Unknown options are reported here, by libfuse, naming them. */
    if (!(fs.se = fuse_session_new(&args, ofs_ops(), sizeof *ofs_ops(), &fs)))
        goto out;
    ret = run_mounted(&fs, store_abs, &o);
    fuse_session_destroy(fs.se);
out:
    ofs_metrics_stop(&fs);
    ofs_pin_close(&fs.pin);
    free(conn_opts);
    free(o.mountpoint);
    free(c.ns);
    free(c.prefetch);
    free(c.remote_ttl);
    free(c.remote_stall);
    free(c.remote_retries);
    free(c.remote_list_max);
    free(c.remote_list_s);
    free(c.metrics);
    free(c.decode_ahead);
    free(c.store);
    free(c.mountpoint);
    fuse_opt_free_args(&args);
    return ret;
}
