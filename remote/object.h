/* object.h -- what object.c and multipart.c share inside remote/. */
#ifndef OFFLOADFS_REMOTE_OBJECT_H
#define OFFLOADFS_REMOTE_OBJECT_H

#include "remote/remote_int.h"

/* Appends META's x-amz-meta-* headers (tool and call id percent-encoded)
 * to *H (a list of C's libcurl: C->r->cu->slist_free_all() frees it).
 * META may be NULL (nothing added). Returns 0 or ENOMEM. */
int meta_headers(const remote_conn *c, struct curl_slist **h, const remote_meta *meta);

/* remote_put() as a multipart upload: initiate (with META), parts of
 * part_bytes each retried on its own, complete; any failure aborts the
 * upload so no part is left behind. Same errors as remote_put(). */
int multipart_put(remote_conn *c, const char *name, uint64_t size, remote_source_fn src, void *arg,
                  const remote_meta *meta);

#endif
