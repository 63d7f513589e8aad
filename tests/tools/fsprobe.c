/* fsprobe.c -- real syscalls against a path, for the fs tests.
 *
 *   fsprobe errno OP PATH [ARG]   runs one syscall, prints "0" or the errno
 *                                 name (ENOENT, ENODATA, EROFS, ...)
 *   fsprobe pread PATH OFF LEN    writes what pread(2) returns to stdout
 *   fsprobe hold PATH OUT1 OUT2   opens PATH, reads it whole into OUT1,
 *                                 prints "ready", waits for a line on stdin,
 *                                 then reads it whole again through the same
 *                                 handle into OUT2 (or writes the errno name
 *                                 into OUT2 when a read fails)
 *   fsprobe ls DIR                prints "D_TYPE NAME" per entry, as
 *                                 readdir(3) returns them (8 = DT_REG)
 *   fsprobe seekdir DIR K         reads K names, telldir(), seekdir() a
 *                                 second handle there and reads the rest;
 *                                 prints "ok" when that matches one full
 *                                 listing, else the first difference
 *   fsprobe openread COUNT PATH... open+read+close each PATH, COUNT rounds;
 *                                 prints the elapsed seconds
 *
 * OPs for errno: stat lstat open_r open_w open_rw open_trunc creat truncate
 * unlink rmdir mkdir rename (ARG: new path) link (ARG) symlink (ARG: link
 * path) chmod chown utimes mknod setxattr (ARG: name) removexattr (ARG)
 * getxattr (ARG) listxattr read readdir opendir access_w.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static int rc_of(int r) { return r < 0 ? errno : 0; }

static int open_close(const char *path, int flags)
{
    int fd = open(path, flags, 0644);
    if (fd < 0)
        return errno;
    close(fd);
    return 0;
}

static int do_read_one(const char *path)
{
    char buf[4096];
    int fd = open(path, O_RDONLY), err = 0;
    if (fd < 0)
        return errno;
    if (read(fd, buf, sizeof buf) < 0)
        err = errno;
    close(fd);
    return err;
}

static int do_readdir(const char *path)
{
    DIR *d = opendir(path);
    int err = 0;
    if (!d)
        return errno;
    errno = 0;
    while (readdir(d))
        ;
    err = errno;
    closedir(d);
    return err;
}

static int probe(const char *op, const char *path, const char *arg)
{
    struct stat sb;
    char buf[4096];
    if (!strcmp(op, "stat")) return rc_of(stat(path, &sb));
    if (!strcmp(op, "lstat")) return rc_of(lstat(path, &sb));
    if (!strcmp(op, "open_r")) return open_close(path, O_RDONLY);
    if (!strcmp(op, "open_w")) return open_close(path, O_WRONLY);
    if (!strcmp(op, "open_rw")) return open_close(path, O_RDWR);
    if (!strcmp(op, "open_trunc")) return open_close(path, O_RDONLY | O_TRUNC);
    if (!strcmp(op, "creat")) return open_close(path, O_WRONLY | O_CREAT | O_TRUNC);
    if (!strcmp(op, "truncate")) return rc_of(truncate(path, 0));
    if (!strcmp(op, "unlink")) return rc_of(unlink(path));
    if (!strcmp(op, "rmdir")) return rc_of(rmdir(path));
    if (!strcmp(op, "mkdir")) return rc_of(mkdir(path, 0755));
    if (!strcmp(op, "rename")) return rc_of(rename(path, arg));
    if (!strcmp(op, "link")) return rc_of(link(path, arg));
    if (!strcmp(op, "symlink")) return rc_of(symlink(path, arg));
    if (!strcmp(op, "chmod")) return rc_of(chmod(path, 0644));
    if (!strcmp(op, "chown")) return rc_of(chown(path, 1, 1));
    if (!strcmp(op, "utimes")) return rc_of(utimes(path, NULL));
    if (!strcmp(op, "mknod")) return rc_of(mknod(path, S_IFIFO | 0644, 0));
    if (!strcmp(op, "setxattr")) return rc_of(setxattr(path, arg, "x", 1, 0));
    if (!strcmp(op, "removexattr")) return rc_of(removexattr(path, arg));
    if (!strcmp(op, "getxattr")) return rc_of((int)getxattr(path, arg, buf, sizeof buf));
    if (!strcmp(op, "listxattr")) return rc_of((int)listxattr(path, buf, sizeof buf));
    if (!strcmp(op, "read")) return do_read_one(path);
    if (!strcmp(op, "readdir")) return do_readdir(path);
    if (!strcmp(op, "access_w")) return rc_of(access(path, W_OK));
    fprintf(stderr, "fsprobe: unknown op '%s'\n", op);
    exit(2);
}

static int cmd_errno(int argc, char **argv)
{
    int err;
    if (argc < 2)
        return 2;
    err = probe(argv[0], argv[1], argc > 2 ? argv[2] : "");
    printf("%s\n", err ? strerrorname_np(err) : "0");
    return 0;
}

static int cmd_pread(int argc, char **argv)
{
    off_t off;
    size_t len;
    char *buf;
    ssize_t n;
    int fd;
    if (argc < 3)
        return 2;
    off = (off_t)strtoll(argv[1], NULL, 10);
    len = strtoul(argv[2], NULL, 10);
    if ((fd = open(argv[0], O_RDONLY)) < 0 || !(buf = malloc(len + 1))) {
        perror("fsprobe: open");
        return 1;
    }
    n = pread(fd, buf, len, off);
    if (n < 0) {
        fprintf(stderr, "fsprobe: pread: %s\n", strerrorname_np(errno));
        free(buf);
        close(fd);
        return 1;
    }
    fwrite(buf, 1, (size_t)n, stdout);
    free(buf);
    close(fd);
    return 0;
}

/* Reads FD whole from offset 0 into the file OUT; on a failed read writes
 * the errno name instead. */
