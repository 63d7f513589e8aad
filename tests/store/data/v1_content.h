/* v1_content.h -- the entries of tests/store/data/v1-store, made by
 * make_v1_store.c with the store code of commit 954234a (format 1, before
 * compression), and checked by test_compat.c with today's code. */
#ifndef OFFLOADFS_V1_CONTENT_H
#define OFFLOADFS_V1_CONTENT_H

#include <stddef.h>
#include <stdio.h>

/* Byte I of a text-like value (log lines) with SEED. */
static inline unsigned char v1_text_byte(unsigned seed, size_t i)
{
    static const char line[] = "2026-11-30T22:15:00Z build[4711]: compiling store/read.c "
                               "(warning: none) step %u ok\n";
    return (unsigned char)(line[i % (sizeof line - 1)] + ((i / (sizeof line - 1)) % 7 == seed % 7));
}

/* Byte I of a value that does not compress (xorshift). */
static inline unsigned char v1_noise_byte(unsigned seed, size_t i)
{
    unsigned x = seed * 2654435761u + (unsigned)i * 40503u + 1u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return (unsigned char)(x >> 7);
}

struct v1_item {
    const char *ns, *key;
    size_t len;
    unsigned seed;
    int noise;       /* 1: v1_noise_byte, 0: v1_text_byte */
    const char *tool; /* NULL: none */
};

/* The live entries, in the order written (after "evicted-first"). */
static const struct v1_item v1_live[] = {
    {"default", "build.log", 50000, 1, 0, "bash"},
    {"default", "noise.bin", 9000, 2, 1, NULL},
    {"default", "empty", 0, 3, 0, "cat"},
    {"other", "page.html", 30000, 4, 0, "web_fetch"},
    {"default", "replaced", 700, 6, 0, "bash"},
    {"default", "one-byte", 1, 7, 0, NULL},
};
#define V1_LIVE (sizeof v1_live / sizeof v1_live[0])
/* Written first, 60000 text bytes, evicted by the bound (140000). */
#define V1_EVICTED "evicted-first"
/* Written then removed. */
#define V1_REMOVED "removed"
#define V1_MAX_TOTAL 140000u

#endif
