/* util.c -- errors, buffers, UTF-8, quoting and other small helpers. */
#include "agentlink/internal.h"
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The AL_E* codes that mirror the store's sit at the same offset, so the
 * translation is arithmetic; these checks keep the two headers in step. */
_Static_assert(AL_ENOTFOUND - AL_ERR_BASE == STORE_ENOTFOUND - STORE_ERR_BASE, "ENOTFOUND");
_Static_assert(AL_EEVICTED - AL_ERR_BASE == STORE_EEVICTED - STORE_ERR_BASE, "EEVICTED");
_Static_assert(AL_ETOOBIG - AL_ERR_BASE == STORE_ETOOBIG - STORE_ERR_BASE, "ETOOBIG");
_Static_assert(AL_ENOSTORE - AL_ERR_BASE == STORE_ENOSTORE - STORE_ERR_BASE, "ENOSTORE");
_Static_assert(AL_ELIMITS - AL_ERR_BASE == STORE_ELIMITS - STORE_ERR_BASE, "ELIMITS");
_Static_assert(AL_ELMDB - AL_ERR_BASE == STORE_ELMDB - STORE_ERR_BASE, "ELMDB");
_Static_assert(AL_ENAME_EMPTY - AL_ERR_BASE == STORE_ENAME_EMPTY - STORE_ERR_BASE, "ENAME_EMPTY");
_Static_assert(AL_ENAME_DOT - AL_ERR_BASE == STORE_ENAME_DOT - STORE_ERR_BASE, "ENAME_DOT");

/* Store codes live in (STORE_ERR_BASE - 40, STORE_ERR_BASE); ours go on
 * below that at AL_ERR_BASE - 40. */
#define MIRRORED 40

int al_err_from_store(int rc)
{
    if (rc < STORE_ERR_BASE && rc > STORE_ERR_BASE - MIRRORED)
        return AL_ERR_BASE + (rc - STORE_ERR_BASE);
    return rc;
}

int al_err_is_name(int err)
{
    return err <= AL_ENAME_EMPTY && err >= AL_ENAME_DOT;
}

const char *al_strerror(int err)
{
    switch (err) {
    case AL_ENOSTORE: return "no store there yet (agentlink init or a first write creates it)";
    case AL_EEVICTED: return "was evicted or removed";
    case AL_ECONFIG: return "offload policy refused";
    case AL_ESIZE: return "expected a size: a whole number of bytes >= 1, optionally followed by K, M or G";
    case AL_ETOOL: return "tool name must be 1 to 255 bytes of UTF-8 without control characters";
    case AL_EMOUNT: return "mount must be an absolute path";
    case AL_ELIMITS: return "limits refused: each must be at least 64 bytes, max_total_bytes at "
                            "most 16 TiB, and max_result_bytes no more than max_total_bytes";
    case AL_ENOTMOUNT: return "is not a path directly under the mount";
    default: break;
    }
    if (err < AL_ERR_BASE && err > AL_ERR_BASE - MIRRORED)
        return store_strerror(STORE_ERR_BASE + (err - AL_ERR_BASE));
    if (err > 0 || err == 0)
        return store_strerror(err);
    return "unknown agentlink error";
}

const char *al_version(void)
{
    return OFFLOADFS_VERSION;
}

void al_free(void *p)
{
    free(p);
}

const char *al_reason_name(int reason)
{
    return reason == AL_REASON_REMOVED ? "removed" : "evicted";
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

/* ---- buffers ----------------------------------------------------------- */
static int buf_grow(al_buf *b, size_t extra)
{
    size_t need, cap;
    char *p;
    if (b->failed)
        return -1;
    if (extra > SIZE_MAX - b->len - 1)
        goto fail;
    need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    p = realloc(b->p, cap);
    if (!p)
        goto fail;
    b->p = p;
    b->cap = cap;
    return 0;
fail:
    b->failed = 1;
    return -1;
}

void al_buf_add(al_buf *b, const void *data, size_t n)
{
    if (n == 0 || buf_grow(b, n))
        return;
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void al_buf_adds(al_buf *b, const char *s)
{
    al_buf_add(b, s, strlen(s));
}

void al_buf_addc(al_buf *b, char c)
{
    al_buf_add(b, &c, 1);
}

void al_buf_addf(al_buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if (buf_grow(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

int al_buf_detach(al_buf *b, char **out, size_t *outlen)
{
    *out = NULL;
    if (!b->failed && !b->p)
        buf_grow(b, 0);
    if (b->failed) {
        al_buf_release(b);
        return ENOMEM;
    }
    b->p[b->len] = '\0';
    *out = b->p;
    if (outlen)
        *outlen = b->len;
    b->p = NULL;
    b->len = b->cap = 0;
    return 0;
}

void al_buf_release(al_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* ---- UTF-8 and quoting ------------------------------------------------- */

int al_key_check(const char *key)
{
    if (!key)
        return EINVAL;
    return al_err_from_store(store_name_check(key, strlen(key)));
}

int al_tool_check(const char *tool)
{
    const unsigned char *s = (const unsigned char *)tool;
    size_t len;
    if (!tool)
        return AL_ETOOL;
    len = strlen(tool);
    if (len == 0 || len > STORE_TOOL_MAX)
        return AL_ETOOL;
    for (size_t i = 0; i < len;) {
        size_t n = store_utf8_len(s + i, len - i);
        if (n == 0 || s[i] < 0x20 || s[i] == 0x7f)
            return AL_ETOOL;
        i += n;
    }
    return 0;
}

void al_buf_add_shell(al_buf *b, const char *s)
{
    int plain = *s != '\0';
    for (const char *p = s; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789_-.,/:@+=%~", *p) ||
            (p == s && (*p == '-' || *p == '~')))
            plain = 0;
    if (plain) {
        al_buf_adds(b, s);
        return;
    }
    al_buf_addc(b, '\'');
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            al_buf_adds(b, "'\\''");
        else
            al_buf_addc(b, *p);
    }
    al_buf_addc(b, '\'');
}

void al_buf_add_printable(al_buf *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = store_utf8_len(u + i, n - i);
        if (k == 0 || u[i] < 0x20 || u[i] == 0x7f) {
            al_buf_addf(b, "\\x%02x", u[i]);
            i++;
        } else if (u[i] == '\\') {
            al_buf_adds(b, "\\\\");
            i++;
        } else {
            al_buf_add(b, s + i, k);
            i += k;
        }
    }
}

/* ---- files ------------------------------------------------------------- */
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
