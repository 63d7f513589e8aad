"""agentlink -- offload large tool results into an offloadfs store.

A ctypes binding of libagentlink; standard library only.

    import agentlink

    # What an agent runtime does after every tool call:
    text = agentlink.offload("bash", call_id, result)   # result, or a pointer

    # Haystack's ToolResultStore and OffloadPolicy protocols:
    store = agentlink.ToolResultStore()
    path = store.write(key="call_1", content="...")     # /large_tool_results/call_1
    store.read(path) == store.read("call_1")
    agentlink.PolicyFile().should_offload("bash", result, state)

read() raises FileNotFoundError for a key never written and EvictedError
(a LookupError) for one that was evicted or removed; the message says when
and why.

The library is found, in this order, through $AGENTLINK_LIB; next to the
build (../../build/libagentlink.so from this file); where 'make install'
put it (it records LIBDIR in the copy of this file it installs, relative to
that copy and absolute); by its soname (libagentlink.so.0) through the
dynamic loader (LD_LIBRARY_PATH, ld.so.cache: a make install into /usr/local
or /usr); next to the 'agentlink' program on the PATH (../lib), which is how
a copy installed by pip finds an install elsewhere.

Store, namespace and mount follow the precedence of doc/contract.md: argument,
then $OFFLOADFS_STORE / $OFFLOADFS_NAMESPACE / $OFFLOADFS_MOUNT, then the
policy file ($OFFLOADFS_CONFIG), then the defaults.
"""

import ctypes
import errno as _errno
import json as _json
import os
import re as _re
import shutil
import threading
import warnings
import weakref

__all__ = [
    "ToolResultStore",
    "PolicyFile",
    "EvictedError",
    "RemoteUnavailableError",
    "PendingUploadWarning",
    "ConfigError",
    "AgentlinkError",
    "offload",
    "derive_key",
]

__version__ = "0.1.0"

# make install rewrites these two lines in the copy it installs: the install's
# LIBDIR relative to that copy's directory, and absolute.
_LIBDIR_REL = None
_LIBDIR = None
_SONAME = "libagentlink.so.0"

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
AL_EUPLOAD = _BASE - 50
AL_EUNREACHABLE = _BASE - 52
AL_REASON_REMOVED = 2


class AgentlinkError(RuntimeError):
    """A store failure that is not about one key (damaged store, full map, ...)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class PendingUploadWarning(UserWarning):
    """On a store with a remote tier (agentlink init --remote): the result
    was stored here, and its path works on this host, but the upload to the
    remote failed; it is pending until 'agentlink sync' (or a later write)
    sends it. The message says why the upload failed."""


class RemoteUnavailableError(OSError):
    """On a store with a remote tier: the result is not in this host's
    store, and the store's remote could not be reached or refused, so
    whether it exists is unknown (neither FileNotFoundError nor
    EvictedError). errno is EIO, as the mount answers; the message names
    the remote and the cause. Retry when the remote is back."""


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
        ("where", ctypes.c_int),
    ]


_lib = None
_lib_lock = threading.Lock()


def _candidates():
    """Where the library may be, in the order of the module's docstring:
    (path, dlopen it even if the file is not there) pairs."""
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.normpath(os.path.join(here, "..", "..", "build", "libagentlink.so")), False
    if _LIBDIR_REL is not None:
        yield os.path.normpath(os.path.join(here, _LIBDIR_REL, _SONAME)), False
    if _LIBDIR is not None:
        yield os.path.join(_LIBDIR, _SONAME), False
    yield _SONAME, True
    prog = shutil.which("agentlink")
    if prog:
        yield os.path.join(os.path.dirname(os.path.realpath(prog)), "..", "lib", _SONAME), False


def _open_library():
    """Loads libagentlink from the first place that has it."""
    env = os.environ.get("AGENTLINK_LIB")
    if env:
        return ctypes.CDLL(env)
    tried = []
    for path, blind in _candidates():
        if blind or os.path.exists(path):
            try:
                return ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
                continue
        tried.append(path)
    raise OSError(
        "libagentlink.so not found: build it with 'make', install it with "
        "'make install', or set AGENTLINK_LIB; tried %s" % ", ".join(tried))


def _load():
    global _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        lib = _open_library()
        vp, cp, sz, i = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int
        pvp = ctypes.POINTER(ctypes.c_void_p)
        sigs = {
            "al_strerror": (cp, [i]),
            "al_version": (cp, []),
            "al_free": (None, [vp]),
            "al_key_derive": (i, [cp, sz, pvp]),
            "al_key_check": (i, [cp]),
            "al_tool_check": (i, [cp]),
            "al_policy_path": (cp, [vp]),
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
            "al_store_remote_message": (cp, [vp]),
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


class _TextError(UnicodeEncodeError):
    """A str argument (key, reference, namespace, tool, path) that is not
    well-formed text: it holds a lone surrogate, which no UTF-8 can hold.
    Still a UnicodeEncodeError, so a ValueError, for code that catches
    those; its message says what is wrong instead of the codec's words."""

    def __init__(self, what, value, err):
        super().__init__(err.encoding, err.object, err.start, err.end, err.reason)
        self.message = (
            "%s %r is not well-formed text: it holds a lone surrogate U+%04X at index %d, "
            "which is no character and has no UTF-8 form (U+DC80-U+DCFF, as os.fsdecode() "
            "makes them, stand for bytes and are taken as such); use a %s made of whole "
            "characters, or bytes" % (what, value, ord(value[err.start]), err.start, what))

    def __str__(self):
        return self.message


