#!/usr/bin/env python3
"""A tiny scripted MCP server (newline-delimited JSON-RPC on stdio) for
tests/mcp/test_proxy.sh. Standard library only.

Requests it answers:
  tools/list            two tools, "text" and "image"
  tools/call "text"     {"n": lines, "width": chars per line, "seed": random text,
                         "structured": bool,
                         "image": bool, "progress": bool, "error": bool}
                        -> n lines "line I xxxx...", as one text part (plus an
                        image part, structuredContent {"content": text} on request;
                        a progress notification first on request)
  tools/call "ask"      sends a request of its own (sampling) first, then answers
                        once the client's response to it arrives
  tools/call "raw"      writes {"line": ...} from the arguments verbatim
  tools/call "die"      exits with status {"status": N} at once
  tools/call "kill"     kills itself with signal {"signal": N}
anything else with an id: written back byte for byte (so a test can compare what
went through the proxy in both directions); notifications likewise.
A batch (array) is answered with an array of the answers.
On stdin's end it writes "eof" to $MCP_SERVER_LOG (if set) and exits with
$MCP_SERVER_EXIT (default 0); on SIGTERM it writes "term" and exits 7.
"""
import base64
import json
import os
import random
import signal
import sys

LOG = os.environ.get("MCP_SERVER_LOG")


def log(word):
    if LOG:
        with open(LOG, "a") as f:
            f.write(word + "\n")


def on_term(signum, frame):
    log("term")
    sys.stdout.flush()
    os._exit(7)


signal.signal(signal.SIGTERM, on_term)
out = sys.stdout.buffer


def send(obj):
    out.write(json.dumps(obj, separators=(",", ":")).encode() + b"\n")
    out.flush()


def text_of(args):
    n, width = int(args.get("n", 3)), int(args.get("width", 10))
    if "seed" in args:  # random base64 lines: text a compressing store cannot shrink much
        rnd = random.Random(args["seed"])
        return "".join("line %d %s\n" % (i, base64.b64encode(rnd.randbytes(width * 3 // 4)).decode())
                       for i in range(1, n + 1))
    return "".join("line %d %s\n" % (i, "x" * width) for i in range(1, n + 1))


def call(msg, asked):
    params = msg.get("params") or {}
    name, args = params.get("name"), params.get("arguments") or {}
    if name == "die":
        out.flush()
        os._exit(int(args.get("status", 3)))
    if name == "kill":
        out.flush()
        os.kill(os.getpid(), int(args.get("signal", 9)))
    if name == "raw":
        out.write(args["line"].encode() + b"\n")
        out.flush()
        return None
    if name == "ask":
        asked[msg["id"]] = msg
        send({"jsonrpc": "2.0", "id": "srv-1", "method": "sampling/createMessage",
              "params": {"messages": [], "maxTokens": 10}})
        return None
    text = text_of(args)
    if args.get("progress"):
        send({"jsonrpc": "2.0", "method": "notifications/progress",
              "params": {"progressToken": 1, "progress": 1, "total": 2}})
    content = [{"type": "text", "text": text}]
    if args.get("image"):
        content.append({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"})
    result = {"content": content}
    if args.get("structured"):
        result["structuredContent"] = {"content": text, "lines": int(args.get("n", 3))}
    if args.get("error"):
        result["isError"] = True
    return {"jsonrpc": "2.0", "id": msg["id"], "result": result}


def answer(msg, raw, asked):
    if not isinstance(msg, dict):
        return None
    method = msg.get("method")
    if method == "tools/list":
        return {"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [
            {"name": "text", "inputSchema": {"type": "object"}},
            {"name": "image", "inputSchema": {"type": "object"}}]}}
    if method == "tools/call":
        return call(msg, asked)
    if method is None and msg.get("id") == "srv-1" and asked:
        rid, req = asked.popitem()
        return {"jsonrpc": "2.0", "id": rid,
                "result": {"content": [{"type": "text", "text": "asked"}]}}
    return raw


def main():
    asked = {}
    for raw in sys.stdin.buffer:
        line = raw.rstrip(b"\n")
        try:
            msg = json.loads(line)
        except ValueError:
            out.write(line + b"\n")  # echo what it cannot read
            out.flush()
            continue
        if isinstance(msg, list):
            if not any(isinstance(m, dict) and str(m.get("method", "")).startswith("tools/")
                       for m in msg):
                out.write(line + b"\n")  # nothing it knows: written back
                out.flush()
                continue
            answers = [answer(m, None, asked) for m in msg]
            answers = [a for a in answers if a is not None]
            if answers:
                send(answers)
            continue
        a = answer(msg, line, asked)
        if isinstance(a, bytes):
            out.write(a + b"\n")
            out.flush()
        elif a is not None:
            send(a)
    log("eof")
    sys.exit(int(os.environ.get("MCP_SERVER_EXIT", "0")))


main()
