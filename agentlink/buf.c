/* buf.c -- al_buf, the growable byte buffer (internal.h), and the
 * quoting helpers that append to one. */
#include "agentlink/internal.h"
#include "store/store.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

