/* base.c -- the library's small calls: version, memory, time stamps, and
 * reading a whole file. */
#include "agentlink/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *al_version(void)
{
    return OFFLOADFS_VERSION;
}

void al_free(void *p)
{
    free(p);
}

char *al_time_format(uint64_t ns, char *buf, size_t size)
{
    time_t t = (time_t)(ns / 1000000000u);
    struct tm tm;
    if (size == 0)
        return buf;
    if (!gmtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        buf[0] = '\0';
    return buf;
}

int al_file_read(const char *path, size_t limit, char **out, size_t *len)
{
    al_buf b = {0};
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
        al_buf_add(&b, chunk, (size_t)n);
        if (b.failed) {
            rc = ENOMEM;
            goto cleanup;
        }
    }
    rc = al_buf_detach(&b, out, len);
cleanup:
    al_buf_release(&b);
    close(fd);
    return rc;
}
