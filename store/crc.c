/* crc.c -- CRC-32C (Castagnoli) of chunk payloads, so a flipped bit in the
 * data file is an error and never wrong bytes. Uses the SSE4.2 instruction
 * where the CPU has it (8 bytes a step), a table otherwise. */
#include "store/record.h"

#include <pthread.h>
#include <string.h>

static uint32_t table[256];

static void table_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
        table[i] = c;
    }
}

static uint32_t crc_table(uint32_t crc, const unsigned char *p, size_t n)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, table_init);
    while (n--)
        crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc,
                                                         const unsigned char *p, size_t n)
{
    uint64_t c = crc;
    for (; n >= 8; n -= 8, p += 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
    }
    crc = (uint32_t)c;
    for (; n; n--, p++)
        crc = __builtin_ia32_crc32qi(crc, *p);
    return crc;
}
#endif

uint32_t store_rec_crc32c(const void *data, size_t n)
{
    uint32_t crc = 0xffffffffu;
#if defined(__x86_64__)
    if (__builtin_cpu_supports("sse4.2"))
        return ~crc_hw(crc, data, n);
#endif
    return ~crc_table(crc, data, n);
}