static int read_whole(int fd, const char *out)
{
    FILE *f = fopen(out, "w");
    char buf[65536];
    off_t off = 0;
    ssize_t n;
    if (!f)
        return 1;
    while ((n = pread(fd, buf, sizeof buf, off)) > 0) {
        fwrite(buf, 1, (size_t)n, f);
        off += n;
    }
    if (n < 0) {
        fclose(f);
        f = fopen(out, "w");
        fprintf(f, "%s\n", strerrorname_np(errno));
    }
    fclose(f);
    return 0;
}

static int cmd_hold(int argc, char **argv)
{
    char line[64];
    int fd;
    if (argc < 3)
        return 2;
    if ((fd = open(argv[0], O_RDONLY)) < 0) {
        perror("fsprobe: open");
        return 1;
    }
    read_whole(fd, argv[1]);
    printf("ready\n");
    fflush(stdout);
    if (!fgets(line, sizeof line, stdin))
        return 1;
    read_whole(fd, argv[2]);
    close(fd);
    return 0;
}

static int cmd_openread(int argc, char **argv)
{
    struct timespec t0, t1;
    char buf[65536];
    long rounds;
    if (argc < 2)
        return 2;
    rounds = strtol(argv[0], NULL, 10);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long r = 0; r < rounds; r++)
        for (int i = 1; i < argc; i++) {
            int fd = open(argv[i], O_RDONLY);
            if (fd < 0 || read(fd, buf, sizeof buf) < 0) {
                perror(argv[i]);
                return 1;
            }
            close(fd);
        }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%.6f\n", (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    return 0;
}

static int cmd_ls(int argc, char **argv)
{
    struct dirent *de;
    DIR *d;
    if (argc < 1)
        return 2;
    if (!(d = opendir(argv[0]))) {
        perror("fsprobe: opendir");
        return 1;
    }
    while ((de = readdir(d)))
        printf("%u %s\n", (unsigned)de->d_type, de->d_name);
    closedir(d);
    return 0;
}

/* Reads up to MAX names from D into NAMES; returns how many. */
static size_t list_names(DIR *d, char **names, size_t max)
{
    struct dirent *de;
    size_t n = 0;
    while (n < max && (de = readdir(d)))
        names[n++] = strdup(de->d_name);
    return n;
}

/* Reads K names through one handle, takes telldir() there, seeks a second,
 * fresh handle to it and reads the rest; a third handle reads everything.
 * The second handle's first read asks the filesystem for an offset it has
 * never served on that handle. */
static int cmd_seekdir(int argc, char **argv)
{
    enum { MAX = 1 << 20 };
    char **all = calloc(MAX, sizeof *all), **first = calloc(MAX, sizeof *first);
    char **rest = calloc(MAX, sizeof *rest);
    size_t k, n, nfirst, nrest;
    DIR *d1, *d2, *d3;
    long pos;
    if (argc < 2 || !all || !first || !rest)
        return 2;
    k = strtoul(argv[1], NULL, 10);
    if (!(d1 = opendir(argv[0])) || !(d2 = opendir(argv[0])) || !(d3 = opendir(argv[0]))) {
        perror("fsprobe: opendir");
        return 1;
    }
    nfirst = list_names(d1, first, k);
    pos = telldir(d1);
    seekdir(d2, pos);
    nrest = list_names(d2, rest, MAX);
    n = list_names(d3, all, MAX);
    if (nfirst + nrest != n) {
        printf("%zu + %zu names through two handles, %zu through one\n", nfirst, nrest, n);
    } else {
        size_t i;
        for (i = 0; i < n; i++) {
            const char *got = i < nfirst ? first[i] : rest[i - nfirst];
            if (strcmp(got, all[i])) {
                printf("name %zu: '%s', want '%s'\n", i, got, all[i]);
                break;
            }
        }
        if (i == n)
            printf("ok\n");
    }
    /* Freed so that the ASan build (make test-asan) reports no leak. */
    for (size_t i = 0; i < MAX; i++) {
        free(all[i]);
        free(first[i]);
        free(rest[i]);
    }
    free(all);
    free(first);
    free(rest);
    closedir(d1);
    closedir(d2);
    closedir(d3);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fsprobe errno|pread|hold|openread ARGS...\n");
        return 2;
    }
    if (!strcmp(argv[1], "errno")) return cmd_errno(argc - 2, argv + 2);
    if (!strcmp(argv[1], "pread")) return cmd_pread(argc - 2, argv + 2);
    if (!strcmp(argv[1], "hold")) return cmd_hold(argc - 2, argv + 2);
    if (!strcmp(argv[1], "ls")) return cmd_ls(argc - 2, argv + 2);
    if (!strcmp(argv[1], "seekdir")) return cmd_seekdir(argc - 2, argv + 2);
    if (!strcmp(argv[1], "openread")) return cmd_openread(argc - 2, argv + 2);
    fprintf(stderr, "fsprobe: unknown command '%s'\n", argv[1]);
    return 2;
}
