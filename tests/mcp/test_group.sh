#!/bin/bash
# test_group.sh -- agentlink mcp-proxy runs the server in a process
# group of its own and stopping the server stops the group: no process a
# server started (a shell wrapper's children, as npx and scripts have)
# outlives the proxy, whether the server ignores the end of its input
# (SIGTERM to the group), ignores SIGTERM too (SIGKILL to the group), or
# exits and leaves children behind.
. "$(dirname "$0")/../lib.sh"

unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG OFFLOADFS_STORE XDG_STATE_HOME
ST=$T_TMP/store
$AGENTLINK --store "$ST" init >/dev/null || { t_not_ok "agentlink init"; t_done; }

# Every pid a server wrote down is killed when the test ends, whatever it
# asserted: a failing run leaves nothing behind.
t_on_exit 'cat "$T_TMP"/*.pids 2>/dev/null | xargs -r kill -9 2>/dev/null'

# alive PIDFILE: the pids in PIDFILE that still run (zombies are gone: an
# orphan's zombie waits for init here).
alive() {
    local p st out=
    while read -r p; do
        st=$(sed 's/.*) \(.\).*/\1/' "/proc/$p/stat" 2>/dev/null) || continue
        [ "$st" = Z ] || out+="$p "
    done <"$1"
    echo "$out"
}

# The server: a shell that starts a child, and a child that starts its own,
# each writing its pid down, then does MODE.
#   eof-ignored   runs a program that never reads stdin (tail -f /dev/null)
#   term-ignored  the same with SIGTERM ignored by all of them
#   exits         reads stdin to its end and exits, its children still running
server() { # server NAME MODE
    local pids=$T_TMP/$1.pids last
    case $2 in
    eof-ignored)  last='tail -f /dev/null' ;;
    term-ignored) last='trap "" TERM; tail -f /dev/null' ;;
    exits)        last='cat >/dev/null' ;;
    esac
    cat >"$T_TMP/$1.sh" <<EOF
#!/bin/sh
$( [ "$2" = term-ignored ] && echo 'trap "" TERM' )
echo \$\$ >>"$pids"
sleep 300 >/dev/null 2>&1 &
echo \$! >>"$pids"
sh -c 'echo \$\$ >>"$pids"; sleep 301 >/dev/null 2>&1 & echo \$! >>"$pids"; wait' >/dev/null 2>&1 &
while [ \$(wc -l <"$pids") -lt 4 ]; do sleep 0.01; done
echo '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"up"}}'
$last
EOF
    chmod +x "$T_TMP/$1.sh"
}

