/* fuzz_verify.c -- libFuzzer target: a data.mdb that the page check
 * (store/verify.c) accepts must never crash the store that then uses it.
 *
 * At start a small real store is made (values inside leaves and on
 * overflow pages, a removed key, a tombstone) and its data.mdb kept as an
 * image. Each input is a list of edits, 5 bytes each: a 32-bit offset into
 * the image (taken modulo its size) and a byte to XOR there. The edited
 * image is written as data.mdb, then opened with STORE_VERIFY; when the
 * check accepts it, every key is listed and read, one is written and one
 * removed. Any crash is a page the check let through. */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], datafile[96];
static unsigned char *image;
static size_t image_len;

static void die(const char *what, int rc)
{
    fprintf(stderr, "fuzz_verify: %s: %s\n", what, store_strerror(rc));
    exit(1);
}

static void put(store *st, const char *key, size_t len, unsigned seed)
{
    unsigned char *b = malloc(len);
    for (size_t i = 0; i < len; i++)
        b[i] = (unsigned char)(seed * 37u + i);
    int rc = store_put(st, "ns", key, b, len, NULL, NULL);
    free(b);
    if (rc)
        die("put", rc);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    store *st;
    FILE *f;
    long n;
    int rc;
    (void)argc;
    (void)argv;
    snprintf(dir, sizeof dir, "/tmp/fuzz_verify.XXXXXX");
    if (!mkdtemp(dir))
        exit(1);
    snprintf(datafile, sizeof datafile, "%s/data.mdb", dir);
    if ((rc = store_open(&st, dir, STORE_CREATE | STORE_NOSYNC)))
        die("open", rc);
    put(st, "small", 40, 1);
    put(st, "leaf", 1500, 2);
    put(st, "page", 4000, 3);
    put(st, "pages", 9000, 4);
    put(st, "gone", 100, 5);
    if ((rc = store_remove(st, "ns", "gone")))
        die("remove", rc);
    put(st, "page", 3000, 6); /* a replaced value: freed pages */
    store_close(st);
    if (!(f = fopen(datafile, "rb")) || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0)
        exit(1);
    image_len = (size_t)n;
    image = malloc(image_len);
    rewind(f);
    if (fread(image, 1, image_len, f) != image_len)
        exit(1);
    fclose(f);
    return 0;
}

static int list_one(const char *key, size_t keylen, const store_entry *e, void *ctx)
{
    void *buf;
    size_t len;
    (void)keylen;
    (void)e;
    if (store_get(ctx, "ns", key, &buf, &len, NULL, NULL) == 0)
        free(buf);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *img = malloc(image_len);
    store *st;
    int fd;
    memcpy(img, image, image_len);
    for (size_t i = 0; i + 5 <= size && i < 5 * 16; i += 5) {
        uint32_t off;
        memcpy(&off, data + i, 4);
        img[off % image_len] ^= data[i + 4];
    }
    fd = open(datafile, O_WRONLY | O_TRUNC);
    if (fd < 0 || write(fd, img, image_len) != (ssize_t)image_len)
        exit(1);
    close(fd);
    free(img);
    if (store_open(&st, dir, STORE_NOSYNC | STORE_VERIFY) == 0) {
        store_stats s;
        store_list(st, "ns", NULL, list_one, st);
        store_stats_get(st, &s);
        store_put(st, "ns", "new", "x", 1, NULL, NULL);
        store_remove(st, "ns", "leaf");
        store_close(st);
    }
    return 0;
}
