/* readin.h -- the test drivers' (storectl, tierctl) reading of a value
 * from stdin. Header only, as tests/faults/content.h: every .c file in
 * tests/tools is a program of its own.
 */
#ifndef OFFLOADFS_TEST_READIN_H
#define OFFLOADFS_TEST_READIN_H

#include <stdio.h>
#include <stdlib.h>

/* Reads all of stdin into *BUF (malloc'd; the caller frees it), *LEN bytes.
 * Returns 0, or 1 when memory runs out or stdin fails to read; *BUF may
 * then hold a buffer all the same. */
static inline int tool_read_stdin(char **buf, size_t *len)
{
    size_t cap = 1 << 16, n;
    *len = 0;
    if (!(*buf = malloc(cap)))
        return 1;
    while ((n = fread(*buf + *len, 1, cap - *len, stdin)) > 0) {
        *len += n;
        if (*len == cap) {
            char *b = realloc(*buf, cap *= 2);
            if (!b)
                return 1;
            *buf = b;
        }
    }
    return ferror(stdin) ? 1 : 0;
}

#endif
