/* input.h -- reading put's and offload's input as a stream.
 *
 * A result may be far longer than anything the store keeps (only
 * max_result_bytes of it, its head and tail, is ever stored), and a pipe
 * may never end (put k </dev/zero). So the input is read in pieces: put
 * streams it into an al_cutter (memory about max_result_bytes whatever the
 * length); offload reads a prefix only until the policy's answer is known
 * to be "offload" (then the prefix and the rest go into a cutter), or to
 * the end (a result kept in the conversation is printed whole, so it is
 * read whole: at most what the policy keeps). Past --max-input-bytes the
 * input is refused (CLI_EINPUT) instead of read for ever.
 * Not installed; CLI only. */
#ifndef OFFLOADFS_AGENTLINK_CLI_INPUT_H
#define OFFLOADFS_AGENTLINK_CLI_INPUT_H

#include "agentlink/agentlink.h"
#include "agentlink/internal.h"
#include "common/buf.h"

#include <stdint.h>

/* The default --max-input-bytes: 1 GiB. */
#define CLI_MAX_INPUT_DEFAULT (UINT64_C(1) << 30)

/* Returned when the input passes its max_input bytes. */
#define CLI_EINPUT (-1)

typedef struct cli_input {
    int fd;             /* the file, or stdin */
    int own;            /* 1 when fd is ours to close */
    uint64_t max_input; /* bytes allowed */
    uint64_t total;     /* bytes read so far */
    char *piece;        /* read buffer */
} cli_input;

/* Opens PATH (NULL: stdin) for reading at most MAX_INPUT bytes. Returns 0
 * or an errno value (EISDIR for a directory, ENOMEM); IN is then closed. */
int cli_input_open(cli_input *in, const char *path, uint64_t max_input);

/* Releases IN (closes the file it opened). */
void cli_input_close(cli_input *in);

/* Reads the rest of IN into C. Returns 0 at the end of the input,
 * CLI_EINPUT past max_input, an errno value of read(), or an error of
 * al_cutter_add(). */
int cli_input_to_cutter(cli_input *in, al_cutter *c);

/* Reads IN into B until its end, or until the policy's rule for a tool
 * (KIND and LIMIT, from al_policy_decide()) is sure to offload what is
 * read, whatever follows: *SURE is then 1 and B holds the prefix read so
 * far. Returns as cli_input_to_cutter() (ENOMEM when B failed). */
int cli_input_prefix(cli_input *in, int kind, uint64_t limit, common_buf *b, int *sure);

#endif
