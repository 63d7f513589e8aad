/* error.h -- the error codes of common/ (libcommon.a, the leaf every
 * program of the tree links) and their text.
 *
 * Errors: every function of common/ returns 0, a positive errno value, or
 * one of the codes below, from the range the module owns
 * (doc/development.md, "Error codes"): COMMON_ERR_BASE = -35000. A program
 * that has codes of its own translates these where it calls common/
 * (agentlink/policy.c makes COMMON_ECONFIG AL_ECONFIG). */
#ifndef OFFLOADFS_COMMON_ERROR_H
#define OFFLOADFS_COMMON_ERROR_H

#define COMMON_ERR_BASE (-35000)
#define COMMON_ECONFIG  (COMMON_ERR_BASE - 1) /* policy file refused (its message says why) */

/* A static description of ERR: a COMMON_E* code, an errno value (as
 * strerror()), or "success" for 0. Never NULL; cannot fail. */
const char *common_strerror(int err);

#endif
