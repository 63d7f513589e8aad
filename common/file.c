/* file.c -- common_file_read(). */
#include "common/file.h"
#include "common/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int common_file_read(const char *path, size_t limit, char **out, size_t *len)
{
    common_buf b = {0};
    struct stat sb;
    int fd, rc = 0;
    char chunk[65536];
    *out = NULL;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    if (fstat(fd, &sb) != 0) {
        rc = errno;
        goto cleanup;
    }
    if (S_ISDIR(sb.st_mode)) {
        rc = EISDIR;
        goto cleanup;
    }
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = errno;
            goto cleanup;
        }
        if (n == 0)
            break;
        if (b.len + (size_t)n > limit) {
            rc = EFBIG;
            goto cleanup;
        }
        common_buf_add(&b, chunk, (size_t)n);
        if (b.failed) {
            rc = ENOMEM;
            goto cleanup;
        }
    }
    rc = common_buf_detach(&b, out, len);
cleanup:
    common_buf_release(&b);
    close(fd);
    return rc;
}
