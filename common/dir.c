/* dir.c -- common_dir_walk_up() (dir.h). */
#include "common/dir.h"

#include <fcntl.h>
#include <unistd.h>

int common_same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int common_dir_walk_up(int dfd, const char *path, common_dir_fn fn, void *arg)
{
    struct stat cur, up;
    int fd = openat(dfd, path, O_PATH | O_DIRECTORY | O_CLOEXEC), parent, rc = 0;
    for (unsigned level = 0; fd >= 0 && fstat(fd, &cur) == 0; level++) {
        if ((rc = fn(arg, fd, &cur, level)))
            break;
        parent = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (parent < 0)
            break;
        if (fstat(parent, &up) != 0 || common_same_file(&up, &cur)) { /* the root */
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
