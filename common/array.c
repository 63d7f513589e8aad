/* array.c -- common_array_grow(). Doubling keeps N pushes at O(N)
 * copies; the size is checked so a huge count cannot wrap. */
#include "common/array.h"

#include <stdint.h>
#include <stdlib.h>

void *common_array_grow(void *v, size_t n, size_t *cap, size_t size, size_t first)
{
    size_t ncap;
    void *nv;
    if (n < *cap)
        return v;
    ncap = *cap ? *cap : (first ? first : 1);
    while (ncap <= n) {
        if (ncap > SIZE_MAX / 2)
            return NULL;
        ncap *= 2;
    }
    if (size && ncap > SIZE_MAX / size)
        return NULL;
    if (!(nv = realloc(v, ncap * size)))
        return NULL;
    *cap = ncap;
    return nv;
}
