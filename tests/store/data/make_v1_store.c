/* make_v1_store.c -- made tests/store/data/v1-store/data.mdb with the store
 * code of commit 954234a (format 1, no compression):
 *   cc -I. -D_GNU_SOURCE -o mk tests/store/data/make_v1_store.c store/[a-z]*.c -llmdb -lpthread
 *   ./mk DIR   (then copy DIR/data.mdb; lock.mdb is not needed)
 * Kept for the record; not built by make. */
#include "store/store.h"
#include "tests/store/data/v1_content.h"

#include <stdlib.h>

static int put(store *st, const char *ns, const char *key, size_t len, unsigned seed,
               int noise, const char *tool)
{
    unsigned char *buf = malloc(len + 1);
    store_meta m = {tool, 1764540000000000000ull + seed, 0, 0};
    int rc;
    for (size_t i = 0; i < len; i++)
        buf[i] = noise ? v1_noise_byte(seed, i) : v1_text_byte(seed, i);
    rc = store_put(st, ns, key, buf, len, &m, NULL);
    free(buf);
    return rc;
}

int main(int argc, char **argv)
{
    store *st;
    store_limits lim = {V1_MAX_TOTAL, 0, 0};
    int rc;
    if (argc != 2 || store_open(&st, argv[1], STORE_CREATE))
        return 2;
    if ((rc = store_limits_set(st, &lim, NULL)) || (rc = put(st, "default", V1_EVICTED, 60000, 9, 0, "bash"))
        || (rc = put(st, "default", "replaced", 500, 5, 0, NULL))
        || (rc = put(st, "default", V1_REMOVED, 1000, 8, 0, NULL)) || (rc = store_remove(st, "default", V1_REMOVED)))
        return fprintf(stderr, "%s\n", store_strerror(rc)), 1;
    for (size_t i = 0; i < V1_LIVE; i++)
        if ((rc = put(st, v1_live[i].ns, v1_live[i].key, v1_live[i].len, v1_live[i].seed,
                      v1_live[i].noise, v1_live[i].tool)))
            return fprintf(stderr, "%s: %s\n", v1_live[i].key, store_strerror(rc)), 1;
    store_close(st);
    return 0;
}
