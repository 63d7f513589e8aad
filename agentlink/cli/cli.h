/* cli.h -- what the files of build/agentlink, the command line over
 * libagentlink, share. Not installed.
 *
 * The command is a table (main.c): each entry names a command, the
 * function that runs it, how many arguments it takes and which options.
 * A command's function gets the parsed options and its own arguments and
 * returns the exit code; it reports every failure itself, in one line on
 * stderr (report.c), and writes data (or --json output) to stdout.
 *
 * Exit codes (doc/contract.md): 0 ok, 1 failure, 2 bad usage or invalid
 * input, 3 no such key, 4 key evicted; 5 done on this host but not on the
 * store's remote (a result pending upload, a tombstone not written:
 * doc/remote.md). */
#ifndef OFFLOADFS_AGENTLINK_CLI_CLI_H
#define OFFLOADFS_AGENTLINK_CLI_CLI_H

#include "agentlink/agentlink.h"
#include "agentlink/cli/input.h"
#include "agentlink/cli/json.h"
#include "agentlink/internal.h"

#include <cJSON.h>
#include <stddef.h>
#include <stdint.h>

enum { EX_OK = 0, EX_FAIL = 1, EX_USAGE = 2, EX_NOKEY = 3, EX_EVICTED = 4, EX_REMOTE = 5,
       EX_UNREACHABLE = 6 };

/* Which command may take which option, as bits of (opt - OPT_TOOL) in
 * main.c. */
#define O_TOOL (1u << 0)
#define O_FILE (1u << 1)
#define O_CALL (1u << 2)
#define O_MAXT (1u << 3)
#define O_MAXR (1u << 4)
#define O_KEEP (1u << 5)
#define O_MAXI (1u << 6)
#define O_COMP (1u << 7)
#define O_PROM (1u << 8)
#define O_REMO (1u << 9)  /* init --remote URL */
#define O_GCRM (1u << 10) /* gc --remote */
#define O_AGE  (1u << 11) /* gc --max-age SECONDS */
#define O_MAXB (1u << 12) /* gc --max-bytes N */

/* The command line, parsed: NULL or 0 for what was not given. The strings
 * point into argv. */

typedef struct opts {
    const char *store, *ns, *mount, *config, *tool, *file, *call_id;
    const char *max_total, *max_result, *max_input, *compression;
    const char *remote, *max_age, *max_bytes;
    int json, keep, prometheus;
    unsigned given; /* O_* of command-specific options seen */
} opts;

/* ---- the commands (one table entry each in main.c) -------------------------
 * Each runs with the options O and its ARGC arguments ARGV (the count the
 * table allows) and returns the exit code. */
int cmd_init(opts *o, int argc, char **argv);   /* cmd_store.c */
int cmd_stats(opts *o, int argc, char **argv);  /* cmd_store.c */
int cmd_put(opts *o, int argc, char **argv);    /* cmd_write.c */
int cmd_offload(opts *o, int argc, char **argv); /* cmd_write.c */
int cmd_key(opts *o, int argc, char **argv);    /* cmd_read.c */
int cmd_get(opts *o, int argc, char **argv);    /* cmd_read.c */
int cmd_ls(opts *o, int argc, char **argv);     /* cmd_read.c */
int cmd_stat(opts *o, int argc, char **argv);   /* cmd_read.c */
int cmd_rm(opts *o, int argc, char **argv);     /* cmd_remove.c */
int cmd_drop(opts *o, int argc, char **argv);   /* cmd_remove.c */
int cmd_import(opts *o, int argc, char **argv); /* import.c */
int cmd_sync(opts *o, int argc, char **argv);   /* cmd_sync.c */
int cmd_gc(opts *o, int argc, char **argv);     /* cmd_gc.c */
/* agentlink mcp-proxy (mcp_proxy.c) parses the whole command line ARGC,
 * ARGV itself: the server's arguments must never be read as agentlink's.
 * Returns the exit code (the server's, or 1, 2, 126, 127). */
