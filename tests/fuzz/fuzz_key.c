/* fuzz_key.c -- libFuzzer target: agentlink's key rules and key derivation.
 *
 * For any raw tool call id (any bytes, NUL included):
 * - al_key_derive() succeeds, twice with the same answer (deterministic);
 * - the key passes the key rules (al_key_check and store_name_check agree);
 * - an id that is a valid key of at most 200 bytes and not of the derived
 *   form is kept as it is; any other becomes a readable prefix of at most
 *   100 bytes (no leading '.') plus '~' and the first 16 hex digits of the
 *   id's SHA-256, computed here independently of the prefix logic;
 * - two different ids seen in one run never share a key: a small table of
 *   recent (key, id) pairs is kept and checked.
 * The key rules themselves: store_name_check() on the raw bytes agrees with
 * an independent reading of the rules in doc/contract.md. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agentlink/agentlink.h"
#include "agentlink/internal.h"
#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The key rules of doc/contract.md, written from the text, not from store/name.c. */
static int rules_ok(const unsigned char *s, size_t n)
{
    if (n == 0 || n > 255 || s[0] == '.')
        return 0;
    for (size_t i = 0; i < n;) {
        size_t q = store_utf8_len(s + i, n - i);
        if (q == 0 || s[i] < 0x20 || s[i] == 0x7f || s[i] == '/')
            return 0;
        i += q;
    }
    return 1;
}

static int derived_form(const char *k, size_t n)
{
    if (n < AL_KEY_HASH_LEN || k[n - AL_KEY_HASH_LEN] != '~')
        return 0;
    for (size_t i = n - 16; i < n; i++)
        if (!((k[i] >= '0' && k[i] <= '9') || (k[i] >= 'a' && k[i] <= 'f')))
            return 0;
    return 1;
}

/* Recent (key, id) pairs: open addressing on a hash of the key. */
#define SEEN_SLOTS 4096u
struct seen {
    char *key;
    unsigned char *id;
    size_t idlen;
};
static struct seen seen[SEEN_SLOTS];
static unsigned seen_count;

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void seen_reset(void)
{
    for (unsigned i = 0; i < SEEN_SLOTS; i++) {
        free(seen[i].key);
        free(seen[i].id);
        seen[i].key = NULL;
        seen[i].id = NULL;
    }
    seen_count = 0;
}

static void seen_check(const char *key, const uint8_t *id, size_t idlen)
{
    unsigned i = (unsigned)(fnv(key) % SEEN_SLOTS);
    if (seen_count >= SEEN_SLOTS / 2)
        seen_reset();
    for (; seen[i].key; i = (i + 1) % SEEN_SLOTS) {
        if (strcmp(seen[i].key, key) != 0)
            continue;
        if (seen[i].idlen != idlen || memcmp(seen[i].id, id, idlen) != 0)
            __builtin_trap(); /* two different ids, one key */
        return;
    }
    seen[i].key = strdup(key);
    seen[i].id = malloc(idlen ? idlen : 1);
    if (!seen[i].key || !seen[i].id)
        __builtin_trap();
    memcpy(seen[i].id, id, idlen);
    seen[i].idlen = idlen;
    seen_count++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *k1 = NULL, *k2 = NULL, hex[65];
    size_t n;
    int valid = rules_ok(data, size);

    /* The rules: the store's check agrees with doc/contract.md's text, and the
     * C-string check agrees whenever the bytes hold no NUL. */
    if ((store_name_check((const char *)data, size) == 0) != valid)
        __builtin_trap();
    if (!memchr(data, '\0', size)) {
        char *z = malloc(size + 1);
        if (!z)
            return 0;
        memcpy(z, data, size);
        z[size] = '\0';
        if ((al_key_check(z) == 0) != valid)
            __builtin_trap();
        free(z);
    }

    if (al_key_derive(data, size, &k1) != 0 || al_key_derive(data, size, &k2) != 0)
        __builtin_trap();
    if (strcmp(k1, k2) != 0) /* deterministic */
        __builtin_trap();
    n = strlen(k1);
    if (al_key_check(k1) != 0 || n > STORE_NAME_MAX)
        __builtin_trap();
    if (valid && size <= AL_KEY_ASIS_MAX && !derived_form((const char *)data, size)) {
        if (n != size || memcmp(k1, data, size) != 0) /* kept as it is */
            __builtin_trap();
    } else {
        al_sha256_hex(data, size, hex);
        if (!derived_form(k1, n) || memcmp(k1 + n - 16, hex, 16) != 0
            || n - AL_KEY_HASH_LEN > AL_KEY_PREFIX_MAX || k1[0] == '.')
            __builtin_trap();
    }
    seen_check(k1, data, size);
    al_free(k1);
    al_free(k2);
    return 0;
}
