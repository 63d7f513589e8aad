/* fs.h -- offloadfs internals: the daemon state (struct ofs) and the
 * constants the files of fs/ share. Each file's functions are declared in
 * a header of its own, so a file's #include lines say which files it
 * calls; config.c and startup.c, which main.c alone calls, keep theirs at
 * the end of this one.
 *
 * The daemon mounts one namespace of one store read-only; the one thing it
 * writes into the store is the cached copies of remote results it fetched
 * (keep.h), and only into a store that names a remote. The files, and
 * whom each calls (the graph runs one way: no two files call each other,
 * directly or around a circle; scripts/check-layers.sh checks it from the
 * object files):
 *
 *   main.c      the command line, startup and shutdown          -> all below
 *   ops.c       the FUSE low-level handlers (do_x / op_x)        -> decode.c,
 *               lookup.c, fill.c, window.c, keep.c, listing.c, conn.c,
 *               errmap.c, counters.c
 *   metrics.c   GET /metrics, the HTTP server (-o metrics=)      -> counters.c
 *   watch.c     the change watcher: invalidations, lock.mdb, the -> prefetch.c,
 *               sweep of idle read windows and fills, the trim  wake.c, fill.c,
 *               of the store's mapped pages                     window.c, errmap.c
 *   prefetch.c  pushes new results into the page cache          -> errmap.c
 *   wake.c      the socket writers wake the watcher through      -> asuser.c
 *   pin.c       opens and pins the store directory and files     -> asuser.c
 *   lookup.c    remote names: lookups and the inode slots         -> window.c,
 *               conn.c, errmap.c, counters.c
 *   fill.c      remote results fetched whole, for every read     -> window.c,
 *               keep.c, conn.c, counters.c
 *   listing.c   the remote's names for readdir (a lister thread) -> conn.c,
 *               counters.c
 *   window.c    read-ahead windows: reads of remote results      -> conn.c,
 *               errmap.c, counters.c
 *   keep.c      the daemon's cached copies of remote results (the
 *               store's cache): kept (large ones by a child
 *               process), and found for a read
 *   decode.c    reads of compressed results from decoded frames
 *   conn.c      the mount's tier handle, each thread's connection, the
 *               mount-time check of the remote (tier/reader.h)
 *   errmap.c    store and tier codes to errno: the one mapping
 *   counters.c  the data path's counters and the definition of a fetch
 *   asuser.c    work on a thread acting as another user
 *   mount.c     fuse_session_mount() with auto_unmount done right
 *   config.c    chooses the namespace as agentlink does (policy file)
 *   startup.c   refuses a store inside the mountpoint, stacked mounts
 *
 * The last nine call no other file of fs/. A remote result is read
 * through lookup.c (name -> inode, object version), window.c (the bytes)
 * and tier/reader.h (the only way to the remote): doc/development.md.
 *
 * Caveats
 * =======
 * - Inode numbers: the root is 1; every other inode number is the immutable
 *   store version id of one write (store_entry.version, always >= 2). A
 *   replaced key is therefore a new inode, and an inode's bytes never change:
 *   the kernel may cache them (keep_cache, no-open) for as long as it likes,
 *   and a handle opened on one version can only read that version, or get
 *   ENODATA once it is gone. No per-inode state is kept in the daemon, so
 *   forget() has nothing to do.
 * - Caching: entries and attributes are given long timeouts
 *   (OFS_CACHE_TIMEOUT); correctness comes from explicit invalidation by the
 *   watcher thread, which never runs inside a request handler (a notify from
 *   a handler can deadlock on the directory lock the kernel holds).
 * - A lookup racing a write cannot leave a stale dentry behind: the kernel
 *   holds the directory lock for the whole of a lookup or readdirplus, and
 *   fuse_lowlevel_notify_inval_entry() takes it exclusively, so an
 *   invalidation sent after the write commits lands after any reply built
 *   from older data.
 * - fork(): the store is opened only after fuse_daemonize() (LMDB handles
 *   must not cross fork()); startup probes it once before mounting and
 *   closes that handle again, only to report a missing store clearly.
 * - Errors: store and tier codes become errno values in ofs_errno()
 *   (errmap.c) and nowhere else; fs/ never sees a remote code.
 * - Threads of our own that wait on the kernel: the watcher (its
 *   invalidations take the kernel's directory lock, and it looks new names
 *   up through the mount for the prefetcher) and the prefetcher (it pushes
 *   pages the kernel may be reading). Both can wait for an answer from this
 *   daemon, so shutdown first tells them to stop, then keeps answering
 *   requests until they have (drain() in main.c), and only then joins them.
 * - The metrics server (-o metrics) is one more thread, running
 *   libmicrohttpd's event loop (metrics.c): it never waits on the mount,
 *   reads the store in short read transactions, and is stopped as soon as
 *   the session loop ends, before the store closes.
 * - The decoder's worker (decode.c) waits on nothing but the store, and is
 *   joined after the session has ended.
 *
 * Invariants of the handlers and threads
 * ======================================
 * What the mount promises is in doc/contract.md; how it behaves and why
 * (prefetch, read-your-writes, the log gap, lock.mdb damage, with the
 * measurements) is in doc/design.md. What the code here keeps true:
 * - The root lists "." and ".." and then the live keys in byte order, with
 *   d_type DT_REG. Directory offsets are ordinal positions; a handle resumes
 *   after the last key it sent, and a seek elsewhere rescans from the start.
 * - Extended attributes: an entry with no recorded tool has no
 *   user.offload.tool (not listed, ENODATA); unknown user.* names ENODATA;
 *   names outside user.* EOPNOTSUPP. created is RFC 3339 UTC with
 *   microseconds. The root has only user.offloadfs.store (the store
 *   directory's real path, whatever -o fsname= says) and
 *   user.offloadfs.namespace: readers that act for a writer check them
 *   before trusting a mount. The root's ctime is the daemon's start (its
 *   mtime the last change) and never changes: a reader that cannot read
 *   attributes (Node) tells a new mount at the same path from the one it
 *   checked by it, as mount ids and device numbers are reused at once.
 * - statfs: blocks are the store's byte bound, free blocks what is left of
 *   it, files the live entries of the whole store.
 * - Read-your-writes (wake.c, store/wake.h): a woken writer is answered only
 *   after the watcher has processed every change up to a generation that
 *   covers the write and sent its invalidations; a replaced key's name is
 *   invalidated before its old inode, in the same pass, so no lookup reaches
 *   the old inode through the name once the writer is answered. The 20 ms
 *   poll stays for writers that cannot reach the socket or were not
 *   answered within STORE_WAKE_TIMEOUT_MS.
 * - Prefetch (-o prefetch=SIZE, default OFS_PREFETCH_DEFAULT, 0 for none):
 *   the name is stat'ed through the mount before its pages are pushed, and
 *   the watcher makes that stat before it answers the woken writers, so an
 *   unmount right after a write does not meet EBUSY. More than
 *   OFS_PREFETCH_BURST new versions within OFS_PREFETCH_WINDOW_MS are not
 *   pushed. Under valgrind, mount with -o prefetch=0 (the watcher's stat
 *   through its own mount can wait for ever for a worker valgrind does not
 *   run).
 * - Open: with FUSE_CAP_NO_OPEN_SUPPORT open is answered ENOSYS once and the
 *   kernel never asks again; otherwise it answers keep_cache.
 * - A change log that no longer reaches the last generation seen (a log
 *   gap): the watcher drops the listing, every live name and every name
 *   with a tombstone.
 * - lock.mdb: the watcher compares it with the mark taken at start
 *   (store_lock_check()) before every poll's transaction; on a change it
 *   sets fs->lock_changed, logs one line, stops the session (the daemon unmounts and exits 1), and
 *   closes the store only when that is safe (LMDB's close touches the
 *   reader table: not after a truncation).
 */
