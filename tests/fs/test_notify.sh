#!/bin/bash
# systemd readiness: with $NOTIFY_SOCKET set, the daemon sends "READY=1" to
# that AF_UNIX datagram socket (a path, or the abstract namespace for '@')
# once the mount is up, and "STOPPING=1" when it stops. A listener stands in
# for systemd and records, for each message, whether the mount existed when
# it arrived. A socket nobody listens on must not stop the mount.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse

S=$(m_store s) || { t_not_ok "make a store"; t_done; }
printf 'hello\n' | m_put "$S" greeting

cat >"$T_TMP/listen.py" <<'EOF'
# listen.py ADDR MNT OUT: binds a datagram socket at ADDR ('@' = abstract),
# then appends "MESSAGE mounted=0|1" to OUT for each datagram, until
# STOPPING=1 or 20 s without one.
import os, socket, sys
addr, mnt, out = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind('\0' + addr[1:] if addr.startswith('@') else addr)
open(out + '.bound', 'w').close()
s.settimeout(20)
while True:
    try:
        msg = s.recv(4096).decode()
    except socket.timeout:
        break
    with open(out, 'a') as f:
        f.write('%s mounted=%d\n' % (msg, os.path.ismount(mnt)))
    if msg == 'STOPPING=1':
        break
EOF

notify_case() { # notify_case DESC ADDR
    local d=$1 addr=$2 mnt=$T_TMP/mnt-$3 out=$T_TMP/notify-$3 lpid
    python3 "$T_TMP/listen.py" "$addr" "$mnt" "$out" &
    lpid=$!
    t_on_exit "kill $lpid 2>/dev/null"
    t_wait_until 10 test -e "$out.bound" || { t_not_ok "$d: listener did not start"; return; }
    NOTIFY_SOCKET=$addr m_mount "$S" "$mnt" || { t_not_ok "$d: mount"; return; }
    t_wait_until 10 test -s "$out"
    t_eq "$d: READY=1 arrives with the mount already up" "$(head -1 "$out" 2>/dev/null)" "READY=1 mounted=1"
    t_eq "$d: the mount serves after READY=1" "$(cat "$mnt/greeting")" "hello"
    m_umount "$mnt"; t_eq "$d: daemon exits 0" "$?" "0"
    t_wait_until 10 grep -q '^STOPPING=1 ' "$out"
    t_check "$d: STOPPING=1 when it stops" grep -q '^STOPPING=1 ' "$out"
    t_eq "$d: one READY=1, one STOPPING=1, nothing else" "$(cut -d' ' -f1 "$out" | tr '\n' ' ')" \
        "READY=1 STOPPING=1 "
    wait "$lpid" 2>/dev/null
}

notify_case "socket path" "$T_TMP/notify.sock" path
notify_case "abstract socket" "@offloadfs-test-notify-$$" abstract

# ---- nobody listening: the mount works all the same, the log says why -------
M=$T_TMP/mnt-none
NOTIFY_SOCKET=$T_TMP/nobody.sock m_mount "$S" "$M" || t_not_ok "mount with a dead NOTIFY_SOCKET"
t_eq "no listener: the mount serves" "$(cat "$M/greeting" 2>/dev/null)" "hello"
t_check "no listener: the log names the socket" grep -q "nobody.sock" "$M.log"
m_umount "$M"; t_eq "no listener: daemon exits 0" "$?" "0"

M=$T_TMP/mnt-bad
NOTIFY_SOCKET=vsock:2:1234 m_mount "$S" "$M" || t_not_ok "mount with a non-AF_UNIX NOTIFY_SOCKET"
t_eq "unsupported socket kind: the mount serves" "$(cat "$M/greeting" 2>/dev/null)" "hello"
m_umount "$M"; t_eq "unsupported socket kind: daemon exits 0" "$?" "0"

# ---- without NOTIFY_SOCKET nothing is sent and nothing is logged ------------
M=$T_TMP/mnt-plain
mkdir -p "$M"
env -u NOTIFY_SOCKET "$M_FS" -f "$S" "$M" >"$M.log" 2>&1 &
M_PIDS[$M]=$!
t_on_exit "_m_cleanup '$M' ${M_PIDS[$M]}"
t_wait_until 10 mountpoint -q "$M"
t_eq "no NOTIFY_SOCKET: the mount serves" "$(cat "$M/greeting" 2>/dev/null)" "hello"
m_umount "$M"; t_eq "no NOTIFY_SOCKET: daemon exits 0" "$?" "0"
t_check "no NOTIFY_SOCKET: nothing about systemd in the log" bash -c "! grep -qi notify '$M.log'"
t_done
