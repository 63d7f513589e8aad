"""agentlink -- offload large tool results into an offloadfs store.

A ctypes binding of libagentlink; standard library only.

    import agentlink

    # What an agent runtime does after every tool call:
    text = agentlink.offload("bash", call_id, result)   # result, or a pointer

    # Haystack's ToolResultStore shape:
    store = agentlink.ToolResultStore()
    path = store.write(key="call_1", content="...")     # /large_tool_results/call_1
    store.read(path) == store.read("call_1")

read() raises FileNotFoundError for a key never written and EvictedError
(a LookupError) for one that was evicted or removed; the message says when
and why. The library is found through $AGENTLINK_LIB, else next to the
build (../../build/libagentlink.so from this file), else the system's
libagentlink.so (make install).

Store, namespace and mount follow the contract's precedence: argument,
then $OFFLOADFS_STORE / $OFFLOADFS_NAMESPACE / $OFFLOADFS_MOUNT, then the
policy file ($OFFLOADFS_CONFIG), then the defaults.
"""

import ctypes
import ctypes.util
import errno as _errno
import json as _json
import os
import threading

__all__ = [
    "ToolResultStore",
    "EvictedError",
    "ConfigError",
    "AgentlinkError",
    "offload",
    "derive_key",
]

# ---- error codes (agentlink.h) -------------------------------------------
_BASE = -32000
AL_ENOTFOUND = _BASE - 1
AL_EEVICTED = _BASE - 2
AL_ENOSTORE = _BASE - 8
AL_ENAME_EMPTY = _BASE - 20
AL_ENAME_CTRL = _BASE - 24
AL_ENAME_DOT = _BASE - 25
AL_ECONFIG = _BASE - 40
AL_ETOOL = _BASE - 42
AL_EMOUNT = _BASE - 43
AL_ENOTMOUNT = _BASE - 44
AL_REASON_REMOVED = 2


