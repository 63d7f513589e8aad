/* framesize.c -- how the frame size of compressed results was chosen:
 * ratio and speed of zstd over FILE cut into independent frames of 4 KiB to
 * 1 MiB, at the levels worth considering. One line per (level, frame size):
 *   level frame_bytes ratio compress_MBps decode_us_per_frame
 * decode_us_per_frame is the cost a random small pread pays (one frame
 * decoded). Built by make with the benchmarks; run by hand:
 *   scripts/bench/corpus.sh /tmp/c 64M && build/bench/framesize /tmp/c */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zstd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    static const int levels[] = {-3, -1, 1, 3, 6};
    FILE *f = argc == 2 ? fopen(argv[1], "rb") : NULL;
    unsigned char *in, *z, *back;
    size_t n;
    if (!f)
        return fprintf(stderr, "usage: framesize FILE\n"), 2;
    fseek(f, 0, SEEK_END);
    n = (size_t)ftell(f);
    rewind(f);
    in = malloc(n);
    z = malloc(ZSTD_compressBound(1 << 20));
    back = malloc(1 << 20);
    if (!in || !z || !back || fread(in, 1, n, f) != n)
        return 1;
    fclose(f);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_DCtx *dc = ZSTD_createDCtx();
    for (size_t l = 0; l < sizeof levels / sizeof *levels; l++)
        for (size_t fs = 4096; fs <= (1u << 20); fs *= 2) {
            size_t out = 0, frames = 0;
            double ct = 0, dt = 0;
            for (size_t off = 0; off < n; off += fs, frames++) {
                size_t m = n - off < fs ? n - off : fs;
                double t0 = now_s();
                size_t c = ZSTD_compressCCtx(cc, z, ZSTD_compressBound(fs), in + off, m, levels[l]);
                double t1 = now_s();
                if (ZSTD_isError(c))
                    return 1;
                if (ZSTD_isError(ZSTD_decompressDCtx(dc, back, fs, z, c)))
                    return 1;
                dt += now_s() - t1;
                ct += t1 - t0;
                out += c < m ? c : m; /* raw when it does not shrink */
            }
            printf("%d %zu %.2f %.0f %.1f\n", levels[l], fs, (double)n / (double)out,
                   (double)n / ct / 1e6, dt / (double)frames * 1e6);
        }
    ZSTD_freeCCtx(cc);
    ZSTD_freeDCtx(dc);
    free(in);
    free(z);
    free(back);
    return 0;
}
