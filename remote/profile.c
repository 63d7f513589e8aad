/* profile.c -- the AWS shared files (~/.aws/credentials, ~/.aws/config):
 * INI sections of "key = value" lines. The credentials file names a
 * section after the profile ("[dev]"), the config file "[profile dev]"
 * (but "[default]"). Only what remote_open() needs is read. */
#include "remote/profile.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* 1 when the section header line S (trimmed, "[...]") names SECTION. */
static int section_is(const char *s, const char *section)
{
    size_t n = strlen(s);
    if (n < 2 || s[n - 1] != ']')
        return 0;
    char buf[512];
    if (n - 2 >= sizeof buf)
        return 0;
    memcpy(buf, s + 1, n - 2);
    buf[n - 2] = '\0';
    return strcmp(trim(buf), section) == 0;
}

int remote_profile_read(const char *path, const char *section, profile_kv *kv, size_t nkv, int *found)
{
    *found = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? 0 : errno;
    char *line = NULL;
    size_t cap = 0;
    int in = 0, rc = 0;
    while (getline(&line, &cap, f) >= 0) {
        char *s = trim(line);
        if (*s == '#' || *s == ';' || *s == '\0')
            continue;
        if (*s == '[') {
            in = section_is(s, section);
            *found |= in;
            continue;
        }
        char *eq = strchr(s, '=');
        if (!in || !eq)
            continue;
        *eq = '\0';
        char *k = trim(s), *v = trim(eq + 1);
        for (size_t i = 0; i < nkv; i++) {
            if (strcmp(kv[i].key, k) != 0 || kv[i].value)
                continue;
            kv[i].value = strdup(v);
            if (!kv[i].value)
                rc = ENOMEM;
        }
    }
    if (ferror(f) && rc == 0)
        rc = EIO;
    free(line);
    fclose(f);
    return rc;
}

char *remote_profile_path(const char *env, const char *file)
{
    const char *p = getenv(env);
    if (p && *p)
        return strdup(p);
    const char *home = getenv("HOME");
    if (!home || !*home)
        return NULL;
    size_t n = strlen(home) + strlen(file) + 8;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%s/.aws/%s", home, file);
    return out;
}
