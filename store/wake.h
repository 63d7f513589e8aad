/* wake.h -- read-your-writes: a writer wakes every daemon serving the store
 * and waits, boundedly, until each has made the kernel forget what the
 * write changed.
 *
 * The rendezvous is a directory inside the store, STORE/wake (mode 0700,
 * owned by the store directory's owner). Each running offloadfs daemon
 * listens there on a Unix SOCK_SEQPACKET socket named "<pid>-<nonce>.sock",
 * mode 0600 and also the store owner's, whoever runs the daemon (fs/wake.c
 * makes it; a root daemon makes it as that user, through the directory's
 * descriptor, never through a path the user can change). After every
 * writing commit (store_put,
 * store_remove, store_limits_set) the store calls store_wake(), which
 *
 *   1. opens STORE/wake; missing (no daemon ever ran): done, one failed
 *      open() is all a write pays; empty: one short listing;
 *   2. connects, without blocking, to every "*.sock" in it. The connection
 *      itself is the wake-up: the writer sends nothing, no key name, no
 *      data. Only sockets count, never a link to one, also where listings
 *      carry no file type (fstatat() then). A socket nobody listens on
 *      (ECONNREFUSED: its daemon died) is removed, and nothing else ever
 *      is; one whose backlog is full (EAGAIN: a daemon that has not
 *      run for a while) is skipped at once;
 *   3. waits, with ONE deadline for all of them (STORE_WAKE_TIMEOUT_MS from
 *      the first connect), for each daemon's answer: the 8-byte store
 *      generation it has processed (uint64_t, host byte order). An answer
 *      at or past the writer's generation means that daemon has sent every
 *      invalidation the write needs; a closed connection (the daemon died
 *      or stopped) ends the wait on it at once.
 *
 * A daemon answers a connection only after it has accepted it and then run
 * its whole change processing (store_changes() and the kernel
 * invalidations) in a read transaction begun after the accept. The writer
 * committed before connecting, so that transaction sees the write.
 *
 * Why this mechanism:
 * - A socket in a 0700 directory is reachable only by the store's owner
 *   (and root): another user can neither wake a daemon nor stall one, and
 *   the daemon checks each peer's uid (SO_PEERCRED) before doing anything.
 *   Connecting carries no data, and what comes back is a counter.
 * - Death is visible: a killed daemon's connections close (the writer stops
 *   waiting) and its socket answers ECONNREFUSED (the next writer removes
 *   it). A futex or an eventfd in a shared file shows neither.
 * - The bound is per write, not per daemon: one poll() over all
 *   connections. A stopped daemon delays each writer by at most
 *   STORE_WAKE_TIMEOUT_MS, and only until its listen backlog
 *   (STORE_WAKE_BACKLOG pending connections) is full: later writers get
 *   EAGAIN and do not wait at all. It catches up when it runs again: it
 *   answers what is queued and its 20 ms poll covers everything else.
 * - And once per process, not once per write: through store_wake_after(),
 *   a daemon that let one write of this process (this store's shared
 *   environment) wait the whole bound is remembered with that unanswered
 *   connection; later writes connect to no new one and do not wait for it
 *   (counted late) until it has answered or closed that connection, i.e.
 *   has run again. So `agentlink rm` of many keys, `import` or an agent
 *   writing result after result pays the bound once for a stopped daemon
 *   (not 200 ms per key), and a daemon that runs again is waited for as
 *   before. store_wake() itself remembers nothing.
 * - No daemon: no socket, no syscall beyond the open() of step 1.
 *
 * Caveats
 * =======
 * - Writers that cannot reach the directory (another user, a read-only
 *   filesystem) simply do not wait; the daemon's 20 ms poll shows their
 *   writes instead.
 * - At most STORE_WAKE_MAX daemons per store are waited for; more are
 *   served by their poll.
 * - Paths: every socket is reached through /proc/self/fd/N/NAME, N the
 *   wake directory as opened (without following a symlink) and listed, so
 *   a directory swapped in since is never reached; this needs Linux's
 *   /proc, and no socket path is too long for sockaddr_un.
 */
#ifndef OFFLOADFS_STORE_WAKE_H
#define OFFLOADFS_STORE_WAKE_H

#include <stdint.h>

#include "store/store.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STORE_WAKE_DIR "wake"         /* under the store directory */
#define STORE_WAKE_SUFFIX ".sock"     /* a listening daemon's socket */
#define STORE_WAKE_TIMEOUT_MS 200u    /* longest a writer waits, in all */
#define STORE_WAKE_MAX 64u            /* daemons waited for at most */
#define STORE_WAKE_BACKLOG 64         /* a daemon's listen backlog */

/* What one store_wake() found. */
typedef struct store_wake_result {
    unsigned daemons; /* sockets connected to */
    unsigned acked;   /* answered at or past the generation */
    unsigned late;    /* no answer within the bound (stopped, hung, slow) */
    unsigned gone;    /* closed without an answer (died, stopping, refused) */
    unsigned busy;    /* backlog full: not waited for */
    unsigned stale;   /* sockets of dead daemons removed */
} store_wake_result;

/* Wakes every daemon listening in DIR/wake and waits until each has
 * answered a generation >= GENERATION, or until TIMEOUT_MS milliseconds
 * have passed (one deadline for all; 0: do not wait). *R (may be NULL)
 * gets the counts. Returns 0 when every daemon found acknowledged (or none
 * was found), ETIMEDOUT when one or more did not answer in time, or the
 * errno value of a directory that cannot be read (EACCES: not the owner).
 * A missing DIR/wake is 0. Never blocks beyond TIMEOUT_MS; the write
 * itself is already committed whatever this returns. */
int store_wake(const char *dir, uint64_t generation, unsigned timeout_ms,
               store_wake_result *r);

/* What store.c calls after each writing commit (store_put, store_remove,
 * store_limits_set): RC is the commit's result and GENERATION the store's
 * generation after it. When RC is 0, wakes the daemons of ST (store_wake()
 * with STORE_WAKE_TIMEOUT_MS) and returns 0 whatever they answer: the
 * write is done. Otherwise returns RC without reading GENERATION. */
int store_wake_after(store *st, int rc, uint64_t generation);

#ifdef __cplusplus
}
#endif
#endif
