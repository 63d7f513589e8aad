#!/bin/bash
# scripts/bench_mcp.sh -- `agentlink mcp-proxy` against the same MCP client
# talking to the server directly (make bench runs it as the "mcp" case).
#
# The official SDK client (tests/mcp, installed by scripts/npm-deps.sh) drives
# the reference servers from npm on a direct session and on a session
# through the proxy, with a store on the root disk (durable puts, as in use);
# tests/mcp/bench.mjs says what it measures. Prints one row a line,
# "measure|value|bar|meets", which bench.sh puts in its second table; with
# --json, bench.mjs's own output.
#
#   BENCH_MCP_CALLS=1000    small calls per side
#   BENCH_MCP_SIZES=1,50    sizes (MB) of the large results
set -euo pipefail
cd "$(dirname "$0")/.."
B=${OFFLOADFS_BUILD:-$PWD/build}
case $B in /*) ;; *) B=$PWD/$B ;; esac
[ -x "$B/agentlink" ] || { echo "bench_mcp: $B/agentlink is missing (run make)" >&2; exit 1; }
scripts/npm-deps.sh tests/mcp >/dev/null
W=$(mktemp -d /var/tmp/offloadfs-bench-mcp.XXXXXX)
trap 'rm -rf "$W"' EXIT
"$B/agentlink" init --store "$W/store" --max-total-bytes 16G --max-result-bytes 64M >/dev/null
mkdir -p "$W/files"
OFFLOADFS_BUILD=$B node tests/mcp/bench.mjs "$W/store" /large_tool_results "$W/files" \
    "${BENCH_MCP_CALLS:-1000}" "${BENCH_MCP_SIZES:-1,50}" >"$W/out.json"
if [ "${1:-}" = --json ]; then cat "$W/out.json"; exit 0; fi
python3 - "$W/out.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
def row(what, value, bar="-", meets="-"):
    print(f"{what}|{value}|{bar}|{meets}")
s = r["small"]
row(f"mcp-proxy: median latency of a small tools/call (echo), {s['calls']:,} calls each side, interleaved",
    f"direct {s['direct_ms']*1000:.0f} us, proxy {s['proxy_ms']*1000:.0f} us: ratio {s['ratio']:.2f} "
    f"(the proxy's own CPU: {s['proxy_cpu_ms_per_call']*1000:.0f} us a call)",
    "<= 1.10", "yes" if s["ratio"] <= 1.10 else "**no**")
for l in r["large"]:
    mb = l["mb"]
    row(f"mcp-proxy: offloading a {mb} MB read_text_file result ({l['message_bytes']:,}-byte message): "
        f"proxy CPU per call vs the client's JSON.parse of the message",
        f"{l['proxy_cpu_ms']:.1f} ms vs {l['client_json_parse_ms']:.1f} ms: ratio {l['cpu_over_parse']:.2f}",
        "< 1", "yes" if l["cpu_over_parse"] < 1 else "**no**")
    direct = (f"{l['direct_wall_ms']:.1f} ms" if l["direct_wall_ms"] is not None
              else "- (the SDK client closes a direct session on a message over 10 MiB)")
    row(f"mcp-proxy: {mb} MB read_text_file, wall time of the call, direct vs through the proxy",
        f"{direct} vs {l['proxy_wall_ms']:.1f} ms; the client receives {l['message_bytes']:,} vs "
        f"{l['received_bytes']:,} bytes; the SDK's schema check of the direct result {l['client_sdk_schema_ms']:.1f} ms")
m = r["rss"]
row("mcp-proxy: peak RSS (VmHWM, with the store pages it maps) / largest message relayed",
    f"{m['proxy_peak_bytes']/2**20:.0f} MiB / {m['largest_message_bytes']/2**20:.0f} MiB: ratio {m['ratio']:.2f}",
    "<= 2", "yes" if m["ratio"] <= 2 else "**no**")
row("mcp-proxy: peak RssAnon (its own memory, sampled every 2 ms) / largest message relayed",
    f"{m['proxy_peak_anon_bytes']/2**20:.0f} MiB / {m['largest_message_bytes']/2**20:.0f} MiB: ratio {m['anon_ratio']:.2f}",
    "<= 2", "yes" if m["anon_ratio"] <= 2 else "**no**")
PY