int cmd_mcp_proxy(int argc, char **argv);

/* ---- messages (report.c) ---------------------------------------------------- */

/* S (may be NULL: "") quoted for a message: controls and invalid UTF-8
 * escaped. Valid until four more calls (rotating slots); "?" when out of
 * memory. */
const char *cli_quote(const char *s);

/* Writes "agentlink: " and the formatted message, then a newline, to
 * stderr. */
void cli_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* As cli_msg(), then the line pointing to --help. Returns EX_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* With ON (--json), cli_report() of AL_ENOSTORE also prints
 * {"error":"no_store"} on stdout: programs tell a store not made yet (an
 * empty one to them) from a failure by that, not by the message. */
void cli_report_json(int on);

/* Reports RC (an AL_E* code or errno value) from a call about key KEY
 * (may be NULL) in handle H (may be NULL). Returns the exit code. */
int cli_report(int rc, const al_store *h, const char *key);

/* Reports that KEY was found evicted or removed (E says when and why).
 * Returns EX_EVICTED. */
int cli_report_gone(const char *key, const al_entry *e);

/* Writes LEN bytes at DATA to stdout, whole. Returns EX_OK, or EX_FAIL
 * after a message. */
int cli_write_all(const void *data, size_t len);

/* ---- input (input.c) -------------------------------------------------------- */

/* Reads FD to its end, or to LIMIT + 1 bytes (one more tells "too big").
 * Returns 0 or an errno value; *OUT is malloc'd (yours, NUL-terminated),
 * *LEN its length. */
int cli_read_fd(int fd, uint64_t limit, char **out, size_t *len);

/* The input's name in messages: "stdin" or "file 'PATH'" (static: valid
 * until the next call). */
const char *cli_input_name(const char *path);

/* --max-input-bytes, or its default, into *MAX. Returns EX_OK, or
 * EX_USAGE after a message. */
int cli_input_limit(const opts *o, uint64_t *max);

/* Opens the input of put/offload, PATH (NULL: stdin), into IN
 * (cli_input_close() it). Returns EX_OK, or the exit code after a message. */
int cli_input_begin(const opts *o, const char *path, cli_input *in);

/* The message and exit code for RC from reading IN (PATH or stdin);
 * WHAT says what did not happen ("nothing was stored"). */
int cli_input_error(const cli_input *in, const char *path, int rc, const char *what);

/* ---- --json output (json.c) ------------------------------------------------- */

/* Prints J (may be NULL: out of memory) on one line to stdout and deletes
 * it. Returns the exit code. */
int cli_print_json(cJSON *j);

/* A new object describing entry E under KEY (yours, cJSON_Delete()), or
 * NULL when out of memory. */
cJSON *cli_entry_json(const char *key, const al_entry *e);

/* ---- set-up (setup.c) ------------------------------------------------------- */

/* Loads the offload policy of --config (else $OFFLOADFS_CONFIG, else the
 * built-in one) into *POL (yours, al_policy_free()). Returns the exit code,
 * after a message on failure. */
int cli_load_policy(const opts *o, al_policy **pol);

/* Opens the store into *H (yours) with the precedence flag > environment >
 * policy POL > default, the fault guard armed for it. Returns the exit
 * code, after a message naming the setting at fault on failure. */
int cli_open_store(const opts *o, const al_policy *pol, al_store **h);

/* Loads the policy into *POL and opens the store into *H (yours, both),
 * with the fault guard armed for it. Returns the exit code, after a
 * message naming the setting at fault on failure (then both are NULL). */
int cli_setup(const opts *o, al_policy **pol, al_store **h);

/* 0 when the handle's store exists, else AL_ENOSTORE (or why it cannot be
 * read): the commands that only read or remove fail on a missing store,
 * all in the same way (cli_report()), instead of each in its own. */
int cli_need_store(al_store *h);

#endif
