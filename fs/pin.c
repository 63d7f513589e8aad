/* pin.c -- the store directory and its two LMDB files, as a daemon run by
 * root reaches them: through descriptors it checked, never through a name
 * the store's owner can change.
 *
 * Why: root serving a user's store (fstab, allow_other) works in a
 * directory that user owns. LMDB opens DIR/lock.mdb (read-write, created
 * and sized when it is the first user) and DIR/data.mdb by name, following
 * links, so a lock.mdb linked to /etc/shadow was overwritten, a data.mdb
 * linked to root's own store was served to the user, and a store path
 * through the user's directories could be swapped for a link to anything.
 * The privilege model (doc/offloadfs.1, PRIVILEGES):
 * - The path. Walked one name at a time, each opened without following a
 *   link (O_PATH | O_NOFOLLOW); a link is read and followed by us, and ".."
 *   is a real step up. Every directory and link on the way belongs to root
 *   or to one other user, and when one does, the store directory belongs
 *   to that user: a path the user controls leads only to the user's own
 *   store. The directory reached is held open for the daemon's life, and
 *   everything after uses that descriptor, never the path again.
 * - The files. lock.mdb and data.mdb are opened in that directory without
 *   following links (O_PATH: opening has no effect on a FIFO or device)
 *   and must be regular files of the directory's owner with one link: a
 *   hard link to another user's file, a symlink, a FIFO or device is
 *   refused, naming the file and why, before anything reads or writes it.
 *   A missing lock.mdb is created by a thread acting as the owner
 *   (ofs_as_user: the user's file, 0600), exclusively and without
 *   following links.
 * - LMDB's own opens. LMDB takes a directory path and nothing else, so it
 *   is given a private directory of ours (mkdtemp: root's, 0700) holding
 *   two links, lock.mdb and data.mdb, to /proc/self/fd/N of the
 *   descriptors just checked: whatever the user renames meanwhile, LMDB
 *   opens exactly those files. The directory goes once the store is open
 *   (LMDB keeps its descriptors and never reopens).
 * On a read-only filesystem nothing can be swapped: LMDB is given the held
 *   directory itself, after the same checks.
 * Run by anyone else, the daemon has no rights beyond the owner's own, the
 * kernel checks every open, and none of this applies: the path is opened as
 * given, as before.
 */
#include "fs/fs.h"
#include "fs/asuser.h"
#include "fs/pin.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define PIN_MAX_LINKS 40 /* as the kernel's own walk (ELOOP) */
#define LOCK_FILE "lock.mdb"
#define DATA_FILE "data.mdb"

__attribute__((format(printf, 3, 4)))
static int why_set(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return 1;
}

static void fd_close(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* The owners met on the walk: root, and at most one other user. */
struct walk_owner {
    uid_t uid;               /* 0: none other than root yet */
    char name[PATH_MAX];     /* where it was first met */
};

/* The path of the file FD itself (a directory or link), for messages. */
static void fd_name(int fd, char *name, size_t size)
{
    char link[32];
    ssize_t n;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, name, size - 1);
    name[n > 0 ? (size_t)n : 0] = '\0';
}

/* Notes that FD (a directory or link on the path) belongs to UID; 1 (with
 * the reason) when a second user besides root owns part of the path. */
static int owner_note(struct walk_owner *o, int fd, uid_t uid, char *why, size_t len)
{
    char name[PATH_MAX];
    if (uid == 0 || uid == o->uid)
        return 0;
    if (o->uid == 0) {
        o->uid = uid;
        fd_name(fd, o->name, sizeof o->name);
        return 0;
    }
    fd_name(fd, name, sizeof name);
    return why_set(why, len, "its path passes through '%s' (uid %u) and '%s' (uid %u); "
                   "run as root, offloadfs follows a store's path only through directories "
                   "and links of root and of the store's owner", o->name, (unsigned)o->uid,
                   name, (unsigned)uid);
}

/* The remaining names PATH and link target TARGET as TARGET/PATH, in BUF. */
static int rest_join(char *buf, size_t size, const char *target, const char *path)
{
    char tmp[2 * PATH_MAX + 2];
    int n = snprintf(tmp, sizeof tmp, "%s/%s", target, path);
    if (n < 0 || (size_t)n >= sizeof tmp || (size_t)n >= size)
        return ENAMETOOLONG;
    memcpy(buf, tmp, (size_t)n + 1);
    return 0;
}

/* One step: the next name of *P, opened below *FD. Follows a link by
 * rewriting the rest in BUF. Returns 0, an errno value, or -1 (why set). */
