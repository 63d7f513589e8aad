/* name.c -- the key and namespace rules, and the store's error texts. */
#include "store/store.h"
#include "common/utf8.h"

#include <string.h>

/* The rule is common/'s (common_utf8_len()); the store keeps its name for
 * the callers of store.h. */
size_t store_utf8_len(const void *p, size_t n)
{
    return common_utf8_len(p, n);
}

int store_name_check(const char *name, size_t len)
{
    const unsigned char *s = (const unsigned char *)name;
    if (len == 0)
        return STORE_ENAME_EMPTY;
    if (len > STORE_NAME_MAX)
        return STORE_ENAME_LONG;
    for (size_t i = 0; i < len; i++)
        if (s[i] < 0x20 || s[i] == 0x7f)
            return STORE_ENAME_CTRL;
    if (memchr(name, '/', len))
        return STORE_ENAME_SLASH;
    if (s[0] == '.')
        return STORE_ENAME_DOT;
    for (size_t i = 0; i < len;) {
        size_t n = store_utf8_len(s + i, len - i);
        if (n == 0)
            return STORE_ENAME_UTF8;
        i += n;
    }
    return 0;
}

const char *store_reason_name(int reason)
{
    return reason == STORE_REASON_REMOVED ? "removed" : "evicted";
}

const char *store_strerror(int err)
{
    switch (err) {
    case 0: return "success";
    case STORE_ENOTFOUND: return "no such key";
    case STORE_EEVICTED: return "key was evicted or removed";
    case STORE_EGONE: return "that version is no longer stored";
    case STORE_ETOOBIG: return "value is larger than max_result_bytes";
    case STORE_EFULL: return "store map is full (nothing was written)";
    case STORE_ECORRUPT: return "store file is damaged or not an offloadfs store";
    case STORE_EVERSION: return "store was made by another format version";
    case STORE_ENOSTORE: return "directory holds no store";
    case STORE_EREADERS: return "too many concurrent readers of the store";
    case STORE_ELIMITS: return "max_result_bytes must not exceed max_total_bytes, and limits must be at least 1";
    case STORE_ELOGGONE: return "change log no longer reaches that generation";
    case STORE_ERDONLY: return "store is open read-only";
    case STORE_ELMDB: return "LMDB failure";
    case STORE_EFORKED: return "store handle was opened by the parent process: open the store again after fork()";
    case STORE_EPENDING: return "the store is full of results waiting for their upload (run agentlink sync)";
    case STORE_ENAME_EMPTY: return "is empty";
    case STORE_ENAME_LONG: return "is longer than 255 bytes";
    case STORE_ENAME_UTF8: return "is not valid UTF-8";
    case STORE_ENAME_SLASH: return "contains '/'";
    case STORE_ENAME_CTRL: return "contains a NUL or control character";
    case STORE_ENAME_DOT: return "starts with '.'";
    default: break;
    }
    return err > 0 ? strerror(err) : "unknown store error";
}
