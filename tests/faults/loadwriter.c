/* loadwriter.c -- one writer process of the load test, through the agentlink
 * library (al_store_put / al_store_remove), as an agent runtime would.
 *
 *   loadwriter STORE ID PUTS SEED MAX_RESULT LOG [OWN_KEYS [SHARED_KEYS]]
 *
 * Makes PUTS writes of self-describing values (content.h) under keys of its
 * own, "wID-J" (J < OWN_KEYS, default 8: rewrites), and keys shared by all
 * writers, "shared-J" (J < SHARED_KEYS, default 32: concurrent rewrites of
 * one name); about one write in twenty is a removal of an own key. Sizes
 * are random: most a few KiB, some up to MAX_RESULT, and one in twenty
 * over MAX_RESULT (up to 3x), which agentlink must cut to the bound.
 * After each acknowledged call one line goes to LOG:
 *     put KEY SEED LEN STORED_SIZE TRUNCATED
 *     rm KEY
 * and a refused or failed call is one line "err KEY CODE MESSAGE".
 * Checks on the spot that a cut value is recorded as truncated with its
 * original size and fits MAX_RESULT. Exit 0 when every call succeeded and
 * every check held, 1 otherwise.
 */
#include "agentlink/agentlink.h"
#include "content.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng;
static uint64_t next(void)
{
    rng = ct_mix(rng);
    return rng;
}

static size_t pick_size(uint64_t max_result)
{
    uint64_t r = next() % 100;
    if (r < 60)
        return 64 + (size_t)(next() % 4096);
    if (r < 85)
        return 4096 + (size_t)(next() % 61440);
    if (r < 95)
        return (size_t)(65536 + next() % (max_result > 65536 ? max_result - 65536 : 1));
    return (size_t)(max_result + 1 + next() % (2 * max_result)); /* over the bound */
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: loadwriter STORE ID PUTS SEED MAX_RESULT LOG [OWN [SHARED]]\n");
        return 2;
    }
    const char *dir = argv[1];
    unsigned id = (unsigned)strtoul(argv[2], NULL, 10);
    unsigned puts = (unsigned)strtoul(argv[3], NULL, 10);
    uint64_t max_result = strtoull(argv[5], NULL, 10);
    unsigned own = argc > 7 ? (unsigned)strtoul(argv[7], NULL, 10) : 8;
    unsigned shared = argc > 8 ? (unsigned)strtoul(argv[8], NULL, 10) : 32;
    FILE *log = fopen(argv[6], "w");
    al_store *h = NULL;
    int failures = 0, rc;
    rng = strtoull(argv[4], NULL, 10) * 1000003u + id;
    if (!log || (rc = al_store_open(&h, dir, NULL, "/mnt", NULL))) {
        fprintf(stderr, "loadwriter %u: cannot start\n", id);
        return 1;
    }
    setvbuf(log, NULL, _IOLBF, 0);
    for (unsigned i = 0; i < puts; i++) {
        char key[64];
        uint64_t seed = ((uint64_t)id << 32) | i;
        if (own && next() % 2 == 0)
            snprintf(key, sizeof key, "w%u-%u", id, (unsigned)(next() % own));
        else
            snprintf(key, sizeof key, "shared-%u", (unsigned)(next() % (shared ? shared : 1)));
        if (own && key[0] == 'w' && next() % 20 == 0) {
            al_entry e;
            rc = al_store_remove(h, key, &e);
            if (rc == 0)
                fprintf(log, "rm %s\n", key);
            else if (rc != AL_ENOTFOUND && rc != AL_EEVICTED) {
                fprintf(log, "err %s %d %s\n", key, rc, al_strerror(rc));
                failures++;
            }
            continue;
        }
        size_t len;
        unsigned char *data = ct_make(key, seed, pick_size(max_result), &len);
        al_entry e;
        if (!data)
            return 1;
        rc = al_store_put(h, key, data, len, "loadtool", &e, NULL);
        if (rc) {
            fprintf(log, "err %s %d %s\n", key, rc, al_strerror(rc));
            failures++;
        } else {
            int cut = len > max_result;
            if (e.truncated != cut || e.original_size != len || e.size > max_result
                || (!cut && e.size != len)) {
                fprintf(log, "err %s 0 bad entry: truncated %d original %" PRIu64
                        " size %" PRIu64 " for %zu bytes\n", key, e.truncated,
                        e.original_size, e.size, len);
                failures++;
            }
            fprintf(log, "put %s %" PRIu64 " %zu %" PRIu64 " %d\n", key, seed, len, e.size,
                    e.truncated);
        }
        free(data);
    }
    al_store_close(h);
    fclose(log);
    return failures ? 1 : 0;
}
