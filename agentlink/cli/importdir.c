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
 * directory (common_dir_walk_up()) follows what the kernel resolves. */
#include "agentlink/cli/importdir.h"
#include "agentlink/internal.h"
#include "common/buf.h"
#include "common/dir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const lmdb_files[] = {"data.mdb", "lock.mdb"};

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
static void add_parent_name(common_buf *b, const char *dir, unsigned level)
{
    char real[PATH_MAX];
    if (realpath(dir, real)) {
        for (unsigned i = 0; i < level; i++) {
            char *slash = strrchr(real, '/');
            if (!slash)
                break;
            slash[slash == real ? 1 : 0] = '\0';
        }
        common_buf_add_printable(b, real, strlen(real));
        return;
    }
    common_buf_add_printable(b, dir, strlen(dir));
    for (unsigned i = 0; i < level; i++)
        common_buf_adds(b, "/..");
}

/* Builds the refusal for DIR at LEVEL (0: DIR itself): inside the store
 * STORE_DIR when LMDB_NAME is NULL, else holding LMDB_NAME. */
static int refusal(const char *dir, const char *store_dir, unsigned level,
                   const char *lmdb_name, char **why)
{
    common_buf b = {0};
    common_buf_adds(&b, "cannot import directory '");
    common_buf_add_printable(&b, dir, strlen(dir));
    common_buf_adds(&b, "': ");
    if (!lmdb_name) {
        common_buf_adds(&b, level == 0 ? "it is the store '" : "it lies inside the store '");
        common_buf_add_printable(&b, store_dir, strlen(store_dir));
        common_buf_adds(&b, level == 0 ? "' itself; import moves files and would destroy the store"
                                   : "'");
    } else if (level == 0) {
        common_buf_addf(&b, "it holds an LMDB environment ('%s'); import moves files and would "
                        "destroy it", lmdb_name);
    } else {
        common_buf_adds(&b, "it lies inside an LMDB environment ('");
        add_parent_name(&b, dir, level);
        common_buf_addf(&b, "' holds '%s')", lmdb_name);
    }
    common_buf_adds(&b, "; nothing was touched");
    return common_buf_detach(&b, why, NULL) ? ENOMEM : 1;
}

/* What the walk up from the import directory looks for. */
struct walk {
    const char *dir, *store_dir;
    int have_store;
    struct stat store_sb;
    char **why;
};

/* One level of the walk: 0 to go on up, 1 or ENOMEM (refusal()) to stop. */
static int walk_level(void *arg, int fd, const struct stat *st, unsigned level)
{
    struct walk *w = arg;
    const char *name;
    if (w->have_store && common_same_file(st, &w->store_sb))
        return refusal(w->dir, w->store_dir, level, NULL, w->why);
    if ((name = lmdb_file_in(fd)))
        return refusal(w->dir, w->store_dir, level, name, w->why);
    return 0;
}

int cli_importdir_check(int dfd, const char *dir, const char *store_dir, char **why)
{
    struct walk w = {dir, store_dir, 0, {0}, why};

    *why = NULL;
    w.have_store = store_dir && stat(store_dir, &w.store_sb) == 0 && S_ISDIR(w.store_sb.st_mode);
    return common_dir_walk_up(dfd, ".", walk_level, &w);
}
