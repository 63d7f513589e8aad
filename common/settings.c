/* settings.c -- the one resolution of the store, the namespace and the
 * mount: flag > environment > policy file > default (doc/contract.md,
 * "Precedence everywhere"). The library's handles, the CLI, the MCP proxy
 * and the daemon all call common_settings_resolve(), so a result written by
 * one is where the others read it. */
#include "common/settings.h"
#include "common/env.h"

#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *join(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    char *out = malloc(na + nb + 1);
    if (out) {
        memcpy(out, a, na);
        memcpy(out + na, b, nb + 1);
    }
    return out;
}

/* The default store directory (doc/contract.md) into *OUT (yours). */
static int default_dir(char **out)
{
    const char *x;
    *out = NULL;
    if (geteuid() == 0) {
        *out = strdup("/var/lib/offloadfs");
    } else if ((x = common_env("XDG_STATE_HOME")) && x[0] == '/') {
        *out = join(x, "/offloadfs");
    } else {
        const char *home = common_env("HOME");
        if (!home) {
            struct passwd *pw = getpwuid(geteuid());
            home = pw && pw->pw_dir && *pw->pw_dir ? pw->pw_dir : NULL;
        }
        if (!home)
            return EINVAL;
        *out = join(home, "/.local/state/offloadfs");
    }
    return *out ? 0 : ENOMEM;
}

/* One setting: FLAG, else the environment variable NAME, else FROM_POLICY
 * (may be NULL), else DEF (may be NULL: *FROM says COMMON_FROM_DEFAULT). */
static const char *pick(const char *flag, const char *name, const char *from_policy,
                        const char *def, int *from)
{
    const char *v;
    if (flag) {
        *from = COMMON_FROM_FLAG;
        return flag;
    }
    if (name && (v = common_env(name))) {
        *from = COMMON_FROM_ENV;
        return v;
    }
    if (from_policy) {
        *from = COMMON_FROM_POLICY;
        return from_policy;
    }
    *from = COMMON_FROM_DEFAULT;
    return def;
}

int common_settings_resolve(common_settings *s, const char *dir, const char *ns, const char *mount,
                            const common_policy *pol)
{
    memset(s, 0, sizeof *s);
    s->ns = pick(ns, "OFFLOADFS_NAMESPACE", common_policy_namespace(pol), COMMON_DEFAULT_NAMESPACE,
                 &s->ns_from);
    s->mount = pick(mount, "OFFLOADFS_MOUNT", common_policy_mount(pol), COMMON_DEFAULT_MOUNT,
                    &s->mount_from);
    s->store = pick(dir, "OFFLOADFS_STORE", NULL, NULL, &s->store_from);
    if (s->store)
        return 0;
    return default_dir(&s->owned);
}

const char *common_settings_store(const common_settings *s)
{
    return s->store ? s->store : s->owned;
}

void common_settings_release(common_settings *s)
{
    free(s->owned);
    s->owned = NULL;
}
