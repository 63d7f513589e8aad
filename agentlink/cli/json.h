/* json.h -- bytes in the CLI's --json output, exactly and as valid UTF-8.
 *
 * cJSON strings are C strings (a NUL ends them) and cJSON copies bytes that
 * are not UTF-8 into its output as they are, so a result holding either
 * cannot go through cJSON_AddStringToObject(). These helpers write such a
 * value themselves:
 * - bytes that are valid UTF-8 (NUL and controls included) become a JSON
 *   string that decodes to exactly those bytes: '"', '\' and the controls
 *   U+0000-U+001F escaped, everything else as it is (readable);
 * - any other bytes become the base64 (RFC 4648, padded) of exactly those
 *   bytes, and the encoding field says so.
 * So a reader decodes VALUE by ENCODING: "utf-8" (the string is the text)
 * or "base64" (decode it for the bytes). Not installed; CLI only. */
#ifndef OFFLOADFS_AGENTLINK_CLI_JSON_H
#define OFFLOADFS_AGENTLINK_CLI_JSON_H

#include <cJSON.h>
#include <stddef.h>

/* Adds to OBJ the field NAME holding the LEN bytes at DATA, and the field
 * ENC_NAME holding "utf-8" or "base64" as above. Returns 0, or ENOMEM
 * (then OBJ may hold neither field). */
int cli_json_add_bytes(cJSON *obj, const char *name, const char *enc_name,
                       const void *data, size_t len);

#endif
