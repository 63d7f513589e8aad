/* upload.c -- remote_put() and remote_put_buf(): the one entry of an
 * upload, which chooses the operation by size: a single PUT (put.c) up to
 * multipart_over bytes, the multipart upload (multipart.c) above. The only
 * file of remote/ that calls an operation; no operation calls it. */
#include "remote/remote_int.h"

#include <stdint.h>
#include <string.h>

int remote_put(remote_conn *c, const char *name, uint64_t size, remote_source_fn src, void *arg,
               const remote_meta *meta)
{
    if (size > c->r->opt.multipart_over)
        return remote_put_multipart(c, name, size, src, arg, meta);
    return remote_put_single(c, name, size, src, arg, meta);
}

static int mem_source(void *arg, uint64_t off, void *buf, size_t len)
{
    memcpy(buf, (const char *)arg + off, len);
    return 0;
}

int remote_put_buf(remote_conn *c, const char *name, const void *buf, size_t len, const remote_meta *meta)
{
    return remote_put(c, name, len, mem_source, (void *)(uintptr_t)buf, meta);
}
