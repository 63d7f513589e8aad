/* storectl.c -- a minimal store driver for the fs tests and benchmarks.
 *
 *   storectl DIR init [MAX_TOTAL_BYTES [MAX_RESULT_BYTES]]
 *   storectl DIR put KEY [NS [TOOL [ORIGINAL_SIZE TRUNCATED]]]
 *                                         value on stdin
 *   storectl DIR rm KEY [NS]
 *   storectl DIR bulk PREFIX COUNT SIZE [NS]  COUNT keys PREFIX000000...,
 *                                             SIZE bytes each, no fsync
 *   storectl DIR get KEY [NS]                the stored bytes on stdout
 *   storectl DIR gen                         print the store generation
 *
 * Exit status: 0 ok, 1 store error (message on stderr), 2 usage.
 * The real CLI is build/agentlink; this exists for bulk inserts that must
 * be fast (100,000 entries) and for tests that want no policy in the way.
 */
#include "store/store.h"
#include "readin.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, int rc)
{
    fprintf(stderr, "storectl: %s: %s\n", what, store_strerror(rc));
    return 1;
}

static int cmd_init(store *st, int argc, char **argv)
{
    store_limits lim = {0, 0, 0};
    if (argc > 0)
        lim.max_total_bytes = strtoull(argv[0], NULL, 10);
    if (argc > 1)
        lim.max_result_bytes = strtoull(argv[1], NULL, 10);
    if (!lim.max_total_bytes && !lim.max_result_bytes)
        return 0;
    int rc = store_limits_set(st, &lim, NULL);
    return rc ? fail("limits", rc) : 0;
}

static int cmd_put(store *st, int argc, char **argv)
{
    store_meta meta = {argc > 2 && *argv[2] ? argv[2] : NULL, 0,
                       argc > 3 ? strtoull(argv[3], NULL, 10) : 0,
                       argc > 4 ? atoi(argv[4]) : 0};
    store_entry e;
    char *buf = NULL;
    size_t len;
    int rc;
    if (argc < 1)
        return 2;
    if (tool_read_stdin(&buf, &len)) {
        free(buf);
        return fail("stdin", 5);
    }
    rc = store_put(st, argc > 1 ? argv[1] : NULL, argv[0], buf, len, &meta, &e);
    free(buf);
    if (rc)
        return fail(argv[0], rc);
    printf("%" PRIu64 "\n", e.version);
    return 0;
}

static int cmd_rm(store *st, int argc, char **argv)
{
    int rc;
    if (argc < 1)
        return 2;
    rc = store_remove(st, argc > 1 ? argv[1] : NULL, argv[0]);
    return rc ? fail(argv[0], rc) : 0;
}

static int cmd_get(store *st, int argc, char **argv)
{
    void *buf = NULL;
    size_t len;
    int rc;
    if (argc < 1)
        return 2;
    rc = store_get(st, argc > 1 ? argv[1] : NULL, argv[0], &buf, &len, NULL, NULL);
    if (rc)
        return fail(argv[0], rc);
    fwrite(buf, 1, len, stdout);
    free(buf);
    return 0;
}

static int cmd_bulk(store *st, int argc, char **argv)
{
    unsigned long count, size;
    char key[STORE_NAME_MAX + 1], *val;
    int rc = 0;
    if (argc < 3)
        return 2;
    count = strtoul(argv[1], NULL, 10);
    size = strtoul(argv[2], NULL, 10);
    if (!(val = malloc(size + 1)))
        return 1;
    for (unsigned long i = 0; i < count && !rc; i++) {
        snprintf(key, sizeof key, "%s%06lu", argv[0], i);
        for (unsigned long j = 0; j < size; j++)
            val[j] = (char)('a' + (i + j) % 26);
        if (size)
            val[size - 1] = '\n';
        rc = store_put(st, argc > 3 ? argv[3] : NULL, key, val, size, NULL, NULL);
    }
    free(val);
    return rc ? fail("bulk put", rc) : 0;
}

int main(int argc, char **argv)
{
    store *st = NULL;
    unsigned flags = STORE_CREATE;
    int rc;
    if (argc < 3) {
        fprintf(stderr, "usage: storectl DIR init|put|get|rm|bulk|gen ARGS...\n");
        return 2;
    }
    if (!strcmp(argv[2], "bulk"))
        flags |= STORE_NOSYNC;
    if ((rc = store_open(&st, argv[1], flags)))
        return fail(argv[1], rc);
    if (!strcmp(argv[2], "init"))
        rc = cmd_init(st, argc - 3, argv + 3);
    else if (!strcmp(argv[2], "put"))
        rc = cmd_put(st, argc - 3, argv + 3);
    else if (!strcmp(argv[2], "rm"))
        rc = cmd_rm(st, argc - 3, argv + 3);
    else if (!strcmp(argv[2], "get"))
        rc = cmd_get(st, argc - 3, argv + 3);
    else if (!strcmp(argv[2], "bulk"))
        rc = cmd_bulk(st, argc - 3, argv + 3);
    else if (!strcmp(argv[2], "gen")) {
        store_stats s;
        if (!(rc = store_stats_get(st, &s)))
            printf("%" PRIu64 "\n", s.generation);
        else
            rc = fail("stats", rc);
    } else
        rc = 2;
    store_close(st);
    return rc;
}
