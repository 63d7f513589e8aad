/* utf8.h -- the one UTF-8 decoder step of common/: how long the sequence
 * at the start of a buffer is, and whether it is valid. */
#ifndef OFFLOADFS_COMMON_UTF8_H
#define OFFLOADFS_COMMON_UTF8_H

#include <stddef.h>

/* The length (1 to 4) of the valid UTF-8 sequence at the start of the N
 * bytes at S (N >= 1), or 0 when it is invalid or cut short: overlong
 * forms, surrogates and code points above U+10FFFF are invalid. The same
 * rule as the store's key check (store_utf8_len()). Cannot fail. */
size_t common_utf8_len(const void *s, size_t n);

#endif