#ifndef OFFLOADFS_FS_H
#define OFFLOADFS_FS_H

#define FUSE_USE_VERSION 314

#include <errno.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "fs/counters.h"
#include "store/store.h"

/* After the remote failed a lookup of a name held as a cached copy, how
 * long such names are answered from their copies without asking (ops.c):
 * long enough for a reader going through many copies, short enough that
 * a remote back up is asked again within seconds. */
#define OFS_COPY_DOWN_MS 5000u
/* Seconds the kernel may cache names, attributes and negative lookups. */
#define OFS_CACHE_TIMEOUT 3600.0
/* How often the watcher asks the store what changed (one short read
 * transaction) when no writer wakes it. It bounds how long a write made
 * without the wake-up (a writer that cannot reach the socket) takes to
 * show. */
#define OFS_WATCH_INTERVAL_MS 20u
/* st_blksize reported for entries: the I/O size tools like cat pick. */
#define OFS_BLKSIZE (128u * 1024u)
/* Largest value pushed into the page cache after a write (-o prefetch=).
 * On by default again since the wake-up: the stat through the mount that
 * made an unmount right after a write fail with EBUSY (5 in 300 measured)
 * now ends before the writer's call returns (0 in 300; see Prefetch). */
#define OFS_PREFETCH_DEFAULT (64ull << 20)
/* New versions queued for the prefetcher at most; more are dropped. */
#define OFS_PREFETCH_QUEUE 64u
/* More new versions than this within OFS_PREFETCH_WINDOW_MS is a bulk
 * load: the rest of the window prefetches none of them. */
