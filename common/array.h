/* array.h -- room for one more element at the end of a growable array
 * (the push that the library, the command and the proxy each wrote out). */
#ifndef OFFLOADFS_COMMON_ARRAY_H
#define OFFLOADFS_COMMON_ARRAY_H

#include <stddef.h>

/* Makes room for element N of the array V of *CAP elements of SIZE bytes
 * (V may be NULL with *CAP 0): when N < *CAP, returns V as it is;
 * otherwise reallocates it to twice *CAP elements (FIRST when *CAP is 0),
 * updates *CAP and returns the new array (V is then no longer valid).
 * Returns NULL when out of memory or the size overflows: V and *CAP are
 * then untouched and still yours. Use:
 *     item *nv = common_array_grow(a->v, a->n, &a->cap, sizeof *a->v, 16);
 *     if (!nv) return ENOMEM;
 *     a->v = nv;
 *     a->v[a->n++] = x; */
void *common_array_grow(void *v, size_t n, size_t *cap, size_t size, size_t first);

#endif