class AgentlinkError(RuntimeError):
    """A store failure that is not about one key (damaged store, full map, ...)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class ConfigError(ValueError):
    """The offload policy file was refused; the message names the file,
    the field and what was expected."""


class EvictedError(LookupError):
    """The result was evicted to make room, or removed: run the tool again.

    Attributes: key, evicted_at (RFC 3339, UTC), reason ("evicted" or
    "removed")."""

    def __init__(self, key, evicted_at, reason):
        if reason == "removed":
            why = "it was removed (agentlink rm or drop-referenced)"
        else:
            why = "it was evicted to keep the store under max_total_bytes"
        super().__init__(
            "result %r is no longer stored: %s at %s; run the tool again"
            % (key, why, evicted_at))
        self.key = key
        self.evicted_at = evicted_at
        self.reason = reason


# ---- the library ---------------------------------------------------------
class _Entry(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_uint64),
        ("created_ns", ctypes.c_uint64),
        ("original_size", ctypes.c_uint64),
        ("truncated", ctypes.c_int),
        ("has_tool", ctypes.c_int),
        ("tool", ctypes.c_char * 256),
        ("gone_ns", ctypes.c_uint64),
        ("gone_reason", ctypes.c_int),
    ]


_lib = None
_lib_lock = threading.Lock()


def _find_library():
    env = os.environ.get("AGENTLINK_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    built = os.path.normpath(os.path.join(here, "..", "..", "build", "libagentlink.so"))
    if os.path.exists(built):
        return built
    found = ctypes.util.find_library("agentlink")
    if found:
        return found
    raise OSError(
        "libagentlink.so not found: build it with 'make' (expected at %s) "
        "or set AGENTLINK_LIB" % built)


def _load():
    global _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        lib = ctypes.CDLL(_find_library())
        vp, cp, sz, i = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int
        pvp = ctypes.POINTER(ctypes.c_void_p)
        sigs = {
            "al_strerror": (cp, [i]),
            "al_version": (cp, []),
            "al_free": (None, [vp]),
            "al_key_derive": (i, [cp, sz, pvp]),
            "al_time_format": (cp, [ctypes.c_uint64, cp, sz]),
            "al_policy_load": (i, [pvp, cp, pvp]),
            "al_policy_parse": (i, [pvp, cp, sz, cp, pvp]),
            "al_policy_free": (None, [vp]),
            "al_policy_decide": (i, [vp, cp, cp, sz, vp, vp]),
            "al_store_open": (i, [pvp, cp, cp, cp, vp]),
            "al_store_close": (None, [vp]),
            "al_store_dir": (cp, [vp]),
            "al_store_namespace": (cp, [vp]),
            "al_store_mount": (cp, [vp]),
            "al_store_path_of": (i, [vp, cp, pvp]),
            "al_store_key_of": (i, [vp, cp, pvp]),
            "al_store_put": (i, [vp, cp, cp, sz, cp, ctypes.POINTER(_Entry), pvp]),
            "al_store_get": (i, [vp, cp, pvp, ctypes.POINTER(sz), ctypes.POINTER(_Entry)]),
            "al_store_remove": (i, [vp, cp, ctypes.POINTER(_Entry)]),
            "al_offload": (i, [vp, vp, cp, cp, sz, cp, sz, pvp, ctypes.POINTER(sz),
                               ctypes.POINTER(i)]),
        }
        for name, (res, args) in sigs.items():
            fn = getattr(lib, name)
            fn.restype = res
            fn.argtypes = args
        _lib = lib
        return lib


def _strerror(code):
    return _load().al_strerror(code).decode("utf-8", "replace")


def _take_string(ptr, length=None):
    """Copies a library-allocated string and frees it."""
    if not ptr.value:
        return b""
    try:
        if length is None:
            return ctypes.string_at(ptr.value)
        return ctypes.string_at(ptr.value, length)
    finally:
        _load().al_free(ptr)


def _bytes(value, what):
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    raise TypeError("%s must be str or bytes, not %s" % (what, type(value).__name__))


def _text(content):
    """CONTENT as str: bytes are decoded as UTF-8, each invalid sequence
    shown as U+FFFD (the pointer text and read() show them so too)."""
    if isinstance(content, str):
        return content
    return content.decode("utf-8", "replace")


def _cstr(value, what):
    """VALUE as bytes for a NUL-terminated C argument. A NUL inside would
    silently cut it short in C (key "a\\0b" would write key "a"), so it is
    refused, naming the rule as the library does."""
    data = _bytes(value, what)
    if b"\0" in data:
        if what in ("key", "reference", "namespace"):
            raise ValueError("%s %r %s" % (what, value, _strerror(AL_ENAME_CTRL)))
        if what == "tool":
            raise ValueError("%s: %r" % (_strerror(AL_ETOOL), value))
        raise ValueError("%s %r contains a NUL" % (what, value))
    return data


def _opt(value, what="path"):
    if value is None:
        return None
    return _cstr(os.fspath(value), what)


def _time(ns):
    buf = ctypes.create_string_buffer(40)
    return _load().al_time_format(ns, buf, len(buf)).decode()


def _raise(code, subject, entry=None):
    """Turns a library code about SUBJECT (a key or reference) into the
    exception a Python user expects."""
    msg = _strerror(code)
    if code in (AL_ENOTFOUND, AL_ENOSTORE):
        raise FileNotFoundError(_errno.ENOENT, "no such result", subject)
    if code == AL_EEVICTED:
        reason = "removed" if entry is not None and entry.gone_reason == AL_REASON_REMOVED else "evicted"
        raise EvictedError(subject, _time(entry.gone_ns) if entry is not None else "?", reason)
    if AL_ENAME_DOT <= code <= AL_ENAME_EMPTY:
        raise ValueError("key %r %s" % (subject, msg))
    if code == AL_ENOTMOUNT:
        raise ValueError("%r %s" % (subject, msg))
    if code in (AL_ETOOL, AL_EMOUNT):
        raise ValueError("%s: %r" % (msg, subject))
    if code > 0:
        raise OSError(code, os.strerror(code))
    raise AgentlinkError(code, msg)


class _Policy:
    """An al_policy, freed when collected."""

    def __init__(self, config):
        lib = _load()
        self._ptr = ctypes.c_void_p()
        err = ctypes.c_void_p()
        if isinstance(config, dict):
            text = _json.dumps(config).encode()
            rc = lib.al_policy_parse(ctypes.byref(self._ptr), text, len(text), b"<dict>",
                                     ctypes.byref(err))
        else:
            rc = lib.al_policy_load(ctypes.byref(self._ptr), _opt(config, "config"),
                                    ctypes.byref(err))
        if rc:
            message = _take_string(err).decode("utf-8", "replace") if err.value else _strerror(rc)
            if rc == AL_ECONFIG:
                raise ConfigError(message)
            _raise(rc, config)

    @property
    def ptr(self):
        return self._ptr

    def __del__(self):
        ptr, self._ptr = getattr(self, "_ptr", None), None
        if ptr and _lib is not None:
            _lib.al_policy_free(ptr)


def _open(store, namespace, mount, policy):
    """Opens an al_store handle; raises on failure."""
    h = ctypes.c_void_p()
    rc = _load().al_store_open(ctypes.byref(h), _opt(store, "store"),
                               _opt(namespace, "namespace"), _opt(mount, "mount"), policy.ptr)
    if rc:
        if AL_ENAME_DOT <= rc <= AL_ENAME_EMPTY:
            raise ValueError("namespace %r %s" % (namespace, _strerror(rc)))
        if rc == AL_EMOUNT:
            raise ValueError("mount %r is not an absolute path" % (mount,))
        if rc == _errno.EINVAL and store is not None:
            raise ValueError("store must be a directory path, got %r" % (store,))
        _raise(rc, store)
    return h


class _Guard:
    """The C handle of one ToolResultStore and a count of the calls using it.

    A call holds the handle shared (enter/leave, as a "with" block); close()
    takes it exclusively: new calls raise the closed error at once, and
    al_store_close() runs only after the calls already inside the library
    have returned. Without this, a close racing a read freed the handle
    under the reader (SIGSEGV)."""

    __slots__ = ("_h", "_users", "_cond")

    def __init__(self, h):
        self._h = h
        self._users = 0
        self._cond = threading.Condition(threading.Lock())

    def __enter__(self):
        with self._cond:
            if not self._h:
                raise ValueError("ToolResultStore is closed")
            self._users += 1
            return self._h

    def __exit__(self, *exc):
        with self._cond:
            self._users -= 1
            if self._users == 0:
                self._cond.notify_all()

    def close(self):
        """Marks the handle closed, waits for the calls using it, and
        returns it (None when already closed) for the caller to free."""
        with self._cond:
            h, self._h = self._h, None
            while self._users:
                self._cond.wait()
        return h


class ToolResultStore:
    """Tool results in an offloadfs store, shaped like Haystack's
    ToolResultStore: write(key=, content=) -> path, read(reference) -> str.

    store, namespace, mount: None takes the environment, then the policy
    file named by $OFFLOADFS_CONFIG, then the defaults. The handle is safe
    to share between threads; close() it (or use "with") to release it
    early, otherwise it is released when collected. A call racing close()
    either finishes (close() waits for it) or raises ValueError("ToolResultStore
    is closed"); so does every call after close()."""

    def __init__(self, store=None, namespace=None, mount=None, *, _policy=None):
        self._guard = None
        self._guard = _Guard(_open(store, namespace, mount, _policy or _Policy(None)))

    # -- Haystack's shape
    def write(self, *, key, content):
        """Stores CONTENT (str or bytes) under KEY, replacing any earlier
        result of that key, and returns its path under the mount. Content
        over the store's max_result_bytes keeps its head and tail; empty
        content is a 0-byte entry, as 'agentlink put' stores it."""
        data = _bytes(content, "content")
        path = ctypes.c_void_p()
        with self._guard as h:
            rc = _load().al_store_put(h, _cstr(key, "key"), data, len(data), None,
                                      None, ctypes.byref(path))
        if rc:
            _raise(rc, key)
        return os.fsdecode(_take_string(path))

    def read(self, reference):
        """Returns the content stored for REFERENCE (a path under the mount,
        or a key) as str (invalid UTF-8 shown as U+FFFD).
        Raises FileNotFoundError (never written) or EvictedError."""
        return self.read_bytes(reference).decode("utf-8", "replace")

    # -- more
    def read_bytes(self, reference):
        """As read(), returning the exact stored bytes."""
        lib = _load()
        key = self.key_of(reference)
        buf, length, entry = ctypes.c_void_p(), ctypes.c_size_t(), _Entry()
        with self._guard as h:
            rc = lib.al_store_get(h, key.encode("utf-8", "surrogateescape"),
                                  ctypes.byref(buf), ctypes.byref(length), ctypes.byref(entry))
        if rc:
            _raise(rc, reference, entry)
        return _take_string(buf, length.value)

    def delete(self, reference):
        """Removes a result; reading it then raises EvictedError."""
        entry = _Entry()
        key = self.key_of(reference)
        with self._guard as h:
            rc = _load().al_store_remove(h, key.encode("utf-8", "surrogateescape"),
                                         ctypes.byref(entry))
        if rc:
            _raise(rc, reference, entry)

    def key_of(self, reference):
        """The key of REFERENCE: a path directly under the mount, or a key."""
        out = ctypes.c_void_p()
        with self._guard as h:
            rc = _load().al_store_key_of(h, _cstr(os.fspath(reference), "reference"),
                                         ctypes.byref(out))
        if rc:
            _raise(rc, reference)
        return _take_string(out).decode("utf-8", "surrogateescape")

    def path_of(self, key):
        """KEY's path under the mount."""
        out = ctypes.c_void_p()
        with self._guard as h:
            rc = _load().al_store_path_of(h, _cstr(key, "key"), ctypes.byref(out))
        if rc:
            _raise(rc, key)
        return os.fsdecode(_take_string(out))

    @property
    def store(self):
        with self._guard as h:
            return os.fsdecode(_load().al_store_dir(h))

    @property
    def namespace(self):
        with self._guard as h:
            return _load().al_store_namespace(h).decode()

    @property
    def mount(self):
        with self._guard as h:
            return os.fsdecode(_load().al_store_mount(h))

    def close(self):
        """Releases the handle once the calls using it have returned.
        Closing twice is fine."""
        guard = getattr(self, "_guard", None)
        h = guard.close() if guard is not None else None
        if h and _lib is not None:
            _lib.al_store_close(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


def derive_key(call_id):
    """The store key for a raw tool call id (str or bytes), as the CLI's
    'agentlink key' prints it."""
    raw = _bytes(call_id, "call_id")
    out = ctypes.c_void_p()
    rc = _load().al_key_derive(raw, len(raw), ctypes.byref(out))
    if rc:
        _raise(rc, call_id)
    return _take_string(out).decode("utf-8")


def offload(tool, call_id, content, config=None, *, store=None, namespace=None, mount=None):
    """Returns what goes into the conversation for CONTENT, the result of
    TOOL for the raw CALL_ID, always as str: CONTENT itself when the policy
    keeps it (bytes decoded as UTF-8, each invalid sequence shown as U+FFFD,
    as read() does), else the pointer text naming its path under the mount
    (the result is stored, cut when over max_result_bytes). An empty result
    is never offloaded: "" comes back.

    config: a policy file path, a dict of the same JSON, or None for
    $OFFLOADFS_CONFIG (else the built-in default). Raises ConfigError for a
    refused policy (nothing is written)."""
    lib = _load()
    policy = _Policy(config)
    data = _bytes(content, "content")
    tool_b = _cstr(tool, "tool")
    if not lib.al_policy_decide(policy.ptr, tool_b, data, len(data), None, None):
        return _text(content)
    with ToolResultStore(store, namespace, mount, _policy=policy) as st:
        raw = _bytes(call_id, "call_id")
        out, outlen, done = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_int()
        with st._guard as h:
            rc = lib.al_offload(h, policy.ptr, tool_b, raw, len(raw), data, len(data),
                                ctypes.byref(out), ctypes.byref(outlen), ctypes.byref(done))
        if rc:
            _raise(rc, tool if rc == AL_ETOOL else call_id)
        text = _take_string(out, outlen.value)
    if not done.value:
        return _text(content)
    return text.decode("utf-8", "replace")
