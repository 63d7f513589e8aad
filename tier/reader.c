/* reader.c -- the reader's port (reader.h): the daemon's lookups, reads
 * of one version, listings and the mount check, over tier.c's calls, with
 * every remote code turned into a TIER_E* code here, in tier_code() and
 * nowhere else. The connection is a remote_conn in a wrapper of its own,
 * so that no remote type reaches a reader. */
#include "tier/tier_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(TIER_NO_RETRY == REMOTE_NO_RETRY, "reader.h and remote.h agree on 'no retry'");

struct tier_conn {
    remote_conn *c;
};

/* The TIER_E* code for RC (anything of remote.h's range); 0, errno
 * values, store and tier codes, and a caller's callback values pass
 * through unchanged. */
static int tier_code(int rc)
{
    if (rc > REMOTE_ERR_BASE || rc <= REMOTE_ERR_BASE - 100)
        return rc;
    switch (rc) {
    case REMOTE_ENOTFOUND: return TIER_ENOTFOUND;
    case REMOTE_ECHANGED: return TIER_ECHANGED;
    case REMOTE_ECONFIG: return TIER_ECONFIG;
    case REMOTE_EDENIED: return TIER_EDENIED;
    case REMOTE_ENOBUCKET: return TIER_ENOBUCKET;
    default: return TIER_EFAILED; /* EDOWN, EPROTO, ESOURCE, ELIMIT */
    }
}

int tier_open_reader(tier **out, store *st, unsigned stall_s, unsigned retries, char *msg,
                     size_t msglen)
{
    remote_options opt = {.stall_s = stall_s, .retries = retries};
    return tier_code(tier_open(out, st, &opt, msg, msglen));
}

uint64_t tier_bound_ms(const tier *t)
{
    return remote_bound_ms(t->r);
}

void tier_describe(const tier *t, char *buf, size_t cap)
{
    snprintf(buf, cap, "s3://%s/%s at %s", remote_bucket(t->r), remote_prefix(t->r),
             remote_endpoint(t->r));
}

int tier_conn_new(tier_conn **out, tier *t)
{
    tier_conn *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!c)
        return ENOMEM;
    int rc = remote_conn_new(&c->c, t->r);
    if (rc) {
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void tier_conn_free(tier_conn *c)
{
    if (!c)
        return;
    remote_conn_free(c->c);
    free(c);
}

const char *tier_conn_message(const tier_conn *c)
{
    return c ? remote_conn_message(c->c) : "";
}

int tier_check(tier_conn *c)
{
    return tier_code(remote_check(c->c));
}

/* Copies IN's fields into *OBJ: an ETag longer than TIER_ETAG_MAX, or a
 * tool name longer than STORE_TOOL_MAX, is left out (none). */
static void object_from_info(tier_object *obj, const remote_info *in)
{
    memset(obj, 0, sizeof *obj);
    obj->length = in->length;
    obj->size = in->size;
    obj->created = in->created > 0 ? in->created : 0;
    obj->mtime = in->mtime > 0 ? in->mtime : 0;
    if (in->etag && strlen(in->etag) <= TIER_ETAG_MAX)
        memcpy(obj->etag, in->etag, strlen(in->etag) + 1);
    if (in->tool && strlen(in->tool) <= STORE_TOOL_MAX) {
        obj->has_tool = 1;
        memcpy(obj->tool, in->tool, strlen(in->tool) + 1);
    }
}

int tier_read_lookup(tier *t, tier_conn *c, const char *ns, const char *key, uint64_t len,
                     tier_sink_fn sink, void *arg, uint64_t *got, tier_object *obj)
{
    remote_info in;
    memset(&in, 0, sizeof in);
    int rc = tier_lookup_first(t, c->c, ns, key, len, sink, arg, got, &in);
    if (rc == 0)
        object_from_info(obj, &in);
    remote_info_clear(&in);
    return tier_code(rc);
}

int tier_read_version(tier *t, tier_conn *c, const char *ns, const char *key, const char *etag,
                      uint64_t off, uint64_t len, tier_sink_fn sink, void *arg, uint64_t *got)
{
    int rc = tier_get(t, c->c, ns, key, etag, off, len, sink, arg, got);
    /* With a version asked for, a missing object is that version gone. */
    return rc == REMOTE_ENOTFOUND && etag ? TIER_ECHANGED : tier_code(rc);
}

int tier_read_list(tier *t, tier_conn *c, const char *ns, uint64_t max_ms, int (*stop)(void *),
                   void *stop_arg, tier_list_fn fn, void *arg)
{
    remote_list_bounds b = {0, max_ms, stop, stop_arg};
    return tier_code(tier_list(t, c->c, ns, &b, fn, arg));
}