def _bytes(value, what):
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        try:
            return value.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError as e:
            raise _TextError(what, value, e) from None
    raise TypeError("%s must be str or bytes, not %s" % (what, type(value).__name__))


# A surrogate pair held as two code points, and a lone surrogate outside the
# surrogateescape range (U+DC80-U+DCFF, one byte each).
_PAIR = _re.compile("[\ud800-\udbff][\udc00-\udfff]")
_LONE = _re.compile("[\ud800-\udc7f\udd00-\udfff]")


def _data(value, what):
    """A result (str or bytes) as the bytes to store or decide on. str is
    UTF-8; a surrogate pair kept as two code points is its character; a
    surrogate from surrogateescape (os.fsdecode, U+DC80-U+DCFF) is its byte;
    any other lone surrogate, which no UTF-8 can hold, is stored as U+FFFD
    (as Node stores it) rather than refusing the whole result."""
    try:
        return _bytes(value, what)
    except UnicodeEncodeError:
        text = _PAIR.sub(lambda m: m.group().encode("utf-16-le", "surrogatepass")
                         .decode("utf-16-le"), value)
        return _LONE.sub("\ufffd", text).encode("utf-8", "surrogateescape")


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


def _store_key(key, what="key"):
    """The store key that write(key=KEY) uses, as bytes: KEY itself when it
    is a valid key, else the key 'agentlink key KEY' prints (so a nested
    "run_1/search_1.txt" becomes "run_1_search_1.txt~" and 16 hex digits).
    ValueError for a KEY that would leave a directory (absolute, or with a
    ".." component), as Haystack's FileSystemToolResultStore does, and for
    an empty one or one holding a NUL, which no file name can be either."""
    raw = _cstr(os.fspath(key), what)
    if not raw:
        raise ValueError("%s %r %s" % (what, key, _strerror(AL_ENAME_EMPTY)))
    if raw.startswith(b"/") or b".." in raw.split(b"/"):
        raise ValueError("%s %r would escape the store: absolute keys and '..' "
                         "components are refused" % (what, key))
    if _load().al_key_check(raw) == 0:
        return raw
    return derive_key(raw).encode()


def _type_name(cls):
    """The "type" of Haystack's serialised form: module and class name."""
    return "%s.%s" % (cls.__module__, cls.__name__)