# run NAME MODE: the client sends nothing, waits for the server to be up,
# closes stdin, and waits for the proxy (deadline 120 s). Writes the
# proxy's status and how long it took after stdin closed into NAME.res.
run() {
    server "$1" "$2"
    python3 - "$AGENTLINK" "$ST" "$T_TMP/$1.sh" >"$T_TMP/$1.res" 2>"$T_TMP/$1.err" <<'PY'
import subprocess, sys, time
p = subprocess.Popen(sys.argv[1].split() + ["mcp-proxy", "--store", sys.argv[2], "--", sys.argv[3]],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
line = p.stdout.readline()
t0 = time.monotonic()
p.stdin.close()
try:
    p.wait(timeout=120)
except subprocess.TimeoutExpired:
    p.kill(); p.wait()
    print("timeout"); sys.exit()
p.stdout.read()
print(p.returncode, "up" if b'"up"' in line else "no-line", int((time.monotonic() - t0) * 1000))
PY
}

# The three run side by side: the SIGKILL case alone takes 6 s.
run eof eof-ignored & p1=$!
run term term-ignored & p2=$!
run exits exits & p3=$!
wait $p1 $p2 $p3

read -r st up ms <"$T_TMP/eof.res"
t_eq "server ignoring end of input: it was up, the proxy ended" "$up" up
t_eq "... 4 processes were started" "$(wc -l <"$T_TMP/eof.pids")" 4
t_eq "... none survives the proxy (SIGTERM to the group)" "$(alive "$T_TMP/eof.pids")" ""
t_eq "... the proxy exits 128+SIGTERM" "$st" 143
# Lower bounds only (the proxy's own waits); the upper ones are the client's deadline.
t_check "... not before MCP_TERM_AFTER_MS (3 s, took $ms ms)" test "$ms" -ge 2900
t_check "... and said it sent SIGTERM" grep -q "sending SIGTERM" "$T_TMP/eof.err"

read -r st up ms <"$T_TMP/term.res"
t_eq "server ignoring SIGTERM too: it was up" "$up" up
t_eq "... none survives the proxy (SIGKILL to the group)" "$(alive "$T_TMP/term.pids")" ""
t_eq "... the proxy exits 128+SIGKILL" "$st" 137
t_check "... not before 6 s (took $ms ms)" test "$ms" -ge 5900

read -r st up ms <"$T_TMP/exits.res"
t_eq "server exiting with its children still running: it was up" "$up" up
t_eq "... its children do not survive the proxy" "$(alive "$T_TMP/exits.pids")" ""
t_eq "... the proxy exits with the server's status" "$st" 0
t_check "... and says it stopped what the server left" \
    grep -q "left processes running in its group: sending them SIGTERM" "$T_TMP/exits.err"
t_check "... when it exited, not after a wait for it to (took $ms ms)" \
    bash -c "! grep -q 'did not exit' '$T_TMP/exits.err'"

# A signal to the proxy reaches the whole group, as a terminal's would.
# The client keeps its side open (a FIFO held open here) until then.
server sig eof-ignored
mkfifo "$T_TMP/sig.in"
exec 8<>"$T_TMP/sig.in"
$AGENTLINK mcp-proxy --store "$ST" -- "$T_TMP/sig.sh" <&8 >/dev/null 2>"$T_TMP/sig.err" &
proxy=$!
exec 8>&-
t_wait_until 10 bash -c "[ \"\$(cat '$T_TMP/sig.pids' 2>/dev/null | wc -l)\" = 4 ]"
kill -INT $proxy
t_wait_until 10 bash -c "! kill -0 $proxy 2>/dev/null"
wait $proxy; st=$?
t_eq "SIGINT to the proxy: it exits 128+SIGINT" "$st" 130
t_eq "... and no process of the server's survives" "$(alive "$T_TMP/sig.pids")" ""

# The proxy killed with SIGKILL can stop nothing itself: its supervisor
# (the server's group leader, told by PR_SET_PDEATHSIG) stops the group.
# group_alive PG: the processes of group PG still running (not zombies).
group_alive() { ps -e -o pgid=,stat=,pid=,comm= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ {print $3, $4}' | tr '\n' ' '; }
exec 8<>"$T_TMP/sig.in"
$AGENTLINK mcp-proxy --store "$ST" -- sh -c 'sleep 4321 & sleep 4322' <&8 >/dev/null 2>"$T_TMP/k9.err" &
proxy=$!
exec 8>&-
t_wait_until 30 bash -c "pgrep -f '^sleep 4322' >/dev/null"
pg=$(ps -o pgid= -p "$(pgrep -f '^sleep 4322' | head -1)" | tr -d ' ')
t_on_exit "kill -9 -- -$pg 2>/dev/null"
t_eq "SIGKILL to the proxy: its server ran (sh and two sleeps) in a group of its own" \
    "$(group_alive "$pg" | grep -o 'sh \|sleep ' | sort | tr -d '\n')" "sh sleep sleep "
kill -9 $proxy
wait $proxy
t_wait_until 30 bash -c "[ -z \"\$(ps -e -o pgid=,stat= | awk -v g=$pg '\$1 == g && \$2 !~ /^Z/')\" ]"
t_eq "... no process of that group survives it" "$(group_alive "$pg")" ""
t_check "... and the supervisor said why" grep -q "the proxy ended without stopping the server 'sh'" "$T_TMP/k9.err"
t_done
