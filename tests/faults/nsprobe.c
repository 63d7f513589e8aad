/* nsprobe.c -- reaching one namespace's entries from another namespace's
 * mount without a name: by file handle (open_by_handle_at, as an NFS export
 * or a handle-caching tool would).
 *
 *   nsprobe handle MNT_A FILE_B
 *       takes the file handle of FILE_B (an entry of another mount, another
 *       namespace of the same store) and opens it through MNT_A. Prints
 *       "refused ERRNAME" when that fails, or "opened" and, when a read
 *       works, "read N bytes" (a leak across namespaces).
 *   nsprobe forge MNT_A FILE_A FILE_B
 *       takes FILE_A's handle (an entry of MNT_A), puts FILE_B's inode
 *       number (its store version) in it, and opens that through MNT_A.
 *       Prints as above.
 * Needs CAP_DAC_READ_SEARCH (root).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct file_handle *handle_of(const char *path)
{
    struct file_handle *fh = malloc(sizeof *fh + MAX_HANDLE_SZ);
    int mount_id;
    if (!fh)
        exit(1);
    fh->handle_bytes = MAX_HANDLE_SZ;
    if (name_to_handle_at(AT_FDCWD, path, fh, &mount_id, 0)) {
        printf("no handle for '%s': %s\n", path, strerrorname_np(errno));
        free(fh);
        exit(0);
    }
    return fh;
}

static int try_open(const char *mnt, struct file_handle *fh)
{
    char buf[4096];
    int mfd = open(mnt, O_RDONLY | O_DIRECTORY), fd;
    ssize_t n;
    if (mfd < 0) {
        perror(mnt);
        return 1;
    }
    fd = open_by_handle_at(mfd, fh, O_RDONLY);
    if (fd < 0) {
        printf("refused %s\n", strerrorname_np(errno));
        close(mfd);
        return 0;
    }
    n = read(fd, buf, sizeof buf);
    if (n < 0)
        printf("opened, read refused %s\n", strerrorname_np(errno));
    else
        printf("opened, read %zd bytes\n", n);
    close(fd);
    close(mfd);
    return 0;
}

int main(int argc, char **argv)
{
    struct file_handle *fh;
    int rc;
    if (argc == 4 && !strcmp(argv[1], "handle")) {
        fh = handle_of(argv[3]);
        rc = try_open(argv[2], fh);
        free(fh);
        return rc;
    }
    if (argc == 5 && !strcmp(argv[1], "forge")) {
        struct stat sb;
        uint64_t ino;
        fh = handle_of(argv[3]);
        if (stat(argv[4], &sb) || fh->handle_bytes < sizeof ino) {
            printf("cannot forge: %s\n", strerror(errno));
            free(fh);
            return 1;
        }
        /* FUSE handles start with the 64-bit node id (our inode number). */
        ino = (uint64_t)sb.st_ino;
        memcpy(fh->f_handle, &ino, sizeof ino);
        rc = try_open(argv[2], fh);
        free(fh);
        return rc;
    }
    fprintf(stderr, "usage: nsprobe handle MNT_A FILE_B | nsprobe forge MNT_A FILE_A FILE_B\n");
    return 2;
}
