/* lockmark.c -- notices lock.mdb being damaged under a process that has the
 * store open, before LMDB touches it again.
 *
 * Why these facts: LMDB sizes lock.mdb and writes its header (magic,
 * format) only in the process that opens the environment first, holding an
 * exclusive fcntl() lock; everyone after it maps the file as it is. So
 * while our process holds the environment open (and with it a shared lock
 * that keeps anyone else from being first), none of them changes:
 * - the length of the marked file: truncation is what turns the next touch
 *   of the mapped reader table into SIGBUS (fstat() of our descriptor sees
 *   it, even when the name now leads elsewhere);
 * - the inode the name leads to: a file removed or renamed over is one
 *   writers no longer share with us (stat() of the path);
 * - the first 8 bytes, mti_magic and mti_format: garbage written over the
 *   file from its start (dd, cp, a stray write at offset 0) changes them,
 *   and LMDB trusts the mutexes right behind them (one pread()).
 * Garbage that spares the header and hits only the mutexes or reader slots
 * is not seen; the check is a tripwire, not a checksum.
 */
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define LOCK_NAME "lock.mdb"

/* Returns malloc'd "DIR/lock.mdb", or NULL when out of memory. */
static char *lock_path(const char *dir)
{
    size_t n = strlen(dir) + sizeof "/" LOCK_NAME;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, LOCK_NAME);
    return p;
}

/* 1 when DIR is on a filesystem mounted read-only: LMDB then runs without
 * a lock file, and nobody can make or change one. */
static int dir_read_only(const char *dir)
{
    struct statvfs sv;
    return statvfs(dir, &sv) == 0 && (sv.f_flag & ST_RDONLY);
}

/* Reads the first LEN bytes of FD into HEAD. Returns 0, an errno value,
 * or STORE_ECORRUPT when the file is shorter. */
static int read_head(int fd, unsigned char *head, size_t len)
{
    ssize_t n;
    do
        n = pread(fd, head, len, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return errno;
    return (size_t)n < len ? STORE_ECORRUPT : 0;
}

/* Fills M from the file open on M->fd. */
static int mark_fill(store_lockmark *m)
{
    struct stat sb;
    if (fstat(m->fd, &sb))
        return errno;
    if (!S_ISREG(sb.st_mode))
        return STORE_ECORRUPT;
    m->dev = (uint64_t)sb.st_dev;
    m->ino = (uint64_t)sb.st_ino;
    m->size = (uint64_t)sb.st_size;
    return read_head(m->fd, m->head, sizeof m->head);
}

int store_lock_mark(const store *st, store_lockmark *m)
{
    const char *dir = store_path(st);
    int rc;
    memset(m, 0, sizeof *m);
    m->fd = -1;
    if (!(m->path = lock_path(dir)))
        return ENOMEM;
    if ((m->fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
        rc = errno;
        if (rc == ENOENT && dir_read_only(dir))
            return 0; /* inert: nothing can change on this filesystem */
    } else {
        rc = mark_fill(m);
    }
    if (rc)
        store_lock_unmark(m);
    return rc;
}

int store_lock_check(const store_lockmark *m, const char **why)
{
    const char *what = NULL;
    unsigned char head[sizeof m->head];
    struct stat now, named;
    int rc = 0;
    if (why)
        *why = NULL;
    if (!m->path || m->fd < 0)
        return 0; /* never taken, or inert */
    if (fstat(m->fd, &now))
        rc = errno;
    else if ((uint64_t)now.st_size < m->size)
        what = "was truncated";
    else if (stat(m->path, &named))
        rc = errno;
    else if ((uint64_t)named.st_dev != m->dev || (uint64_t)named.st_ino != m->ino)
        what = "was replaced by another file";
    else if ((rc = read_head(m->fd, head, sizeof head)) == STORE_ECORRUPT)
        what = "was truncated"; /* between the fstat() and now */
    else if (!rc && memcmp(head, m->head, sizeof head) != 0)
        what = "had its header overwritten";
    else if (!rc && (uint64_t)now.st_size != m->size)
        what = "changed size";
    if (rc == ENOENT || rc == ENOTDIR) /* only stat() fails so */
        what = "was removed";
    if (what)
        rc = STORE_ECORRUPT;
    else if (rc)
        what = "could not be checked";
    if (why && rc)
        *why = what;
    return rc;
}

int store_lock_closable(const store_lockmark *m)
{
    struct stat sb;
    if (!m->path || m->fd < 0)
        return 1;
    return fstat(m->fd, &sb) == 0 && (uint64_t)sb.st_size >= m->size;
}

void store_lock_unmark(store_lockmark *m)
{
    if (!m || !m->path) /* never taken (zero-filled), or released */
        return;
    if (m->fd >= 0)
        close(m->fd);
    free(m->path);
    m->fd = -1;
    m->path = NULL;
}