#define OFS_PREFETCH_BURST 16u
#define OFS_PREFETCH_WINDOW_MS 100u

/* The change watcher (watch.c). Lives inside struct ofs; fields are private
 * to watch.c except where noted. */
struct ofs_watch {
    pthread_t thread;
    int stop_fd;               /* eventfd: wakes the thread's poll() to stop */
    atomic_int stop;           /* set once, by ofs_watch_stop_begin() */
    atomic_int done;           /* set by the thread as it returns */
    int running;               /* thread was started */
    uint64_t generation;       /* last store generation processed */
    uint64_t burst_start_ms;   /* the prefetch window (OFS_PREFETCH_WINDOW_MS) */
    unsigned burst_count;      /* new versions seen in it */
    unsigned interval_ms;
    uint64_t trim_work;        /* reads + copies kept at the last trim (watch.c) */
};

/* Writers answered in one round at most; more wait in the backlog for the
 * next round (a few microseconds later). */
#define OFS_WAKE_BATCH 64u

/* The wake-up socket (wake.c). Lives inside struct ofs; private to wake.c,
 * used from the watcher thread only (and from main.c before it starts and
 * after it ended). */
struct ofs_wake {
    int active;                /* ofs_wake_open() ran and ofs_wake_close() not yet */
    int listen_fd;             /* -1: none */
    int dir_fd;                /* STORE/wake, opened without following links */
    char name[64];             /* our socket's name in it ("": none there) */
    uid_t owner;               /* the store directory's owner */
    uid_t as_uid;              /* whom we act as in STORE/wake: owner if we */
    gid_t as_gid;              /* are root, else ourselves (ofs_as_user) */
    dev_t sock_dev;            /* the file our socket is bound to: only */
    ino_t sock_ino;            /* that is ever removed under our name */
    int held[OFS_WAKE_BATCH];  /* accepted, not answered yet */
    unsigned nheld;
    unsigned long refused;     /* peers of another user closed unanswered */
};

/* The store as the daemon holds it (pin.c). Lives inside struct ofs;
 * private to pin.c except where noted. */
struct ofs_pin {
    int held;                  /* ofs_pin_open() succeeded, ofs_pin_close() not yet */
    int dir_fd;                /* the store directory (O_PATH), for the daemon's life */
    int lock_fd, data_fd;      /* lock.mdb, data.mdb (O_PATH), until released */
    int tmp_fd;                /* the private directory of links LMDB opens */
    char tmp_path[64];         /* its path ("": none) */
    char dir[32];              /* "/proc/self/fd/N" of dir_fd: the store directory
                                  itself, whatever its path leads to now (public) */
    char files[64];            /* the directory to give store_open() (public) */
    uid_t owner;               /* the store directory's owner and group */
    gid_t group;
};

/* One new version for the prefetcher. */
struct ofs_prefetch_item {
    uint64_t version;
    char key[STORE_NAME_MAX + 1];
};

/* The prefetcher (prefetch.c). Lives inside struct ofs; private to
 * prefetch.c. */
struct ofs_prefetch {
    pthread_t thread;
    pthread_mutex_t lock;      /* the queue, stop */
    pthread_cond_t wake;
    struct ofs_prefetch_item queue[OFS_PREFETCH_QUEUE];
    unsigned head, count;      /* ring buffer */
    atomic_int stop;
    atomic_int done;           /* set by the thread as it returns */
    int running;
    char *buf;                 /* one piece of a value being pushed */
};

struct ofs_metrics_server; /* metrics.c */

/* The metrics endpoint (metrics.c). Lives inside struct ofs; private to
 * metrics.c. Zero-filled: off. */
struct ofs_metrics {
    int bound;                 /* listen_fd is open, and ours */
    int listen_fd;             /* bound before mounting */
    int loopback;              /* bound to a loopback address */
    struct ofs_metrics_server *srv; /* the server, once started */
    char url[320];             /* http://ADDRESS:PORT/metrics, as bound, for the log */
};

/* The daemon state: one per mount, reached from a request through
 * ofs_from_req(). Set up by main.c before the session loop starts; only the
 * atomics change afterwards. */
struct ofs_decode;  /* decode.c */
struct ofs_conn;    /* conn.c */
struct ofs_slots;   /* lookup.c */
struct ofs_rwin;    /* window.c */
struct ofs_fills;   /* fill.c */
struct ofs_rlists;  /* listing.c */
typedef struct tier tier; /* tier/reader.h */

