/* buf.c -- common_buf, common_fixbuf and their sinks (buf.h). */
#include "common/buf.h"
#include "common/utf8.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for EXTRA more bytes and a NUL: 0, or -1 (B failed). Doubles from
 * 256 bytes, so N adds cost O(N) copies. */
static int buf_grow(common_buf *b, size_t extra)
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

void common_buf_add(common_buf *b, const void *data, size_t n)
{
    if (n == 0 || buf_grow(b, n))
        return;
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void common_buf_adds(common_buf *b, const char *s)
{
    common_buf_add(b, s, strlen(s));
}

void common_buf_addc(common_buf *b, char c)
{
    common_buf_add(b, &c, 1);
}

void common_buf_addf(common_buf *b, const char *fmt, ...)
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

int common_buf_detach(common_buf *b, char **out, size_t *outlen)
{
    *out = NULL;
    if (!b->failed && !b->p)
        buf_grow(b, 0);
    if (b->failed) {
        common_buf_release(b);
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

void common_buf_release(common_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

void common_buf_add_shell(common_buf *b, const char *s)
{
    int plain = *s != '\0';
    for (const char *p = s; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789_-.,/:@+=%~", *p) ||
            (p == s && (*p == '-' || *p == '~')))
            plain = 0;
    if (plain) {
        common_buf_adds(b, s);
        return;
    }
    common_buf_addc(b, '\'');
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            common_buf_adds(b, "'\\''");
        else
            common_buf_addc(b, *p);
    }
    common_buf_addc(b, '\'');
}

void common_buf_add_printable(common_buf *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = common_utf8_len(u + i, n - i);
        if (k == 0 || u[i] < 0x20 || u[i] == 0x7f) {
            common_buf_addf(b, "\\x%02x", u[i]);
            i++;
        } else if (u[i] == '\\') {
            common_buf_adds(b, "\\\\");
            i++;
        } else {
            common_buf_add(b, s + i, k);
            i += k;
        }
    }
}

int common_buf_sink(void *arg, const void *data, size_t n)
{
    common_buf *b = arg;
    common_buf_add(b, data, n);
    return b->failed ? ENOMEM : 0;
}

int common_fixbuf_sink(void *arg, const void *data, size_t n)
{
    common_fixbuf *f = arg;
    if (n > f->cap - f->len)
        return -1;
    memcpy(f->p + f->len, data, n);
    f->len += n;
    return 0;
}
