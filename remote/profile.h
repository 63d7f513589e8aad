/* profile.h -- reading the AWS shared credentials and config files. */
#ifndef OFFLOADFS_REMOTE_PROFILE_H
#define OFFLOADFS_REMOTE_PROFILE_H

#include <stddef.h>

/* A key to look up and, after remote_profile_read(), its value (malloc'd,
 * yours to free) or NULL. A value already set is left alone, so reading the
 * credentials file and then the config file keeps the first. */
typedef struct profile_kv {
    const char *key;
    char *value;
} profile_kv;

/* Fills the values of KV[0..NKV) from section SECTION of the INI file at
 * PATH. *FOUND is 1 when the section exists. A missing file is not an
 * error (*FOUND 0). Returns 0, or an errno value (EACCES, EIO, ENOMEM). */
int remote_profile_read(const char *path, const char *section, profile_kv *kv, size_t nkv, int *found);

/* The path of an AWS file: $ENV when set, else ~/.aws/FILE. A new string
 * (malloc), or NULL without HOME or memory. */
char *remote_profile_path(const char *env, const char *file);

#endif
