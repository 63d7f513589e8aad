/* fuzz_record.c -- libFuzzer target: the store's record decoders and the
 * name rules must accept or refuse any bytes without reading out of bounds.
 * The first byte picks the decoder; the rest is the record. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "store/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rec_state s;
    rec_tomb t;
    store_entry e;
    uint64_t o, n;
    const char *name, *ns, *key;
    size_t nl, nsl, kl;
    if (size < 1)
        return 0;
    const uint8_t *p = data + 1;
    size_t len = size - 1;
    switch (data[0] % 6) {
    case 0:
        if (store_rec_state_decode(p, len, &s) == 0 && s.max_result > s.max_total)
            __builtin_trap();
        break;
    case 1:
        if (store_rec_entry_decode(p, len, &e) == 0) {
            unsigned char buf[REC_ENTRY_FIXED + STORE_TOOL_MAX];
            size_t l = store_rec_entry_encode(&e, buf);
            if (l != len || memcmp(buf, p, l)) /* decode is exact: re-encoding gives the input */
                __builtin_trap();
        }
        break;
    case 2:
        store_rec_tomb_decode(p, len, &t);
        break;
    case 3:
        if (store_rec_change_decode(p, len, &o, &n, &name, &nl) == 0
            && store_rec_name_split(name, nl, &ns, &nsl, &key, &kl) == 0
            && (nsl + kl + 1 != nl || memchr(key, 0, kl)))
            __builtin_trap();
        break;
    case 4:
        if (store_rec_name_split((const char *)p, len, &ns, &nsl, &key, &kl) == 0
            && (nsl == 0 || kl == 0 || nsl > STORE_NAME_MAX || kl > STORE_NAME_MAX))
            __builtin_trap();
        break;
    default:
        if (store_name_check((const char *)p, len) == 0
            && (len == 0 || len > STORE_NAME_MAX || memchr(p, '/', len) || p[0] == '.'))
            __builtin_trap();
        break;
    }
    return 0;
}
