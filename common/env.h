/* env.h -- reading the environment the way every program of the tree
 * does: an empty variable counts as unset (doc/contract.md, "Precedence
 * everywhere"), so VAR= in a unit file or a shell clears a setting. */
#ifndef OFFLOADFS_COMMON_ENV_H
#define OFFLOADFS_COMMON_ENV_H

/* The value of the environment variable NAME, or NULL when it is unset or
 * empty. Points into the environment: valid until it changes (setenv,
 * putenv), as getenv()'s. Cannot fail. */
const char *common_env(const char *name);

#endif
