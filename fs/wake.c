/* wake.c -- the daemon's half of read-your-writes: the socket writers
 * connect to after each commit (the protocol is in store/wake.h).
 *
 * The watcher thread owns it: it polls the listening socket next to its
 * interval timer, accepts what is pending (ofs_wake_accept), runs its
 * change processing, and answers every accepted connection with the
 * generation it has now processed (ofs_wake_answer). Connections accepted
 * before the processing began are answered after it ended, which is what
 * makes the answer mean "your write is invalidated": the writer committed
 * before it connected.
 *
 * Who may wake us: the socket lives in STORE/wake, mode 0700 and owned by
 * the store directory's owner, so only that user and root can reach it.
 * Every accepted peer is checked again (SO_PEERCRED: our own uid, the
 * store's owner, or root); any other is closed unanswered before it can
 * cause any work. Nothing is read from a peer: there is nothing to parse.
 *
 * The socket is bound under a temporary name and renamed into place once
 * it listens, so a writer never meets our name before we can accept on it
 * (an ECONNREFUSED there would make it remove the socket as stale).
 */
#include "fs/fs.h"
#include "store/wake.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* The address of NAME in the wake directory (PATH, descriptor DFD). */
static int sock_addr(struct sockaddr_un *sa, socklen_t *len, const char *path,
                     int dfd, const char *name)
{
    int n;
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    n = snprintf(sa->sun_path, sizeof sa->sun_path, "%s/%s", path, name);
    if (n < 0 || (size_t)n >= sizeof sa->sun_path)
        n = snprintf(sa->sun_path, sizeof sa->sun_path, "/proc/self/fd/%d/%s", dfd, name);
    if (n < 0 || (size_t)n >= sizeof sa->sun_path)
        return ENAMETOOLONG;
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + 1);
    return 0;
}

/* Makes (or finds) STORE/wake and checks that it is private: a directory,
 * not a link, owned by the store's owner or by us, no access for group or
 * others. Sets w->dir_fd. */
static int dir_open(struct ofs_wake *w, const char *path, gid_t gid)
{
    struct stat sb;
    int made = mkdir(path, 0700) == 0;
    if (!made && errno != EEXIST)
        return errno;
    if ((w->dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return errno;
    if (fstat(w->dir_fd, &sb) != 0)
        return errno;
    /* A root daemon serving a user's store: that user's writers must be
     * able to reach the socket. Through the descriptor: by name, a symlink
     * the user put in its place meanwhile would be followed. */
    if (made && geteuid() == 0 && w->owner != 0 && sb.st_uid == 0
        && fchown(w->dir_fd, w->owner, gid) != 0)
        return errno;
    if (!S_ISDIR(sb.st_mode) || (sb.st_mode & 077) != 0
        || (sb.st_uid != w->owner && sb.st_uid != geteuid()))
        return EPERM;
    return 0;
}

/* Binds, listens, then renames the socket into place. */
static int sock_open(struct ofs_wake *w, const char *path, gid_t gid)
{
    struct sockaddr_un sa;
    struct timespec ts;
    char tmp[sizeof w->name];
    socklen_t len;
    int rc;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(tmp, sizeof tmp, "%ld-%08lx.new", (long)getpid(),
             (unsigned long)((unsigned long)ts.tv_nsec ^ (unsigned long)ts.tv_sec) & 0xffffffffUL);
    snprintf(w->name, sizeof w->name, "%.*s" STORE_WAKE_SUFFIX, (int)(strlen(tmp) - 4), tmp);
    if ((rc = sock_addr(&sa, &len, path, w->dir_fd, tmp)))
        return rc;
    w->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (w->listen_fd < 0)
        return errno;
    if (bind(w->listen_fd, (struct sockaddr *)&sa, len) != 0)
        return errno;
    /* The directory may be the store owner's: by now TMP may be their
     * symlink to any file of ours. Never follow it (a symlink: EOPNOTSUPP,
     * and no socket). */
    rc = fchmodat(w->dir_fd, tmp, 0600, AT_SYMLINK_NOFOLLOW) != 0
         || (geteuid() == 0 && w->owner != 0
             && fchownat(w->dir_fd, tmp, w->owner, gid, AT_SYMLINK_NOFOLLOW))
         || listen(w->listen_fd, STORE_WAKE_BACKLOG) != 0
         || renameat(w->dir_fd, tmp, w->dir_fd, w->name) != 0 ? errno : 0;
    if (rc)
        unlinkat(w->dir_fd, tmp, 0);
    return rc;
}

int ofs_wake_open(struct ofs *fs, const char *store_dir)
{
    struct ofs_wake *w = &fs->wake;
    char path[4096];
    struct stat sb;
    int rc;
    w->listen_fd = w->dir_fd = -1;
    w->nheld = 0;
    w->name[0] = '\0';
    if ((size_t)snprintf(path, sizeof path, "%s/" STORE_WAKE_DIR, store_dir) >= sizeof path)
        return ENAMETOOLONG;
    if (stat(store_dir, &sb) != 0)
        return errno;
    w->owner = sb.st_uid;
    w->active = 1;
    if ((rc = dir_open(w, path, sb.st_gid)) || (rc = sock_open(w, path, sb.st_gid))) {
        w->name[0] = '\0';
        ofs_wake_close(fs);
    }
    return rc;
}

int ofs_wake_fd(const struct ofs *fs)
{
    return fs->wake.active ? fs->wake.listen_fd : -1;
}

/* 1 when the peer on FD may wake us. */
static int peer_allowed(const struct ofs_wake *w, int fd)
{
#ifdef SO_PEERCRED
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return 0;
    return cred.uid == geteuid() || cred.uid == 0 || cred.uid == w->owner;
#else
    uid_t uid;
    gid_t gid;
    if (getpeereid(fd, &uid, &gid) != 0)
        return 0;
    return uid == geteuid() || uid == 0 || uid == w->owner;
#endif
}

unsigned ofs_wake_accept(struct ofs *fs)
{
    struct ofs_wake *w = &fs->wake;
    int fd;
    if (!w->active || w->listen_fd < 0)
        return w->nheld;
    while (w->nheld < OFS_WAKE_BATCH
           && (fd = accept4(w->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
        if (peer_allowed(w, fd)) {
            w->held[w->nheld++] = fd;
        } else {
            close(fd);
            w->refused++;
            if (fs->debug)
                fuse_log(FUSE_LOG_DEBUG, "offloadfs: wake-up from another user refused\n");
        }
    }
    return w->nheld;
}

void ofs_wake_answer(struct ofs *fs, uint64_t generation)
{
    struct ofs_wake *w = &fs->wake;
    for (unsigned i = 0; i < w->nheld; i++) {
        /* A writer that gave up has closed its end: EPIPE, ignored. */
        (void)send(w->held[i], &generation, sizeof generation, MSG_DONTWAIT | MSG_NOSIGNAL);
        close(w->held[i]);
    }
    w->nheld = 0;
}

void ofs_wake_close(struct ofs *fs)
{
    struct ofs_wake *w = &fs->wake;
    if (!w->active)
        return;
    for (unsigned i = 0; i < w->nheld; i++)
        close(w->held[i]); /* unanswered: the writers stop waiting */
    w->nheld = 0;
    if (w->name[0] && w->dir_fd >= 0)
        unlinkat(w->dir_fd, w->name, 0);
    if (w->listen_fd >= 0)
        close(w->listen_fd);
    if (w->dir_fd >= 0)
        close(w->dir_fd);
    w->listen_fd = w->dir_fd = -1;
    w->active = 0;
}
