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
 * The socket is bound under a temporary name and published under its
 * real one once it listens, so a writer never meets our name before we
 * can accept on it (an ECONNREFUSED there would make it remove the socket
 * as stale).
 *
 * A root daemon serving a user's store works in a directory that user
 * owns and may change at any moment: swap names in it for hard links to
 * root's files, or swap the directory itself for a symlink. So, whoever
 * we are:
 * - every name in STORE/wake is reached through the directory's
 *   descriptor, opened once without following a link and checked (for
 *   bind() and link(), whose paths cannot take a descriptor, through
 *   /proc/self/fd/DIRFD/NAME): never through a path the user can change;
 * - everything we create, publish or remove there is done on a thread that
 *   acts as the store's owner (ofs_as_user: its fsuid and fsgid, no
 *   groups, no root file capabilities, a umask of its own). The directory
 *   and the socket are created theirs, 0700 and 0600, by mkdir() and
 *   bind() themselves: nothing is ever chowned or chmodded by name, and
 *   whatever the user swapped in, we can do nothing to it that they could
 *   not;
 * - what is published is the very file our socket was bound to: opened
 *   with O_PATH, proven ours by connecting through that descriptor (the
 *   listener's SO_PEERCRED pid is ours), and hard-linked under the real
 *   name from that descriptor, never renamed by name. A name swapped
 *   before that makes the open fail cleanly: no socket, the 20 ms poll;
 * - the only names we remove are our temporary and real names, and only
 *   while they still are that file (same device and inode, a socket).
 */
#include "fs/fs.h"
#include "fs/asuser.h"
#include "fs/wake.h"
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

#define WAKE_LOCK_NAME "lock.mdb" /* the store file our lock mark holds */

/* "/proc/self/fd/FD/NAME" ("/proc/self/fd/FD" when NAME is "") into BUF:
 * the file NAME in the directory FD, or the file FD itself, reached by no
 * path anybody else can change. */
static int fd_path(char *buf, size_t size, int fd, const char *name)
{
    int n = snprintf(buf, size, "/proc/self/fd/%d%s%s", fd, *name ? "/" : "", name);
    return n < 0 || (size_t)n >= size ? ENAMETOOLONG : 0;
}

/* The Unix address of fd_path(FD, NAME). */
static int fd_addr(struct sockaddr_un *sa, socklen_t *len, int fd, const char *name)
{
    int rc;
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    if ((rc = fd_path(sa->sun_path, sizeof sa->sun_path, fd, name)))
        return rc;
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(sa->sun_path) + 1);
    return 0;
}

/* Removes NAME from the directory DFD if it is still the socket file DEV,
 * INO; anything else found there (put there since) is left alone. */
static void unlink_ours(int dfd, const char *name, dev_t dev, ino_t ino)
{
    struct stat sb;
    if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(sb.st_mode)
        && sb.st_dev == dev && sb.st_ino == ino)
        (void)unlinkat(dfd, name, 0);
}

/* Checks that the directory SFD is the store we hold open: its lock.mdb is
 * the file of our lock mark (the path may lead elsewhere by now). Fills
 * *SB with the directory's status. */