struct ofs {
    store *st;                  /* opened after daemonizing */
    const char *ns;             /* namespace shown by this mount */
    const char *store_path;     /* the store directory's real path */
    struct fuse_session *se;    /* for the watcher's notifications */
    const char *mountpoint;     /* absolute path, for messages */
    int debug;                  /* -d: fuse_log(FUSE_LOG_DEBUG) tracing */
    uid_t uid;                  /* owner reported for every inode */
    gid_t gid;
    double timeout;             /* entry/attr timeout, seconds */
    _Atomic uint64_t root_mtime_ns; /* root's mtime: last change seen */
    uint64_t start_ns;          /* root's ctime: when this daemon started */
    _Atomic int no_open;        /* kernel offered FUSE_CAP_NO_OPEN_SUPPORT */
    struct fuse_conn_info_opts *conn_opts; /* -o max_readahead=... etc. */
    uint64_t prefetch_max;      /* -o prefetch=SIZE; 0: no prefetch */
    store_lockmark lock;        /* lock.mdb as found right after opening st */
    pthread_t loop_thread;      /* runs the session loop: the watcher wakes it */
    struct ofs_watch watch;
    struct ofs_wake wake;
    struct ofs_pin pin;         /* the store directory and files as opened */
    struct ofs_prefetch prefetch;
    /* lock.mdb changed under the daemon: set once, by the watcher, which
     * then stopped the session and itself. The store must not be used any
     * more, and is closed only when store_lock_closable() says so. Read by
     * main.c and metrics.c (atomic_load). */
    atomic_int lock_changed;
    /* The remote tier, all NULL when the store names none (or it could
     * not be opened): set by main.c before the session loop. */
    tier *tier;                 /* the tier (conn.c opens it) */
    struct ofs_conn *conn;      /* each thread's connection to it (conn.c) */
    struct ofs_slots *slots;    /* remote inodes and names (lookup.c) */
    struct ofs_rwin *rwin;      /* read-ahead windows of remote results (window.c) */
    struct ofs_fills *fills;    /* remote results fetched whole (fill.c) */
    _Atomic uint64_t copy_fail_ms; /* when a lookup of a name held as a cached
                                   copy last found the remote failing (ops.c) */
    int keep;                   /* the store is open for writing the daemon's
                                   cached copies (keep.c); else read-only */
    struct ofs_rlists *rlists;  /* the remote's listings (listing.c) */
    unsigned remote_list_max;   /* -o remote_list_max=NAMES, 0: OFS_REMOTE_LIST_MAX */
    unsigned remote_list_s;     /* -o remote_list_seconds=S, 0: OFS_REMOTE_LIST_SECONDS */
    unsigned remote_ttl;        /* -o remote_ttl=SECONDS */
    unsigned remote_stall;      /* -o remote_stall=SECONDS, 0: the tier's default */
    unsigned remote_retries;    /* -o remote_retries=N, 0: the default,
                                   TIER_NO_RETRY: none */
    struct ofs_counters count;
    struct ofs_metrics metrics;
    uint64_t decode_ahead;      /* -o decode_ahead=SIZE; 0: no decoding ahead */
    struct ofs_decode *decode;  /* decode.c's state; NULL when off */
};

/* The daemon state of a request. Never NULL inside a handler. */
static inline struct ofs *ofs_from_req(fuse_req_t req)
{
    return (struct ofs *)fuse_req_userdata(req);
}

/* ---- config.c and startup.c (called by main.c alone) ------------------- */

/* Chooses the namespace as agentlink does: *NS (-o namespace=, malloc'd,
 * may be NULL) > $OFFLOADFS_NAMESPACE > the "namespace" of the policy file
 * $OFFLOADFS_CONFIG (read with agentlink's al_policy_load(), whenever the
 * variable names one) > "default". Returns 0 with *NS set (malloc'd,
 * yours; unchecked against the namespace rules when it came from -o or the
 * environment), or 1 after printing why on stderr: the policy file was
 * refused (agentlink's message, "; nothing was mounted"), or no memory. */
int ofs_namespace_resolve(char **ns);


/* Refuses a store at or inside the mountpoint (the daemon would wait for
 * ever on its own mount): STORE_ABS and MNT_ABS are the real paths of the
 * store directory and the mountpoint, STORE_NAME and MNT their names as given,
 * for the message. Compares device and inode of the mountpoint with the
 * store directory and each of its parents. Returns 0 (fine) or 1 (the
 * reason printed on stderr). */
int ofs_check_store_outside(const char *store_name, const char *store_abs, const char *mnt,
                            const char *mnt_abs);

/* Refuses a mountpoint that already shows an offloadfs mount (type
 * fuse.offloadfs in /proc/self/mountinfo, matched by the device of
 * MNT_ABS), for a daemon started without -o stack. MNT is the name as
 * given. Returns 0 (fine, or the table cannot be read) or 1 (the reason
 * printed on stderr). */
int ofs_check_not_stacked(const char *mnt, const char *mnt_abs);


#endif
