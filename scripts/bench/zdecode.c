/* zdecode.c -- what decoding a compressed result costs, by how it was
 * compressed: FILE cut into frames of FRAME_KIB KiB, each compressed on its
 * own with zstd at LEVEL (and, when given, a minimum match length MML and
 * literals huf or raw), then every frame decoded with one reused context,
 * as the daemon does: once to check the bytes, then RUNS times timed. Prints
 *   ratio decode_seconds_fastest_run (0 when RUNS is 0)
 * For instruction counts rather than the noisy clock, run it with RUNS 0
 * (one pass) under
 *   valgrind --tool=callgrind --toggle-collect=ZSTD_decompressDCtx
 * (doc/benchmark.md, "Compression": why the first read costs what it does).
 *   zdecode FILE LEVEL FRAME_KIB RUNS [MML [huf|raw]] */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_c_literalCompressionMode */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    long n;
    if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)
        && (b = malloc((size_t)n)) && fread(b, 1, (size_t)n, f) == (size_t)n) {
        *len = (size_t)n;
    } else {
        free(b);
        b = NULL;
    }
    if (f)
        fclose(f);
    return b;
}

int main(int argc, char **argv)
{
    size_t len, fsz, nf, pos = 0, *off, *clen;
    unsigned char *in, *st, *out;
    ZSTD_CCtx *cc;
    ZSTD_DCtx *dc;
    double best = 1e9;
    int runs;
    if (argc < 5 || argc > 7 || !(in = slurp(argv[1], &len)))
        return fprintf(stderr, "usage: zdecode FILE LEVEL FRAME_KIB RUNS [MML [huf|raw]]\n"), 2;
    fsz = (size_t)strtoul(argv[3], NULL, 10) << 10;
    runs = atoi(argv[4]);
    nf = (len + fsz - 1) / fsz;
    cc = ZSTD_createCCtx();
    dc = ZSTD_createDCtx();
    st = malloc(ZSTD_compressBound(len) + nf * 64);
    off = malloc(nf * sizeof *off);
    clen = malloc(nf * sizeof *clen);
    out = malloc(fsz);
    if (!fsz || runs < 0 || !cc || !dc || !st || !off || !clen || !out)
        return fprintf(stderr, "zdecode: out of memory or bad arguments\n"), 1;
    ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, atoi(argv[2]));
    if (argc > 5 && atoi(argv[5]))
        ZSTD_CCtx_setParameter(cc, ZSTD_c_minMatch, atoi(argv[5]));
    if (argc > 6)
        ZSTD_CCtx_setParameter(cc, ZSTD_c_literalCompressionMode,
                               strcmp(argv[6], "raw") ? ZSTD_ps_enable : ZSTD_ps_disable);
    for (size_t i = 0; i < nf; i++) {
        size_t n = len - i * fsz < fsz ? len - i * fsz : fsz;
        off[i] = pos;
        clen[i] = ZSTD_compress2(cc, st + pos, ZSTD_compressBound(n), in + i * fsz, n);
        if (ZSTD_isError(clen[i]))
            return fprintf(stderr, "zdecode: %s\n", ZSTD_getErrorName(clen[i])), 1;
        pos += clen[i];
    }
    for (int r = -1; r < runs; r++) { /* run -1 checks the bytes, untimed */
        double t = now_s();
        for (size_t i = 0; i < nf; i++) {
            size_t n = len - i * fsz < fsz ? len - i * fsz : fsz;
            if (ZSTD_decompressDCtx(dc, out, n, st + off[i], clen[i]) != n
                || (r < 0 && memcmp(out, in + i * fsz, n)))
                return fprintf(stderr, "zdecode: frame %zu decodes wrong\n", i), 1;
        }
        t = now_s() - t;
        if (r >= 0 && t < best)
            best = t;
    }
    printf("%.3f %.6f\n", (double)len / (double)pos, runs ? best : 0.0);
    ZSTD_freeCCtx(cc);
    ZSTD_freeDCtx(dc);
    free(in);
    free(st);
    free(off);
    free(clen);
    free(out);
    return 0;
}
