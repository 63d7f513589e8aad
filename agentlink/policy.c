/* policy.c -- the offload policy of the API: al_policy wraps the policy
 * common/ loads (common/policy.c: the JSON of doc/contract.md, strict, one
 * loader for every program), and decides here whether a result leaves the
 * conversation, which takes counting its characters (text.c). */
#include "agentlink/internal.h"
#include "common/error.h"
#include "common/policy.h"
#include "store/store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The API's values are common/'s: a policy's kinds and preview pass through. */
_Static_assert(AL_OFFLOAD_NEVER == COMMON_OFFLOAD_NEVER, "NEVER");
_Static_assert(AL_OFFLOAD_ALWAYS == COMMON_OFFLOAD_ALWAYS, "ALWAYS");
_Static_assert(AL_OFFLOAD_OVER_CHARS == COMMON_OFFLOAD_OVER_CHARS, "OVER_CHARS");
_Static_assert(AL_OFFLOAD_OVER_BYTES == COMMON_OFFLOAD_OVER_BYTES, "OVER_BYTES");
_Static_assert(AL_OFFLOAD_OVER_TOKENS == COMMON_OFFLOAD_OVER_TOKENS, "OVER_TOKENS");
_Static_assert(COMMON_TOOL_MAX == STORE_TOOL_MAX, "TOOL_MAX");

struct al_policy {
    common_policy *c;
};

/* The store's rule for a namespace, as common/'s policy loader asks it. */
static const char *ns_why(const char *ns)
{
    int rc = store_name_check(ns, strlen(ns));
    return rc ? store_strerror(rc) : NULL;
}

/* Wraps C (taken) into *OUT after a load that returned RC. */
static int wrap(int rc, common_policy *c, al_policy **out)
{
    if (rc)
        return rc == COMMON_ECONFIG ? AL_ECONFIG : rc;
    if (!(*out = malloc(sizeof **out))) {
        common_policy_free(c);
        return ENOMEM;
    }
    (*out)->c = c;
    return 0;
}

int al_policy_parse(al_policy **out, const char *text, size_t len,
                    const char *origin, char **errmsg)
{
    common_policy *c = NULL;
    if (errmsg)
        *errmsg = NULL;
    if (!out)
        return EINVAL;
    *out = NULL;
    int rc = common_policy_parse(&c, text, len, origin, ns_why, errmsg);
    return wrap(rc, c, out);
}

int al_policy_load(al_policy **out, const char *path, char **errmsg)
{
    common_policy *c = NULL;
    if (errmsg)
        *errmsg = NULL;
    if (!out)
        return EINVAL;
    *out = NULL;
    int rc = common_policy_load(&c, path, ns_why, errmsg);
    return wrap(rc, c, out);
}

void al_policy_free(al_policy *pol)
{
    if (!pol)
        return;
    common_policy_free(pol->c);
    free(pol);
}

const struct common_policy *al_policy_common(const al_policy *pol)
{
    return pol ? pol->c : NULL;
}

const char *al_policy_path(const al_policy *pol)
{
    return common_policy_path(al_policy_common(pol));
}

const char *al_policy_mount(const al_policy *pol)
{
    return common_policy_mount(al_policy_common(pol));
}

const char *al_policy_namespace(const al_policy *pol)
{
    return common_policy_namespace(al_policy_common(pol));
}

void al_policy_preview(const al_policy *pol, al_preview *out)
{
    common_preview pv;
    common_policy_preview(al_policy_common(pol), &pv);
    out->head_lines = pv.head_lines;
    out->tail_lines = pv.tail_lines;
    out->max_line_chars = pv.max_line_chars;
}

int al_policy_decide(const al_policy *pol, const char *tool, const void *data,
                     size_t len, int *kind, uint64_t *limit)
{
    int k;
    uint64_t lim;
    int has = common_policy_rule(al_policy_common(pol), tool, &k, &lim);

    if (kind)
        *kind = k;
    if (limit)
        *limit = lim;
    if (!has || len == 0)
        return 0;
    switch (k) {
    case AL_OFFLOAD_ALWAYS:
        return 1;
    case AL_OFFLOAD_OVER_BYTES:
        return (uint64_t)len > lim;
    case AL_OFFLOAD_OVER_CHARS:
    case AL_OFFLOAD_OVER_TOKENS: {
        al_textinfo ti;
        /* No character count can exceed the byte count: skip the scan
         * when the bytes alone are under the limit. */
        uint64_t bound = k == AL_OFFLOAD_OVER_CHARS ? (uint64_t)len : ((uint64_t)len + 3) / 4;
        if (bound <= lim)
            return 0;
        al_text_info(data, len, &ti);
        uint64_t n = k == AL_OFFLOAD_OVER_CHARS ? ti.chars : (ti.chars + 3) / 4;
        return n > lim;
    }
    default:
        return 0;
    }
}