static int walk_step(int *fd, char *buf, size_t size, char **p, int *links,
                     struct walk_owner *o, char *why, size_t len)
{
    char name[NAME_MAX + 1], target[PATH_MAX];
    struct stat sb;
    size_t n = strcspn(*p, "/");
    ssize_t k;
    int nfd;
    if (n > NAME_MAX)
        return ENAMETOOLONG;
    memcpy(name, *p, n);
    name[n] = '\0';
    *p += n;
    if (!strcmp(name, "."))
        return 0;
    if ((nfd = openat(*fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return errno;
    if (fstat(nfd, &sb) != 0) {
        k = errno;
        close(nfd);
        return (int)k;
    }
    if (owner_note(o, nfd, sb.st_uid, why, len)) {
        close(nfd);
        return -1;
    }
    if (S_ISDIR(sb.st_mode)) {
        close(*fd);
        *fd = nfd;
        return 0;
    }
    if (!S_ISLNK(sb.st_mode)) {
        close(nfd);
        return ENOTDIR;
    }
    if (++*links > PIN_MAX_LINKS) {
        close(nfd);
        return ELOOP;
    }
    k = readlinkat(nfd, "", target, sizeof target - 1);
    close(nfd);
    if (k <= 0)
        return k < 0 ? errno : ENOENT;
    target[k] = '\0';
    if ((k = rest_join(buf, size, target, *p)))
        return (int)k;
    *p = buf;
    if (target[0] == '/') {
        close(*fd);
        if ((*fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
            return errno;
    }
    return 0;
}

/* Walks GIVEN (see the top) into *OUT, an O_PATH descriptor of the store
 * directory, with its status in *SB. Returns 0, an errno value, or -1 with
 * the reason in WHY. */
static int walk(const char *given, int *out, struct stat *sb, char *why, size_t len)
{
    char buf[2 * PATH_MAX + 2], cwd[PATH_MAX], *p = buf;
    struct walk_owner o = {0, ""};
    int fd, links = 0, rc = 0;
    *out = -1;
    if (given[0] == '/')
        rc = rest_join(buf, sizeof buf, "", given);
    else if (!getcwd(cwd, sizeof cwd))
        rc = errno;
    else
        rc = rest_join(buf, sizeof buf, cwd, given);
    if (rc)
        return rc;
    if ((fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        return errno;
    for (;;) {
        while (*p == '/')
            p++;
        if (!*p || (rc = walk_step(&fd, buf, sizeof buf, &p, &links, &o, why, len)))
            break;
    }
    if (!rc && fstat(fd, sb) != 0)
        rc = errno;
    if (!rc && o.uid && sb->st_uid != o.uid)
        rc = -why_set(why, len, "its path passes through '%s', which belongs to uid %u, to a "
                      "directory of uid %u; run as root, offloadfs follows a store's path "
                      "only through directories and links of root and of the store's owner",
                      o.name, (unsigned)o.uid, (unsigned)sb->st_uid);
    if (rc)
        close(fd);
    else
        *out = fd;
    return rc;
}

/* As the store's owner: creates lock.mdb, theirs, 0600, only if missing. */
static int lock_create(void *arg)
{
    int fd = openat(*(int *)arg, LOCK_FILE,
                    O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
    if (fd < 0)
        return errno;
    close(fd); /* never held read-write: closing one drops LMDB's locks */
    return 0;
}

/* Opens NAME in the held directory as an O_PATH descriptor into *FD and
 * checks it is a regular file of the owner with one link. ENOENT leaves
 * *FD -1. Returns 0, an errno value, or -1 with the reason in WHY. */
static int file_pin(struct ofs_pin *p, const char *name, int *fd, char *why, size_t len)
{
    struct stat sb;
    *fd = openat(p->dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (*fd < 0)
        return errno;
    if (fstat(*fd, &sb) != 0)
        return errno;
    if (S_ISLNK(sb.st_mode))
        return -why_set(why, len, "%s is a symbolic link", name);
    if (!S_ISREG(sb.st_mode))
        return -why_set(why, len, "%s is not a regular file", name);
    if (sb.st_uid != p->owner)
        return -why_set(why, len, "%s belongs to uid %u, not to the store's owner (uid %u)",
                        name, (unsigned)sb.st_uid, (unsigned)p->owner);
    if (sb.st_nlink != 1)
        return -why_set(why, len, "%s has %lu hard links (one is expected)", name,
                        (unsigned long)sb.st_nlink);
    return 0;
}

/* Makes the private directory of links LMDB opens (see the top). */
static int links_make(struct ofs_pin *p)
{
    char target[32];
    snprintf(p->tmp_path, sizeof p->tmp_path, "%s/offloadfs-pin.XXXXXX",
             P_tmpdir);
    if (!mkdtemp(p->tmp_path)) {
        p->tmp_path[0] = '\0';
        return errno;
    }
    if ((p->tmp_fd = open(p->tmp_path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return errno;
    snprintf(target, sizeof target, "/proc/self/fd/%d", p->lock_fd);
    if (p->lock_fd >= 0 && symlinkat(target, p->tmp_fd, LOCK_FILE) != 0)
        return errno;
    snprintf(target, sizeof target, "/proc/self/fd/%d", p->data_fd);
    if (p->data_fd >= 0 && symlinkat(target, p->tmp_fd, DATA_FILE) != 0)
        return errno;
    snprintf(p->files, sizeof p->files, "/proc/self/fd/%d", p->tmp_fd);
    return 0;
}

/* The files as root reaches them: checked, pinned, linked for LMDB. */
static int files_pin(struct ofs_pin *p, char *why, size_t len)
{
    struct statvfs sv;
    int ro = fstatvfs(p->dir_fd, &sv) == 0 && (sv.f_flag & ST_RDONLY);
    /* data.mdb first: a directory without one is no store (store_open()
     * says so, finding no data.mdb among our links), and gets no lock.mdb. */
    int rc = file_pin(p, DATA_FILE, &p->data_fd, why, len);
    if (rc && rc != ENOENT)
        return rc;
    if (rc == 0) {
        rc = file_pin(p, LOCK_FILE, &p->lock_fd, why, len);
        if (rc == ENOENT && !ro) {
            fd_close(&p->lock_fd);
            rc = ofs_as_user(p->owner, p->group, 077, lock_create, &p->dir_fd);
            if (!rc || rc == EEXIST)
                rc = file_pin(p, LOCK_FILE, &p->lock_fd, why, len);
        }
        if (rc && rc != ENOENT) /* ENOENT: read-only filesystem, LMDB runs without */
            return rc;
    }
    if (ro) { /* nothing can change there: LMDB opens the held directory */
        snprintf(p->files, sizeof p->files, "%s", p->dir);
        return 0;
    }
    return links_make(p);
}

int ofs_pin_open(struct ofs_pin *p, const char *given, char *abs, char *why, size_t len)
{
    struct stat sb;
    int rc;
    memset(p, 0, sizeof *p);
    p->dir_fd = p->lock_fd = p->data_fd = p->tmp_fd = -1;
    why[0] = '\0';
    if (geteuid() != 0) {
        if ((p->dir_fd = open(given, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 || fstat(p->dir_fd, &sb))
            rc = errno;
        else
            rc = 0;
    } else {
        rc = walk(given, &p->dir_fd, &sb, why, len);
    }
    if (!rc) {
        p->owner = sb.st_uid;
        p->group = sb.st_gid;
        snprintf(p->dir, sizeof p->dir, "/proc/self/fd/%d", p->dir_fd);
        snprintf(p->files, sizeof p->files, "%s", p->dir);
        if (!realpath(p->dir, abs))
            rc = errno;
    }
    if (!rc && geteuid() == 0)
        rc = files_pin(p, why, len);
    if (rc > 0 && !why[0])
        why_set(why, len, "%s", strerror(rc));
    p->held = 1;
    if (rc)
        ofs_pin_close(p);
    return rc ? 1 : 0;
}

void ofs_pin_release(struct ofs_pin *p)
{
    if (!p->held)
        return;
    if (p->tmp_fd >= 0) {
        (void)unlinkat(p->tmp_fd, LOCK_FILE, 0);
        (void)unlinkat(p->tmp_fd, DATA_FILE, 0);
    }
    if (p->tmp_path[0])
        (void)rmdir(p->tmp_path);
    p->tmp_path[0] = '\0';
    fd_close(&p->tmp_fd);
    fd_close(&p->lock_fd); /* O_PATH: closing drops no fcntl() lock */
    fd_close(&p->data_fd);
    snprintf(p->files, sizeof p->files, "%s", p->dir);
}

void ofs_pin_close(struct ofs_pin *p)
{
    if (!p->held)
        return;
    ofs_pin_release(p);
    fd_close(&p->dir_fd);
    p->dir[0] = p->files[0] = '\0';
    p->held = 0;
}
