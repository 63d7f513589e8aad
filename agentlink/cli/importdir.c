/* importdir.c -- refuses an import directory that is, holds or lies
 * inside an LMDB store.
 *
 * import moves files: it unlinks each one it stored. Pointed at a store's
 * directory it would move data.mdb and lock.mdb into the store (and so out
 * of it): a running daemon then loses its lock file and unmounts, and the
 * data is gone. Skipping just those two names per file is not enough (a
 * directory inside a store, another LMDB application's environment, a
 * store created in DIR by this very run), so the whole directory is
 * refused before anything is listed.
 *
 * Why device and inode and not path strings: the same directory is reached
 * through symlinks, "..", relative paths and bind mounts, and a string
 * compare misses each of them. Walking up through ".." from the open
 * directory follows what the kernel resolves. */
#include "agentlink/cli/importdir.h"
#include "agentlink/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const lmdb_files[] = {"data.mdb", "lock.mdb"};

static int same_dir(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The LMDB file name the directory at FD holds, or NULL. An entry that
 * cannot be looked at (EACCES) does not count: we could not have moved it
 * either. */
static const char *lmdb_file_in(int fd)
{
    struct stat sb;
    for (size_t i = 0; i < sizeof lmdb_files / sizeof *lmdb_files; i++)
        if (fstatat(fd, lmdb_files[i], &sb, AT_SYMLINK_NOFOLLOW) == 0)
            return lmdb_files[i];
    return NULL;
}

/* Appends, for a message, DIR's LEVEL-th parent: DIR's real path with
 * LEVEL components taken off, else DIR followed by LEVEL times "/..". */
static void add_parent_name(al_buf *b, const char *dir, unsigned level)
{
    char real[PATH_MAX];
    if (realpath(dir, real)) {
        for (unsigned i = 0; i < level; i++) {
            char *slash = strrchr(real, '/');
            if (!slash)
                break;
            slash[slash == real ? 1 : 0] = '\0';
        }
        al_buf_add_printable(b, real, strlen(real));
        return;
    }
    al_buf_add_printable(b, dir, strlen(dir));
    for (unsigned i = 0; i < level; i++)
        al_buf_adds(b, "/..");
}

/* Builds the refusal for DIR at LEVEL (0: DIR itself): inside the store
 * STORE_DIR when LMDB_NAME is NULL, else holding LMDB_NAME. */
static int refusal(const char *dir, const char *store_dir, unsigned level,
                   const char *lmdb_name, char **why)
{
    al_buf b = {0};
    al_buf_adds(&b, "cannot import directory '");
    al_buf_add_printable(&b, dir, strlen(dir));
    al_buf_adds(&b, "': ");
    if (!lmdb_name) {
        al_buf_adds(&b, level == 0 ? "it is the store '" : "it lies inside the store '");
        al_buf_add_printable(&b, store_dir, strlen(store_dir));
        al_buf_adds(&b, level == 0 ? "' itself; import moves files and would destroy the store"
                                   : "'");
    } else if (level == 0) {
        al_buf_addf(&b, "it holds an LMDB environment ('%s'); import moves files and would "
                    "destroy it", lmdb_name);
    } else {
        al_buf_adds(&b, "it lies inside an LMDB environment ('");
        add_parent_name(&b, dir, level);
        al_buf_addf(&b, "' holds '%s')", lmdb_name);
    }
    al_buf_adds(&b, "; nothing was touched");
    return al_buf_detach(&b, why, NULL) ? ENOMEM : 1;
}

int cli_importdir_check(int dfd, const char *dir, const char *store_dir, char **why)
{
    struct stat store_sb, cur, up;
    int have_store, fd, parent, rc = 0;
    const char *name;

    *why = NULL;
    have_store = store_dir && stat(store_dir, &store_sb) == 0 && S_ISDIR(store_sb.st_mode);
    fd = openat(dfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    for (unsigned level = 0; fd >= 0 && fstat(fd, &cur) == 0; level++) {
        if (have_store && same_dir(&cur, &store_sb)) {
            rc = refusal(dir, store_dir, level, NULL, why);
            break;
        }
        if ((name = lmdb_file_in(fd))) {
            rc = refusal(dir, store_dir, level, name, why);
            break;
        }
        parent = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (parent < 0)
            break;
        if (fstat(parent, &up) != 0 || same_dir(&up, &cur)) { /* the root */
            close(parent);
            break;
        }
        close(fd);
        fd = parent;
    }
    if (fd >= 0)
        close(fd);
    return rc;
}
