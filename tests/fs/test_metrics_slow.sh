#!/bin/bash
# Slow clients against offloadfs -o metrics: connections that send the start
# of a request one byte every 0.2 s and never finish it
# (tests/metrics/slow_clients.py) cannot keep a scrape out.
#   10 from one address (the scraper's own): 4 are kept and the other 6
#   closed at once (4 per address); the 4 are closed while still sending,
#   since a request must be whole 5 s after its connection opened; and a
#   scrape from that address, tried again until it is answered, is.
#   40 from 40 addresses (more than the 16 places, and the 4 per address
#   does not apply): a scrape made while they hold every place is answered,
#   and they are closed while still sending (with every place taken, a
#   request must be whole within 1 s).
# The waits are deadlines (60 s; 3 x 120 under valgrind), not measures:
# the slow clients must be cut, at whatever speed the machine runs.
# Under make test-valgrind (OFFLOADFS_VALGRIND) the daemon runs under memcheck.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../metrics/prom.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse
command -v curl >/dev/null || { t_not_ok "curl is installed (scripts/deps.sh)"; t_done; }
metrics_valgrind
LONG=$((WAIT * 3))
SLOW=$T_TOP/tests/metrics/slow_clients.py

S=$(m_store s) || { t_not_ok "make a store"; t_done; }
M=$T_TMP/mnt
m_mount "$S" "$M" "${OPTS[@]}" -o metrics=127.0.0.1:0 || { t_not_ok "mount"; t_done; }
t_wait_until "$WAIT" has_url "$M"
URL=$(metrics_url "$M") PORT=${URL##*:} PORT=${PORT%/metrics}
t_check "the daemon serves metrics" [ -n "$URL" ]

# slow NAME FIRST COUNT SPREAD : starts COUNT slow clients from FIRST (SPREAD
# 1: one address each), their history in $T_TMP/NAME, stopped at exit.
slow() {
    : >"$T_TMP/$1"
    python3 "$SLOW" "$PORT" "$2" "$3" "$4" "$T_TMP/$1" &
    SLOW_PID=$!
    t_on_exit "kill $SLOW_PID 2>/dev/null"
}
ever() { grep -qx "$2" "$T_TMP/$1"; }                       # ever NAME STATE
closed_at_least() { # closed_at_least NAME N
    local last; last=$(tail -1 "$T_TMP/$1")
    [ "${last##* }" -ge "$2" ] 2>/dev/null
}
answered() { curl -sf --max-time "$LONG" "$URL" | grep -q '^offloadfs_build_info{'; }

# ---- 10 from the scraper's own address ----------------------------------------------
slow one 127.0.0.1 10 0
t_check "10 slow clients from one address: 6 closed at once, the other 4 still open" \
    t_wait_until "$LONG" ever one "connected 10 closed 6"
t_check "... and a scrape from another address is answered meanwhile" \
    bash -c "curl -sf --max-time $LONG --interface 127.0.0.2 '$URL' | grep -q '^offloadfs_build_info{'"
t_check "... and the 4 are closed while still sending (a request is whole within 5 s)" \
    t_wait_until "$LONG" ever one "connected 10 closed 10"
t_check "... and a scrape from their address is answered" t_wait_until "$LONG" answered
kill $SLOW_PID; wait $SLOW_PID 2>/dev/null

# ---- 40 from 40 addresses: more than the 16 places -------------------------------------
slow many 127.0.0.10 40 1
at_least_connected() { local l; l=$(tail -1 "$T_TMP/many"); l=${l#connected }; [ "${l%% *}" -ge "$1" ] 2>/dev/null; }
t_check "40 slow clients from 40 addresses: more than 16 connect" t_wait_until "$LONG" at_least_connected 20
t_check "... and a scrape made while they hold every place is answered" answered
t_check "... and they are closed while still sending (every place taken: 1 s)" \
    t_wait_until "$LONG" closed_at_least many 16
kill $SLOW_PID; wait $SLOW_PID 2>/dev/null

# Their closing reaches the daemon's loop at the machine's speed: until it
# has, a new scrape still meets every place taken and its 1 s limit, so this
# one is tried again (as a scraper does) until it is answered.
t_check "GET /metrics still answers once they are gone" t_wait_until "$LONG" answered
m_umount "$M"; t_eq "daemon exits 0 after unmount" "$?" 0
t_done
