/* file.h -- a small file read whole into memory (a policy file, a key
 * list): bounded, so a wrong path cannot make a program read gigabytes. */
#ifndef OFFLOADFS_COMMON_FILE_H
#define OFFLOADFS_COMMON_FILE_H

#include <stddef.h>

/* Reads the file at PATH into *OUT (NUL-terminated, yours: free()), its
 * length into *LEN (may be NULL). Returns 0 or an errno value: what
 * open() or read() said, EISDIR for a directory, EFBIG when it holds more
 * than LIMIT bytes, ENOMEM; *OUT is then NULL. */
int common_file_read(const char *path, size_t limit, char **out, size_t *len);

#endif
