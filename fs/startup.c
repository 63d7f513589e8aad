/* startup.c -- where the daemon refuses to mount: checks of the store and
 * the mountpoint against each other and against the mount table, made
 * before mounting.
 *
 * A store at or inside the mountpoint: once mounted, the store's path
 * leads into our own mount, so opening it sends the kernel a request only
 * this daemon can answer, while it is busy opening the store: it waits for
 * ever, and so does every process that touches the mountpoint (stat, cat,
 * mountpoint), until the daemon is SIGKILLed. Compared by device and
 * inode, walking up from the store through "..": path strings miss
 * symlinks (the mountpoint itself may be one), ".." and bind mounts.
 *
 * A mountpoint that is already an offloadfs mount: a second daemon would
 * silently stack its mount over the first, hiding it; almost always a
 * second start of the same unit or fstab line. The mount table says what
 * the path's device belongs to. -o stack allows it. */
#include "fs/fs.h"
#include "common/dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* One level of the walk up from the store: stops (LEVEL + 1) at the
 * mountpoint's directory ARG. */
static int at_mountpoint(void *arg, int fd, const struct stat *st, unsigned level)
{
    (void)fd;
    return common_same_file(st, arg) ? (int)level + 1 : 0;
}

/* How many levels above the directory STORE_ABS the directory MNT sits
 * (0: it is that directory), or -1 when it is none of its ancestors. */
static int levels_below(const char *store_abs, const struct stat *mnt)
{
    return common_dir_walk_up(AT_FDCWD, store_abs, at_mountpoint, (void *)mnt) - 1;
}

int ofs_check_store_outside(const char *store_name, const char *store_abs, const char *mnt,
                            const char *mnt_abs)
{
    struct stat sb;
    int level;
    if (stat(mnt_abs, &sb) != 0)
        return 0; /* check_mountpoint() has just stat'ed it: nothing to add */
    level = levels_below(store_abs, &sb);
    if (level < 0)
        return 0;
    fprintf(stderr, "offloadfs: store '%s' %s the mountpoint '%s': the mount would hide the "
            "store from the daemon, which would then wait for ever on its own mount; use a "
            "store outside the mountpoint\n", store_name, level == 0 ? "is" : "lies inside", mnt);
    return 1;
}

/* A mount as the mount table gives it (escaped: \040 for a space). */
struct mount_row {
    char type[64];
    char source[4096];
};

/* Looks up the mount of device DEV in the mount table into *ROW. Returns 1
 * when found, else 0 (also when the table cannot be read). */
static int mount_of_dev(dev_t dev, struct mount_row *row)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    char *line = NULL, *sep;
    size_t cap = 0;
    unsigned maj, min;
    int found = 0;
    if (!f)
        return 0;
    while (!found && getline(&line, &cap, f) > 0) {
        /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER */
        if (sscanf(line, "%*s %*s %u:%u", &maj, &min) != 2 || maj != major(dev) ||
            min != minor(dev) || !(sep = strstr(line, " - ")))
            continue;
        row->source[0] = '\0';
        found = sscanf(sep + 3, "%63s %4095s", row->type, row->source) >= 1;
    }
    free(line);
    fclose(f);
    return found;
}

int ofs_check_not_stacked(const char *mnt, const char *mnt_abs)
{
    struct stat sb;
    struct mount_row row;
    if (stat(mnt_abs, &sb) != 0 || !mount_of_dev(sb.st_dev, &row) ||
        strcmp(row.type, "fuse.offloadfs") != 0)
        return 0;
    fprintf(stderr, "offloadfs: mountpoint '%s' is already an offloadfs mount (of '%s'); "
            "unmount it first (fusermount3 -u '%s'), or add -o stack to mount over it\n",
            mnt, row.source, mnt);
    return 1;
}
