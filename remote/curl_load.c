/* curl_load.c -- dlopen() of libcurl on the first remote_open(), the way
 * systemd loads its optional libraries: a process whose store names no
 * remote (most CLI runs: one after every tool call) maps no HTTP or TLS
 * code at all. The state below is the process's, as libcurl's own global
 * state is: written once under pthread_once, read-only after. */
#include "remote/curl_load.h"
#include "remote/remote.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static rcurl_api api;
static int load_ok;
static char load_msg[600]; /* why it failed */

/* Resolves NAME in LIB into the function pointer at FNP; returns 1, or 0
 * with load_msg written. dlsym() answers an object pointer, which POSIX
 * says converts to the function's type; memcpy() does it without a cast
 * C forbids. */
static int resolve(void *lib, const char *file, void *fnp, const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) {
        snprintf(load_msg, sizeof load_msg,
                 "cannot use libcurl '%s': it has no %s (not libcurl, or older than %s)", file, name,
                 RCURL_MIN_VERSION_STR);
        return 0;
    }
    memcpy(fnp, &p, sizeof p);
    return 1;
}

static int resolve_all(void *lib, const char *file)
{
    return resolve(lib, file, &api.easy_init, "curl_easy_init") &&
           resolve(lib, file, &api.easy_cleanup, "curl_easy_cleanup") &&
           resolve(lib, file, &api.easy_reset, "curl_easy_reset") &&
           resolve(lib, file, &api.easy_setopt, "curl_easy_setopt") &&
           resolve(lib, file, &api.easy_perform, "curl_easy_perform") &&
           resolve(lib, file, &api.easy_getinfo, "curl_easy_getinfo") &&
           resolve(lib, file, &api.easy_strerror, "curl_easy_strerror") &&
           resolve(lib, file, &api.slist_append, "curl_slist_append") &&
           resolve(lib, file, &api.slist_free_all, "curl_slist_free_all");
}

static void load(void)
{
    CURLcode (*global_init)(long flags);
    curl_version_info_data *(*version_info)(CURLversion v);
    const char *file = secure_getenv("OFFLOADFS_LIBCURL");
    if (!file || !*file)
        file = RCURL_LIBRARY;
    void *lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(load_msg, sizeof load_msg,
                 "cannot load libcurl '%s' (%s): the remote tier needs it; install libcurl4 "
                 "(Debian, Ubuntu) or name the library in OFFLOADFS_LIBCURL",
                 file, why ? why : "unknown error");
        return;
    }
    if (!resolve_all(lib, file) || !resolve(lib, file, &global_init, "curl_global_init") ||
        !resolve(lib, file, &version_info, "curl_version_info")) {
        dlclose(lib);
        return;
    }
    const curl_version_info_data *v = version_info(CURLVERSION_NOW);
    if (!v || v->version_num < RCURL_MIN_VERSION) {
        snprintf(load_msg, sizeof load_msg, "cannot use libcurl '%s': version %s, %s or later is needed",
                 file, v && v->version ? v->version : "unknown", RCURL_MIN_VERSION_STR);
        dlclose(lib);
        return;
    }
    CURLcode cc = global_init(CURL_GLOBAL_DEFAULT);
    if (cc != CURLE_OK) {
        snprintf(load_msg, sizeof load_msg, "cannot use libcurl '%s': curl_global_init failed (curl %d)",
                 file, (int)cc);
        return;
    }
    load_ok = 1;
}

int remote_curl_load(const rcurl_api **out, char *msg, size_t msglen)
{
    pthread_once(&load_once, load);
    *out = load_ok ? &api : NULL;
    if (!load_ok && msg && msglen)
        snprintf(msg, msglen, "%s", load_msg);
    return load_ok ? 0 : REMOTE_ECONFIG;
}