def _from_dict(cls, data, names):
    """The keyword arguments of CLS for DATA, the shape to_dict() gives:
    {"type": "<module>.<Class>", "init_parameters": {...}}."""
    if not isinstance(data, dict) or "type" not in data:
        raise ValueError("%s.from_dict: expected {'type': %r, 'init_parameters': {...}}, got %r"
                         % (cls.__name__, _type_name(cls), data))
    if data["type"] != _type_name(cls):
        raise ValueError("%s.from_dict: type %r is not %r"
                         % (cls.__name__, data["type"], _type_name(cls)))
    params = data.get("init_parameters") or {}
    unknown = sorted(set(params) - set(names))
    if unknown:
        raise ValueError("%s.from_dict: unknown init parameter %s (expected %s)"
                         % (cls.__name__, ", ".join(map(repr, unknown)),
                            ", ".join(map(repr, names))))
    return params


def _plain(value):
    """An init parameter as to_dict() keeps it: None or str."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return os.fsdecode(os.fspath(value))


def _time(ns):
    buf = ctypes.create_string_buffer(40)
    return _load().al_time_format(ns, buf, len(buf)).decode()


def _warn_pending(h, subject):
    """A write that happened here, not on the remote (AL_EUPLOAD): a
    PendingUploadWarning saying why, raised where the caller wrote."""
    why = os.fsdecode(_load().al_store_remote_message(h) or b"")
    warnings.warn(PendingUploadWarning(
        "%r is stored here but not yet on the remote (%s); it is pending: "
        "agentlink sync sends it" % (subject, why)), stacklevel=3)


def _raise(code, subject, entry=None, h=None):
    """Turns a library code about SUBJECT (a key or reference) into the
    exception a Python user expects."""
    msg = _strerror(code)
    if code in (AL_ENOTFOUND, AL_ENOSTORE):
        raise FileNotFoundError(_errno.ENOENT, "no such result", subject)
    if code == AL_EUNREACHABLE:
        why = os.fsdecode(_load().al_store_remote_message(h) or b"") if h else ""
        raise RemoteUnavailableError(
            _errno.EIO, "cannot tell what %r holds: it is not here, and %s" % (subject, why or msg))
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


# Every open ToolResultStore, so that a forked child can give each its own
# handle (see _after_fork).
_stores = weakref.WeakSet()


def _after_fork():
    """In a child made by os.fork(): libagentlink's handles must not be used
    in a child (agentlink.h), and one that another thread of the parent was
    using at the fork has its mutex copied locked, so the child's first call
    would wait forever. Each open store gets a fresh handle on the same
    store, namespace and mount; the inherited one is left alone (closing it
    could wait on that same mutex). A closed store stays closed."""
    for st in list(_stores):
        st._reopen_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


class ToolResultStore:
    """Tool results in an offloadfs store, a drop-in for Haystack's
    ToolResultStore protocol (FileSystemToolResultStore's place):
    write(key=, content=) -> path, read(reference) -> str, to_dict(),
    from_dict(). Keys a Haystack hook makes (nested "run_1/search_1.txt"
    included) are mapped to store keys as write() says.

    store, namespace, mount: None takes the environment, then the policy
    file named by $OFFLOADFS_CONFIG, then the defaults. The handle is safe
    to share between threads, any number of stores on one directory may be
    made, used and closed by any threads at once (one per task is fine: they
    share one LMDB environment underneath), and a child made by os.fork() (multiprocessing,
    a preforking server) gets a handle of its own; close() it (or use "with") to release it
    early, otherwise it is released when collected. A call racing close()
    either finishes (close() waits for it) or raises ValueError("ToolResultStore
    is closed"); so does every call after close()."""

    # Haystack asks this: write() takes bytes too, but read() gives text,
    # so image and file results stay in the conversation.
    supports_binary_content = False

    def __init__(self, store=None, namespace=None, mount=None, *, _policy=None):
        self._guard = None
        self._init = {"store": _plain(store), "namespace": _plain(namespace),
                      "mount": _plain(mount)}
        self._args = (store, namespace, mount, _policy or _Policy(None))
        self._guard = _Guard(_open(*self._args))
        _stores.add(self)

    def _reopen_in_child(self):
        """After os.fork(), in the child: a new handle (see _after_fork)."""
        if self._guard is None or self._guard._h is None:
            return
        try:
            self._guard = _Guard(_open(*self._args))
        except Exception:
            self._guard = _Guard(None)  # every call: "ToolResultStore is closed"

    # -- Haystack's ToolResultStore protocol
    def write(self, *, key, content):
        """Stores CONTENT (str or bytes) under KEY, replacing any earlier
        result of that key, and returns its path under the mount. Content
        over the store's max_result_bytes keeps its head and tail; empty
        content is a 0-byte entry, as 'agentlink put' stores it. A lone
        surrogate in str content (no UTF-8 can hold one) is stored as U+FFFD;
        one from surrogateescape (U+DC80-U+DCFF) as its byte.

        KEY: a valid store key is used as it is; any other (a nested
        "run_1/search_1.txt", a dot file, one over 255 bytes) is mapped
        through the key derivation of 'agentlink key', and the path returned
        names the derived key (read() of the path, or of KEY itself, finds
        it). An absolute KEY or one with a ".." component raises ValueError,
        as Haystack's FileSystemToolResultStore does. A str KEY holding a lone
        surrogate (not U+DC80-U+DCFF) is not text: UnicodeEncodeError (a
        ValueError) saying so, where it is and what to do."""
        data = _data(content, "content")
        skey = _store_key(key)
        path = ctypes.c_void_p()
        with self._guard as h:
            rc = _load().al_store_put(h, skey, data, len(data), None,
                                      None, ctypes.byref(path))
            if rc == AL_EUPLOAD:
                _warn_pending(h, key)
        if rc and rc != AL_EUPLOAD:
            _raise(rc, key)
        return os.fsdecode(_take_string(path))

    def read(self, reference):
        """Returns the content stored for REFERENCE (the path write()
        returned, or the key given to write()) as str (invalid UTF-8 shown
        as U+FFFD). On a store with a remote, a result not here (evicted
        here, or written by another host) is read from the remote, as the
        mount does. Raises FileNotFoundError (never written), EvictedError,
        RemoteUnavailableError (not here, and the remote could not answer),
        or ValueError (a path outside the mount, or an escaping key)."""
        return self.read_bytes(reference).decode("utf-8", "replace")

    def to_dict(self):
        """Haystack's serialised form: {"type": "agentlink.ToolResultStore",
        "init_parameters": {"store", "namespace", "mount"}} as they were
        given: None stays None, so the environment decides at load time."""
        return {"type": _type_name(type(self)), "init_parameters": dict(self._init)}

    @classmethod
    def from_dict(cls, data):
        """The store to_dict() describes. Raises ValueError for another
        type or an unknown parameter."""
        return cls(**_from_dict(cls, data, ("store", "namespace", "mount")))

    # -- more
    def read_bytes(self, reference):
        """As read(), returning the exact stored bytes."""
        lib = _load()
        key = self.key_of(reference)
        buf, length, entry = ctypes.c_void_p(), ctypes.c_size_t(), _Entry()
        with self._guard as h:
            rc = lib.al_store_get(h, key.encode("utf-8", "surrogateescape"),
                                  ctypes.byref(buf), ctypes.byref(length), ctypes.byref(entry))
            if rc == AL_EUNREACHABLE:
                _raise(rc, reference, entry, h)
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
            if rc == AL_EUNREACHABLE:
                _raise(rc, reference, entry, h)
        if rc:
            _raise(rc, reference, entry)

    def key_of(self, reference):
        """The store key of REFERENCE: a path directly under the mount, or a
        key as write() takes it (mapped the same way)."""
        ref = os.fspath(reference)
        if not _bytes(ref, "reference").startswith(b"/"):
            return _store_key(ref, "reference").decode("utf-8", "surrogateescape")
        out = ctypes.c_void_p()
        with self._guard as h:
            rc = _load().al_store_key_of(h, _cstr(ref, "reference"), ctypes.byref(out))
        if rc:
            _raise(rc, reference)
        return _take_string(out).decode("utf-8", "surrogateescape")

    def path_of(self, key):
        """The path under the mount that write(key=KEY) returns."""
        skey = _store_key(key)
        out = ctypes.c_void_p()
        with self._guard as h:
            rc = _load().al_store_path_of(h, skey, ctypes.byref(out))
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


class PolicyFile:
    """The offload policy file as Haystack's OffloadPolicy: one JSON policy
    (the one 'agentlink offload' applies) for every agent.

    PATH: the policy file; None takes $OFFLOADFS_CONFIG when it is set and
    not empty, else the built-in default (offload over 32 KiB), the same
    precedence as 'agentlink offload' without --config. The file is read
    once, here: a refused file raises ConfigError with the CLI's message
    (the file, the field and what was expected).

    Give it to Haystack's ToolResultOffloadHook under "*" so the file's own
    rules decide for every tool:
        ToolResultOffloadHook(store=agentlink.ToolResultStore(),
                              offload_strategies={"*": agentlink.PolicyFile()})"""

    def __init__(self, path=None):
        self.path = _plain(path)
        self._policy = _Policy(path)

    def should_offload(self, tool_name, result, state=None):
        """True when the policy sends RESULT (str or bytes), the result of
        TOOL_NAME, to the store: the decision 'agentlink offload --tool
        TOOL_NAME' makes for the same bytes. STATE (Haystack's State) is not
        used. Raises ValueError for a tool name the CLI refuses (empty, over
        255 bytes, not UTF-8, control characters)."""
        tool = _cstr(tool_name, "tool")
        lib = _load()
        if lib.al_tool_check(tool):
            raise ValueError("tool %r: %s" % (tool_name, _strerror(AL_ETOOL)))
        data = _data(result, "result")
        return bool(lib.al_policy_decide(self._policy.ptr, tool, data, len(data), None, None))

    @property
    def source(self):
        """The file the policy was read from, or None for the built-in default."""
        path = _load().al_policy_path(self._policy.ptr)
        return None if path is None else os.fsdecode(path)

    def to_dict(self):
        """Haystack's serialised form: {"type": "agentlink.PolicyFile",
        "init_parameters": {"path": PATH}}; None stays None, so
        $OFFLOADFS_CONFIG decides at load time."""
        return {"type": _type_name(type(self)), "init_parameters": {"path": self.path}}

    @classmethod
    def from_dict(cls, data):
        """The policy to_dict() describes, read again from its file."""
        return cls(**_from_dict(cls, data, ("path",)))

    def __repr__(self):
        return "agentlink.PolicyFile(%r)" % (self.path,)


def derive_key(call_id):
    """The store key for a raw tool call id (str or bytes), as the CLI's
    'agentlink key' prints it."""
    raw = _data(call_id, "call_id")
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

    config: a policy file path, a dict of the same JSON, a PolicyFile, or
    None for $OFFLOADFS_CONFIG (else the built-in default). Raises
    ConfigError for a refused policy, ValueError for a tool name the CLI
    refuses (nothing is written)."""
    lib = _load()
    policy = config._policy if isinstance(config, PolicyFile) else _Policy(config)
    data = _data(content, "content")
    tool_b = _cstr(tool, "tool")
    if lib.al_tool_check(tool_b):
        raise ValueError("tool %r: %s" % (tool, _strerror(AL_ETOOL)))
    if not lib.al_policy_decide(policy.ptr, tool_b, data, len(data), None, None):
        return _text(content)
    with ToolResultStore(store, namespace, mount, _policy=policy) as st:
        raw = _data(call_id, "call_id")
        out, outlen, done = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_int()
        with st._guard as h:
            rc = lib.al_offload(h, policy.ptr, tool_b, raw, len(raw), data, len(data),
                                ctypes.byref(out), ctypes.byref(outlen), ctypes.byref(done))
            if rc == AL_EUPLOAD:
                _warn_pending(h, call_id)
        if rc and rc != AL_EUPLOAD:
            _raise(rc, tool if rc == AL_ETOOL else call_id)
        text = _take_string(out, outlen.value)
    if not done.value:
        return _text(content)
    return text.decode("utf-8", "replace")