static int store_dir_check(const struct ofs *fs, int sfd, struct stat *sb)
{
    struct stat lb;
    if (fstat(sfd, sb) != 0)
        return errno;
    if (!fs->lock.path || fs->lock.fd < 0)
        return 0; /* inert mark: a read-only store, no lock.mdb */
    if (fstatat(sfd, WAKE_LOCK_NAME, &lb, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? ESTALE : errno;
    return (uint64_t)lb.st_dev == fs->lock.dev && (uint64_t)lb.st_ino == fs->lock.ino ? 0 : ESTALE;
}

/* As the store's owner: makes (or finds) STORE/wake in the store directory
 * SFD and checks that it is private: a directory, not a link, owned by
 * whom we act as, no access for group or others. Sets w->dir_fd. */
static int dir_open(struct ofs_wake *w, int sfd)
{
    struct stat sb;
    if (mkdirat(sfd, STORE_WAKE_DIR, 0700) != 0 && errno != EEXIST)
        return errno;
    w->dir_fd = openat(sfd, STORE_WAKE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (w->dir_fd < 0)
        return errno;
    if (fstat(w->dir_fd, &sb) != 0)
        return errno;
    if (!S_ISDIR(sb.st_mode) || (sb.st_mode & 077) != 0 || sb.st_uid != w->as_uid)
        return EPERM;
    return 0;
}

/* 0 when PFD (an O_PATH descriptor) is the file our listening socket is
 * bound to: a socket of whom we act as, whose listener, reached through
 * PFD itself, is this process. Fills *SB. ESTALE: something else (the name
 * was swapped after our bind). Connections made so far (our probe, or a
 * peer that guessed the temporary name) are closed unanswered. */
static int bound_here(const struct ofs_wake *w, int pfd, struct stat *sb)
{
    struct sockaddr_un sa;
    struct ucred cred;
    socklen_t len, clen = sizeof cred;
    int s, fd, rc;
    if (fstat(pfd, sb) != 0)
        return errno;
    if (!S_ISSOCK(sb->st_mode) || sb->st_uid != w->as_uid)
        return ESTALE;
    if ((rc = fd_addr(&sa, &len, pfd, "")))
        return rc;
    if ((s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
        return errno;
    if (connect(s, (struct sockaddr *)&sa, len) != 0)
        rc = errno == ECONNREFUSED ? ESTALE : errno;
    else if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0)
        rc = errno;
    else
        rc = cred.pid == getpid() ? 0 : ESTALE;
    close(s);
    while ((fd = accept4(w->listen_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
        close(fd);
    return rc;
}

/* As the store's owner: binds a socket under a temporary name, listens,
 * and publishes the file it is bound to under w->name (see the top). */
static int sock_open(struct ofs_wake *w)
{
    struct sockaddr_un sa;
    struct timespec ts;
    struct stat sb;
    char tmp[sizeof w->name], name[sizeof w->name], path[64];
    socklen_t len;
    int pfd, rc;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(tmp, sizeof tmp, "%ld-%08lx.new", (long)getpid(),
             (unsigned long)((unsigned long)ts.tv_nsec ^ (unsigned long)ts.tv_sec) & 0xffffffffUL);
    snprintf(name, sizeof name, "%.*s" STORE_WAKE_SUFFIX, (int)(strlen(tmp) - 4), tmp);
    if ((rc = fd_addr(&sa, &len, w->dir_fd, tmp)))
        return rc;
    w->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (w->listen_fd < 0)
        return errno;
    if (bind(w->listen_fd, (struct sockaddr *)&sa, len) != 0
        || listen(w->listen_fd, STORE_WAKE_BACKLOG) != 0)
        return errno;
    /* Never follow what the name holds now: a symlink is opened as such
     * and found to be no socket. */
    if ((pfd = openat(w->dir_fd, tmp, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return errno == ENOENT ? ESTALE : errno;
    if (!(rc = bound_here(w, pfd, &sb))) {
        /* Ours: the real name gets that very file, whatever the temporary
         * name holds by now; then the temporary name goes, if still ours. */
        if (!(rc = fd_path(path, sizeof path, pfd, ""))
            && linkat(AT_FDCWD, path, w->dir_fd, name, AT_SYMLINK_FOLLOW) != 0)
            rc = errno;
        unlink_ours(w->dir_fd, tmp, sb.st_dev, sb.st_ino);
    }
    close(pfd);
    if (rc)
        return rc;
    w->sock_dev = sb.st_dev;
    w->sock_ino = sb.st_ino;
    memcpy(w->name, name, sizeof name);
    return 0;
}

/* What the threads acting as the store's owner do: at open, make the
 * directory (umask 077: 0700), then the socket (umask 0177: 0600)... */
struct wake_job {
    struct ofs_wake *w;
    int store_fd; /* the store directory */
};

static int wake_dir(void *p)
{
    struct wake_job *j = p;
    return dir_open(j->w, j->store_fd);
}

static int wake_sock(void *p)
{
    return sock_open(p);
}

/* ... and at close. */
static int wake_remove(void *p)
{
    struct ofs_wake *w = p;
    unlink_ours(w->dir_fd, w->name, w->sock_dev, w->sock_ino);
    return 0;
}

int ofs_wake_open(struct ofs *fs, const char *store_dir)
{
    struct ofs_wake *w = &fs->wake;
    struct wake_job j = {w, -1};
    struct stat sb;
    int rc;
    w->listen_fd = w->dir_fd = -1;
    w->nheld = 0;
    w->name[0] = '\0';
    w->active = 1;
    /* The store as we hold it open, not what its path leads to now. */
    if ((j.store_fd = open(store_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        rc = errno;
    else if (!(rc = store_dir_check(fs, j.store_fd, &sb))) {
        w->owner = sb.st_uid;
        w->as_uid = geteuid() == 0 ? sb.st_uid : geteuid();
        w->as_gid = geteuid() == 0 ? sb.st_gid : getegid();
        if (!(rc = ofs_as_user(w->as_uid, w->as_gid, 077, wake_dir, &j)))
            rc = ofs_as_user(w->as_uid, w->as_gid, 0177, wake_sock, w);
    }
    if (j.store_fd >= 0)
        close(j.store_fd);
    if (rc) {
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
    /* Not removed when no thread can be started: the next writer that
     * meets it refused removes it. */
    if (w->name[0] && w->dir_fd >= 0)
        (void)ofs_as_user(w->as_uid, w->as_gid, 077, wake_remove, w);
    w->name[0] = '\0';
    if (w->listen_fd >= 0)
        close(w->listen_fd);
    if (w->dir_fd >= 0)
        close(w->dir_fd);
    w->listen_fd = w->dir_fd = -1;
    w->active = 0;
}
