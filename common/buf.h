/* buf.h -- byte buffers: common_buf, which grows, and common_fixbuf, which
 * fills memory the caller owns; each with a sink (the callback shape of
 * the remote tier's ranged GETs and of al_store_get_stream()).
 *
 * Caveats:
 * - A common_buf that failed to grow stays failed: every later add is a
 *   no-op and FAILED stays set, so a caller checks once, at the end (or
 *   lets common_buf_detach() say ENOMEM).
 * - A zeroed common_buf is empty and ready ({0}); its P is NULL until the
 *   first add and, once it is not, always NUL-terminated.
 * - Not thread-safe: one buffer, one thread at a time. */
#ifndef OFFLOADFS_COMMON_BUF_H
#define OFFLOADFS_COMMON_BUF_H

#include <stddef.h>

typedef struct common_buf {
    char *p;          /* LEN bytes and a NUL; NULL while nothing was added */
    size_t len, cap;
    int failed;       /* an allocation failed: the contents are incomplete */
} common_buf;

/* Appends the N bytes at DATA (N 0: nothing). */
void common_buf_add(common_buf *b, const void *data, size_t n);
/* Appends the string S (without its NUL). */
void common_buf_adds(common_buf *b, const char *s);
/* Appends the byte C. */
void common_buf_addc(common_buf *b, char c);
/* Appends printf(FMT, ...). */
void common_buf_addf(common_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Appends S quoted for a POSIX shell when it needs it ('...', with ' as
 * '\''); a word of only safe characters as it is. */
void common_buf_add_shell(common_buf *b, const char *s);

/* Appends the N bytes at S for a one-line message: bytes that are control
 * characters or invalid UTF-8 are written as \xHH, a backslash as \\. */
void common_buf_add_printable(common_buf *b, const char *s, size_t n);

/* Hands the NUL-terminated contents to the caller (*OUT, yours: free();
 * OUTLEN, may be NULL, gets their length) and resets B to empty. Returns 0
 * or ENOMEM (an add had failed: B is released and *OUT is NULL). */
int common_buf_detach(common_buf *b, char **out, size_t *outlen);

/* Frees what B holds and resets it to empty (FAILED is kept). */
void common_buf_release(common_buf *b);

/* A sink into the common_buf ARG: appends the N bytes at DATA. Returns 0,
 * or ENOMEM once the buffer has failed (the producer stops). */
int common_buf_sink(void *arg, const void *data, size_t n);

/* CAP bytes at P that the caller owns, LEN of them filled. */
typedef struct common_fixbuf {
    char *p;
    size_t len, cap;
} common_fixbuf;

/* A sink into the common_fixbuf ARG: copies the N bytes at DATA after the
 * LEN filled. Returns 0, or -1 when they do not fit in what is left
 * (nothing is copied; the producer stops). */
int common_fixbuf_sink(void *arg, const void *data, size_t n);

#endif
