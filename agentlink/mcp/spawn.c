/* spawn.c -- starting the server under a small supervisor (mcp.h,
 * mcp_spawn()).
 *
 * The proxy forks a supervisor, which makes a process group of its own,
 * asks the kernel for a signal when the proxy dies (PR_SET_PDEATHSIG), and
 * forks the server into that group. Why not the server straight: the
 * parent-death signal reaches only the process that asked for it, and is
 * cleared in its children and by a set-user-ID exec, so a server started
 * through a wrapper (sh, npx) would leave its children running when the
 * proxy is killed with SIGKILL. The supervisor outlives the server in the
 * group by design: when the proxy dies before it, it stops the whole group
 * (SIGTERM, then SIGKILL) and exits; when the server exits, it exits the
 * same way (same status, or the same signal), so the proxy sees the
 * server's own end. It runs no code but this file's (no allocation, no
 * store), ignores the signals the proxy sends to the group (they are for
 * the server), and holds no descriptor but the server's pipes and stderr. */
#include "agentlink/mcp/mcp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The signal the kernel sends the supervisor when the proxy dies. */
#define DEATH_SIGNAL SIGUSR1

/* The signals the relay handles or sends: the server gets them at their
 * defaults, whatever the proxy set. */
static const int relay_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE, DEATH_SIGNAL};
#define NSIGS (sizeof relay_sigs / sizeof relay_sigs[0])

/* In the server's process: IN and OUT as its stdin and stdout, signals as
 * a new program expects them, then the server; on failure errno goes up
 * ERRFD. */
static void server_exec(int in, int out, int errfd, char *const *argv)
{
    sigset_t none;
    int e;
    if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0)
        goto fail;
    for (size_t i = 0; i < NSIGS; i++)
        signal(relay_sigs[i], SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execvp(argv[0], argv);
fail:
    e = errno;
    (void)!write(errfd, &e, sizeof e);
    _exit(127);
}

/* Closes every close-on-exec descriptor but KEEP[0..3), as an exec would:
 * the supervisor does not exec, and must not hold the proxy's pipes (the
 * server would never see its stdin end), the store's files or the signal
 * pipe. Descriptors at or over the soft limit are a tool's (valgrind's),
 * left. */
static void close_cloexec(const int keep[3])
{
    struct rlimit rl;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)1 << 30
                   ? (long)rl.rlim_cur : 1L << 30;
    if (!d)
        return;
    while ((e = readdir(d))) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        int fl;
        if (*end || fd <= STDERR_FILENO || fd >= max || fd == keep[0] || fd == keep[1] ||
            fd == keep[2] || fd == dirfd(d))
            continue;
        fl = fcntl((int)fd, F_GETFD);
        if (fl >= 0 && (fl & FD_CLOEXEC))
            close((int)fd);
    }
    closedir(d);
}

/* The proxy is gone: stops the group (the server and whatever it started),
 * SIGTERM first, SIGKILL MCP_KILL_AFTER_MS later when some still run, which
 * ends the supervisor too. */
static void stop_group(const char *cmd)
{
    pid_t self = getpid();
    fprintf(stderr, "agentlink: mcp-proxy: the proxy ended without stopping the server '%s' "
            "(it was killed): stopping the server's process group\n", cmd);
    mcp_group_stop(self, cmd, MCP_KILL_AFTER_MS);
    if (mcp_group_running(self, self) != 0) /* SIGTERM did it, or /proc is unreadable */
        kill(0, SIGKILL);
    _exit(128 + SIGTERM);
}

/* Ends the supervisor as the server ended (STATUS from waitpid): its exit
 * status, or its signal (without a second core dump). */
static void mirror(int status)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        struct rlimit none = {0, 0};
        sigset_t set;
        setrlimit(RLIMIT_CORE, &none);
        signal(sig, SIG_DFL);
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        kill(getpid(), sig);
        _exit(128 + sig); /* a signal whose default is not to end: cannot happen */
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

/* The supervisor (see the top of the file). IN and OUT become the server's
 * stdin and stdout; ERRFD carries a failed start's errno; PROXY is the
 * proxy's pid. Never returns. */
static void supervise(int in, int out, int errfd, char *const *argv, pid_t proxy)
{
    sigset_t set;
    siginfo_t si;
    pid_t server;
    int e, status, nul;

    for (size_t i = 0; i < NSIGS; i++)
        signal(relay_sigs[i], SIG_DFL);
    signal(SIGPIPE, SIG_IGN); /* its one message may meet a closed stderr */
    sigemptyset(&set);
    for (size_t i = 0; i < NSIGS; i++)
        sigaddset(&set, relay_sigs[i]);
    sigdelset(&set, SIGPIPE);
    sigprocmask(SIG_BLOCK, &set, NULL);
    if (setpgid(0, 0) < 0 || prctl(PR_SET_PDEATHSIG, DEATH_SIGNAL) < 0)
        goto fail;
    if (getppid() != proxy) /* it died before the request took effect */
        _exit(127);
    close_cloexec((const int[3]){in, out, errfd});
    if ((server = fork()) < 0)
        goto fail;
    if (server == 0)
        server_exec(in, out, errfd, argv);
    /* The server's pipes are the server's alone: a copy here would keep its
     * stdout open after it closed it. The client's stdin and stdout neither. */
    close(in);
    close(out);
    close(errfd);
    if ((nul = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0) {
        dup2(nul, STDIN_FILENO);
        dup2(nul, STDOUT_FILENO);
        close(nul);
    }
    for (;;) {
        if (sigwaitinfo(&set, &si) < 0)
            continue;
        if (si.si_signo == SIGCHLD) {
            pid_t w;
            while ((w = waitpid(server, &status, WNOHANG)) < 0 && errno == EINTR)
                ;
            if (w == server)
                mirror(status);
        } else if (si.si_signo == DEATH_SIGNAL && getppid() != proxy) {
            stop_group(argv[0]);
        }
        /* SIGINT, SIGTERM, SIGHUP: sent to the group, so the server has its own */
    }
fail:
    e = errno;
    (void)!write(errfd, &e, sizeof e);
    _exit(127);
}

int mcp_spawn(char *const *argv, pid_t *pid, int *to_server, int *from_server)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, ep[2] = {-1, -1}, rc = 0, e = 0;
    pid_t proxy = getpid(), child;
    ssize_t n;

    *pid = 0;
    *to_server = *from_server = -1;
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(ep, O_CLOEXEC)) {
        rc = errno;
        goto done;
    }
    child = fork();
    if (child < 0) {
        rc = errno;
        goto done;
    }
    if (child == 0)
        supervise(in[0], out[1], ep[1], argv, proxy);
    /* Also here: no signal sent to the group before the child ran may miss
     * it (EACCES once it has forked the server: it did it itself). */
    setpgid(child, child);
    close(ep[1]);
    ep[1] = -1;
    /* EOF once the server has exec'd (and the supervisor closed its copy). */
    while ((n = read(ep[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    if (n == (ssize_t)sizeof e) { /* no server runs: the supervisor exits 127 */
        rc = e ? e : ENOEXEC;
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
            ;
        goto done;
    }
    *pid = child;
    *to_server = in[1];
    *from_server = out[0];
    in[1] = out[0] = -1;
done:
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0)
            close(in[i]);
        if (out[i] >= 0)
            close(out[i]);
        if (ep[i] >= 0)
            close(ep[i]);
    }
    return rc;
}
