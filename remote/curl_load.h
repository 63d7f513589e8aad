/* curl_load.h -- libcurl, loaded at run time when a remote is first
 * opened (private to remote/).
 *
 * No program of offloadfs links libcurl: a store that names no remote
 * never loads it, nor the TLS, HTTP/2, Kerberos, LDAP ... libraries it
 * pulls in (~30 of them, several milliseconds at every process start).
 * remote_open() calls remote_curl_load(), which dlopen()s the library once
 * per process and resolves the few functions remote/ calls into a table; the
 * code of remote/ calls libcurl through that table only (r->cu), never
 * curl_* by name, so nothing links against it. It is compiled against
 * <curl/curl.h> (libcurl4-openssl-dev), so types, CURLOPT_* and CURLE_*
 * are the header's.
 *
 * Caveats
 * =======
 * - The library loaded is RCURL_LIBRARY, "libcurl.so.4" (the soname of
 *   libcurl 7.16 and later on Linux, whatever its TLS backend), or the
 *   name or path in $OFFLOADFS_LIBCURL (another build, e.g.
 *   libcurl-gnutls.so.4). The variable is ignored in a set-uid or
 *   set-gid process (secure_getenv()).
 * - Once per process, thread-safe (pthread_once): load, resolve, check the
 *   version (RCURL_MIN_VERSION), curl_global_init(). A failure is kept:
 *   every later call returns it with the same message (a library
 *   installed later is found by the next process).
 * - Never unloaded: libcurl and its TLS library stay mapped until exit
 *   (curl_global_cleanup() is not thread-safe, and a TLS library may run
 *   exit handlers).
 */
#ifndef OFFLOADFS_REMOTE_CURL_LOAD_H
#define OFFLOADFS_REMOTE_CURL_LOAD_H

#include <stddef.h>
#include <time.h>

#include <curl/curl.h>

#define RCURL_LIBRARY "libcurl.so.4"
/* CURLOPT_PROTOCOLS_STR (7.85.0) is the newest option remote/ sets;
 * CURLOPT_AWS_SIGV4 came in 7.75.0. */
#define RCURL_MIN_VERSION 0x075500
#define RCURL_MIN_VERSION_STR "7.85.0"

/* The libcurl functions remote/ calls, as the header declares them. */
typedef struct rcurl_api {
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *h);
    void (*easy_reset)(CURL *h);
    CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
    CURLcode (*easy_perform)(CURL *h);
    CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
    const char *(*easy_strerror)(CURLcode code);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
    void (*slist_free_all)(struct curl_slist *list);
} rcurl_api;

/* Loads libcurl (first call in the process; later calls return at once)
 * and points *OUT at the table of its functions, valid until exit.
 * Returns 0, or REMOTE_ECONFIG with *OUT NULL when the library cannot be
 * used: not found or not loadable (a dependency missing), a function
 * missing, older than RCURL_MIN_VERSION, or curl_global_init() failed.
 * Then MSG (MSGLEN bytes, always terminated, when not NULL) names the
 * library, the cause and what to do, e.g. "cannot load libcurl
 * 'libcurl.so.4' (libcurl.so.4: cannot open shared object file: No such
 * file or directory): the remote tier needs it; install libcurl4 or name
 * the library in OFFLOADFS_LIBCURL". */
int remote_curl_load(const rcurl_api **out, char *msg, size_t msglen);

#endif
