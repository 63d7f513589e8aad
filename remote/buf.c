/* buf.c -- the growing byte buffer of remote/ (rbuf): URLs, queries,
 * headers, answer bodies. A leaf: it calls nothing of remote/. */
#include "remote/remote_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RESP_CAP (16u << 20) /* a listing page is ~300 KiB; errors are small */

int remote_rbuf_add(rbuf *b, const void *data, size_t n)
{
    size_t cap = b->cap ? b->cap : RESP_CAP;
    if (b->len + n > cap) {
        b->over = 1;
        n = cap - b->len;
    }
    if (b->len + n + 1 > b->size) {
        size_t sz = b->size ? b->size : 4096;
        while (sz < b->len + n + 1)
            sz *= 2;
        char *p = realloc(b->p, sz);
        if (!p)
            return ENOMEM;
        b->p = p;
        b->size = sz;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

void remote_rbuf_free(rbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}
