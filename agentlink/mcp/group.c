/* group.c -- stopping what the server left running in its process group.
 *
 * A server started through a wrapper (a shell script, npx) has children of
 * its own; when it exits, or is stopped, they are orphaned but stay in its
 * process group. Nothing else would end them once the proxy is gone, so the
 * proxy stops the group as it ends. The group's members are not our
 * children and cannot be waited for: /proc tells which ones still run.
 * Zombies do not count (an orphan's zombie waits for init, which may never
 * reap it in a container). */
#include "agentlink/mcp/mcp.h"
#include "common/clock.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Whether process PID (a /proc entry's name) runs in group PG: its stat
 * line is "pid (comm) state ppid pgrp ...", comm being anything up to the
 * last ')'. */
static int in_group(const char *pid, pid_t pg)
{
    char path[64], line[512], *p;
    FILE *f;
    size_t n;
    char state;
    long ppid, pgrp;
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    if (!(f = fopen(path, "re")))
        return 0; /* gone meanwhile */
    n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = '\0';
    if (!(p = strrchr(line, ')')) || sscanf(p + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3)
        return 0;
    return pgrp == (long)pg && state != 'Z' && state != 'X';
}

int mcp_group_running(pid_t pg, pid_t leader)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int found = 0;
    if (!d)
        return -1;
    while (!found && (e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == (long)leader)
            continue;
        found = in_group(e->d_name, pg);
    }
    closedir(d);
    return found;
}

void mcp_group_stop(pid_t pg, const char *cmd, int kill_after_ms)
{
    uint64_t t0;
    int left = mcp_group_running(pg, pg);
    if (left == 0)
        return;
    fprintf(stderr, "agentlink: mcp-proxy: the server '%s' left processes running in its "
            "group: sending them SIGTERM\n", cmd);
    kill(-pg, SIGTERM);
    kill(-pg, SIGCONT); /* a stopped process gets SIGTERM only once it runs */
    t0 = common_clock_ms();
    while ((int64_t)(common_clock_ms() - t0) < kill_after_ms) {
        struct timespec tick = {0, 10 * 1000000L};
        nanosleep(&tick, NULL);
        if (mcp_group_running(pg, pg) == 0)
            return;
    }
    fprintf(stderr, "agentlink: mcp-proxy: processes of the server '%s' still ran %d ms "
            "after SIGTERM: sending SIGKILL\n", cmd, kill_after_ms);
    kill(-pg, SIGKILL);
}
