/* setup.c -- what every command that reaches the store does first: load
 * the offload policy, arm the fault guard, open the store. */
#include "agentlink/cli/cli.h"
#include "common/settings.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_load_policy(const opts *o, al_policy **pol)
{
    char *err = NULL;
    int rc = al_policy_load(pol, o->config ? o->config : NULL, &err);
    if (rc == AL_ECONFIG) {
        cli_msg("%s; nothing was written", err ? err : "config refused");
        al_free(err);
        return EX_USAGE;
    }
    if (rc) {
        cli_msg("cannot load the offload policy: %s", al_strerror(rc));
        return EX_FAIL;
    }
    return EX_OK;
}

/* ---- fault guard -------------------------------------------------------
 * Each command is a process of its own, so it opens the store with the
 * quick page check (al_store_open_checked(..., 0), not the walk of every
 * page al_store_open makes): a damaged page deeper in a tree can
 * still stop LMDB with SIGSEGV, SIGBUS, SIGFPE or an assertion (SIGABRT). Then the
 * handler prints what happened, in the words of STORE_ECORRUPT, and exits
 * 1; a write transaction that did not commit leaves the store as it was. */

static char guard_msg[1024]; /* the message up to the signal's name */

static void guard_fault(int sig)
{
    const char *name = sig == SIGBUS    ? "SIGBUS"
                       : sig == SIGABRT ? "SIGABRT"
                       : sig == SIGFPE  ? "SIGFPE"
                                        : "SIGSEGV";
    static const char tail[] = "); no change was committed\n";
    /* Best effort: there is nothing else to do when stderr fails. */
    if (write(STDERR_FILENO, guard_msg, strlen(guard_msg)) >= 0
        && write(STDERR_FILENO, name, strlen(name)) >= 0)
        (void)!write(STDERR_FILENO, tail, sizeof tail - 1);
    _exit(EX_FAIL);
}

/* Arms the guard for the store in DIR (NULL: the default one). */
static void guard_arm(const char *dir)
{
    struct sigaction sa = {.sa_handler = guard_fault};
    snprintf(guard_msg, sizeof guard_msg,
             "agentlink: store '%s': %s (a damaged page stopped LMDB: ", dir ? dir : "(default)",
             al_strerror(AL_ECORRUPT));
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = (int)SA_RESETHAND;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGABRT, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);
}

/* Opens the store with the settings common_settings_resolve() picks (flag >
 * environment > policy file > default), with messages that name the
 * setting at fault. */
int cli_open_store(const opts *o, const al_policy *pol, al_store **h)
{
    common_settings set;
    int ex = EX_FAIL, rc;

    common_settings_resolve(&set, o->store, o->ns, o->mount, al_policy_common(pol)); /* failures: below */
    guard_arm(set.store);
    /* NULL when no default store was found: the open says why, after it
     * checked the namespace and the mount. */
    rc = al_store_open_checked(h, common_settings_store(&set), set.ns, set.mount, pol, 0);
    if (rc == 0) {
        guard_arm(al_store_dir(*h));
        ex = EX_OK;
    } else if (al_err_is_name(rc)) {
        cli_msg("namespace '%s' %s", cli_quote(set.ns), al_strerror(rc));
        ex = EX_USAGE;
    } else if (rc == AL_EMOUNT) {
        cli_msg("mount '%s' is not an absolute path", cli_quote(set.mount));
        ex = EX_USAGE;
    } else if (rc == EINVAL && set.store_from == COMMON_FROM_DEFAULT) {
        cli_msg("cannot find a default store: HOME is not set; use --store DIR");
        ex = EX_USAGE;
    } else {
        cli_msg("cannot open store '%s': %s", cli_quote(set.store ? set.store : "(default)"),
                al_strerror(rc));
    }
    common_settings_release(&set);
    return ex;
}

/* Loads the policy (for namespace and mount) and opens the store. */
int cli_setup(const opts *o, al_policy **pol, al_store **h)
{
    int ex = cli_load_policy(o, pol);
    if (ex == EX_OK && (ex = cli_open_store(o, *pol, h)) != EX_OK) {
        al_policy_free(*pol);
        *pol = NULL;
    }
    return ex;
}

/* 0 when the handle's store exists, else AL_ENOSTORE (or why it cannot be
 * read): the commands that only read or remove fail on a missing store,
 * all in the same way (cli_report()), instead of each in its own. */
int cli_need_store(al_store *h)
{
    al_stats s;
    return al_store_stats(h, &s);
}
