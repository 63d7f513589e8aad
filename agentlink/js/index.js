/**
 * agentlink/js -- OffloadBackend, a deepagents backend that keeps the large
 * tool results deepagents spills to `/large_tool_results/` in a bounded
 * offloadfs store.
 *
 *     import { CompositeBackend, StateBackend } from "deepagents";
 *     import { OffloadBackend } from "agentlink";
 *     const backend = new CompositeBackend(new StateBackend(), {
 *       "/large_tool_results/": new OffloadBackend(),
 *     });
 *
 * How it works, and why:
 * - Writes go through the `agentlink` CLI (`agentlink put KEY --tool ...`,
 *   the content on stdin): one process per write, so the backend needs no
 *   native addon and no npm package at run time; the CLI applies the store's
 *   bound (evicting the oldest results) and fsyncs before it exits, and once
 *   it has exited every running mount shows the new bytes (read-your-writes).
 * - Listings (ls, glob, and the names grep searches) are the mount's, and
 *   `agentlink ls --json` beside it completes them: every live result of
 *   the namespace, here and on the store's remote, with no time limit while
 *   the CLI keeps printing (the mount's readdir answers within its own wait
 *   for the remote, and cannot say it is short). When the remote cannot be
 *   reached the CLI lists what is held here and exits 6; the answer then
 *   says it is incomplete where the model sees it (#partialNote()).
 * - Reads (and grep's reads) read the files under the offloadfs mount
 *   with node:fs, as a shell tool would, once the mount has said that it
 *   serves this store and namespace: offloadfs sets user.offloadfs.store and
 *   user.offloadfs.namespace on its root, which Node cannot read, so the CLI
 *   reads them (`agentlink stats --json`, its "mount" member) once per
 *   mount, told apart by mount id, device and the root's ctime (the
 *   daemon's start). When no mount serving them is up at the mount path,
 *   they fall back to the CLI (`agentlink get`): slower (a process per
 *   file), same answers, never another namespace's or another store's.
 *   So they do when the mount's daemon has died (ENOTCONN) or a read has
 *   not answered within 2 s (stopped, wedged): no call waits on it longer,
 *   and none is shortened by it (the CLI reads the whole result).
 * - A name that is a valid store key is the key. Any other name (nested
 *   paths, a leading dot, control characters) goes through `agentlink key`,
 *   which derives the same key from the same name every time, so reading
 *   the name again finds it; the name is kept in the entry's tool field
 *   (`deepagents:NAME`) so that ls, glob and grep show the name deepagents
 *   used rather than the derived key.
 * - The mount is read-only: edit answers an error. An evicted result answers
 *   an error saying when and why it was evicted and to run the tool again.
 *
 * Nothing but Node's own modules is imported at run time.
 */
import { spawn } from "node:child_process";
import { promises as fsp, readFileSync, realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  mimeOf, isBinaryName, keyRuleBroken, badFileName, loneSurrogate,
  isToolName, nameOf, dirPrefix, unescapeMountinfo, globToRegExp,
} from "./names.js";

/** The tool name recorded for every result this backend stores. */
const TOOL = "deepagents";
/** Tool field of an entry whose key was derived from NAME: TOOL + ":" + NAME. */
const NAMED_TOOL_PREFIX = `${TOOL}:`;
/** What deepagents' own backends answer for an empty file. */
const EMPTY_CONTENT_WARNING = "System reminder: File exists but has empty contents";
/** A derived key ends in '~' and 16 lowercase hex digits (agentlink.h). */
const DERIVED_KEY = /~[0-9a-f]{16}$/;
/**
 * No CLI call may hang an agent: one that prints nothing for this long is
 * killed (and the call answers an error saying so). Output restarts the
 * count, so a long listing or a large result is never cut by it.
 */
const CLI_TIMEOUT_MS = 60_000;
/**
 * A mount access (the root's stat, one read) that takes longer than this is
 * left to finish on its own, and the call asks the CLI instead: a stopped
 * or wedged daemon blocks every access to its mount until it runs again,
 * and must not hang the agent. The CLI reads the store without the daemon.
 */
const MOUNT_TIMEOUT_MS = 2_000;
/** Derived keys remembered per backend (name -> key) before the cache is reset. */
const KEY_CACHE_MAX = 4096;
/**
 * A mount that said nothing about what it serves (its daemon did not answer
 * or is gone, an offloadfs older than the attributes) is asked again after
 * this long; until then the CLI answers. What a mount said is kept for as
 * long as it is mounted: one mount serves one store and namespace.
 */
const MOUNT_RECHECK_MS = 5_000;
/** Mounts whose answer is remembered at most (oldest dropped first). */
const MOUNT_VERDICTS_MAX = 64;
/**
 * The CLI's exit status for "stored here, not yet on the store's remote
 * tier" (doc/contract.md): the write succeeded on this host and the result
 * is pending upload (`agentlink sync`, or the next write, sends it).
 */
const EXIT_PENDING = 5;
/**
 * The CLI's exit status for "the store's remote could not be reached": for
 * `ls`, after it printed every result held here (the answer is partial);
 * for `get`, a result this host does not hold (the answer is unknown).
 */
const EXIT_UNREACHABLE = 6;
/** Results grep reads at once (each a mount read or an `agentlink get`). */
const GREP_READS_AT_ONCE = 8;

function noStore(r) {
  if (r.code !== 1) return false;
  try {
    return JSON.parse(r.stdout.toString("utf8")).error === "no_store";
  } catch {
    return false;
  }
}

/**
 * Whether a mount error means the offloadfs daemon is gone while its mount
 * is still listed (killed or crashed: "Transport endpoint is not
 * connected"), or does not answer (MOUNT_SLOW). The store is intact then,
 * and the CLI can answer.
 */
function deadMount(e) {
  return e?.code === "ENOTCONN" || e?.code === "ECONNABORTED" || e?.code === MOUNT_SLOW;
}

/** The code of the error #onMount() rejects with past MOUNT_TIMEOUT_MS. */
const MOUNT_SLOW = "OFFLOADFS_MOUNT_SLOW";

/**
 * Runs the CLI. Resolves { code, stdout (Buffer), stderr (string), signal,
 * timedOut } (timedOut: killed after CLI_TIMEOUT_MS without a byte of
 * output), or { code: null, spawnError } when it could not be started;
 * never rejects.
 */
function runCli(bin, args, input) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(bin, args, { stdio: ["pipe", "pipe", "pipe"] });
    } catch (spawnError) {
      resolve({ code: null, spawnError, stdout: Buffer.alloc(0), stderr: "" });
      return;
    }
    const out = [];
    const err = [];
    let spawnError = null;
    // Our own timer, not spawn's timeout option: that one is never cleared
    // when the program cannot be started, and would hold the process 60 s.
    // It counts silence, not the whole run: a long listing or a large
    // result that keeps coming is let finish.
    let timedOut = false;
    let timer;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => { timedOut = true; child.kill("SIGKILL"); }, CLI_TIMEOUT_MS);
    };
    arm();
    child.stdout.on("data", (d) => { out.push(d); arm(); });
    child.stderr.on("data", (d) => { err.push(d); arm(); });
    child.stdin.on("error", () => {}); // EPIPE when the CLI exits early: its status says why
    child.on("error", (e) => { spawnError = e; });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({
        code: spawnError ? null : code,
        signal,
        timedOut,
        spawnError,
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(err).toString("utf8").trim(),
      });
    });
    child.stdin.end(input ?? null);
  });
}

/**
 * A deepagents backend (BackendProtocolV2 of deepagents 1.14) for the
 * `/large_tool_results/` route of a CompositeBackend, backed by an offloadfs
 * store: `write` stores through the `agentlink` CLI, reads come from the
 * offloadfs mount (or the CLI when no mount of the store is up).
 */
export class OffloadBackend {
  /** @type {string} */ #store;
  /** @type {string | null} */ #namespace;
  /** @type {string | undefined} */ #namespaceGiven;
  /** @type {string} */ #mount;
  /** @type {string | undefined} */ #mountGiven;
  /** @type {string} */ #cli;
  /** @type {Map<string, string>} name -> derived key */ #keys = new Map();
  /** Mount accesses still blocked past MOUNT_TIMEOUT_MS: while any is, the mount counts as down. */
  #stuck = 0;
  /**
   * What each mount seen at the mount path said, by its identity (mount id,
   * device, root ctime): { serves, until } (until: when to ask again), or
   * { asking } (a promise of serves) while the CLI is asked.
   */
  #verdicts = new Map();

  /**
   * @param {object} [options]
   * @param {string} [options.store] Store directory. Else $OFFLOADFS_STORE,
   *   else /var/lib/offloadfs as root, else
   *   ${XDG_STATE_HOME:-$HOME/.local/state}/offloadfs (as the CLI).
   * @param {string} [options.namespace] Namespace. Else $OFFLOADFS_NAMESPACE,
   *   else the policy file's ($OFFLOADFS_CONFIG), else "default": the CLI
   *   resolves what is not given here, as the daemon does (doc/contract.md).
   *   The mount should show the same namespace (-o namespace=NS); a mount
   *   of another namespace or another store is never read from (it says
   *   what it serves): the CLI answers instead.
   * @param {string} [options.mount] Absolute path where offloadfs mounts the
   *   store. Else $OFFLOADFS_MOUNT, else /large_tool_results (reads look for
   *   a mount there; paths the CLI prints follow the policy file's "mount"
   *   when neither is given).
   * @param {string} [options.agentlink] Path of the agentlink CLI (a
   *   relative one is resolved here, as store is); default "agentlink" on
   *   the PATH.
   * @throws {Error} naming the option when a namespace breaks the key rules
   *   or the mount is not an absolute path.
   */
  constructor(options = {}) {
    const env = process.env;
    const pick = (flag, name) => (flag !== undefined && flag !== null && flag !== "" ? String(flag)
      : name && env[name] ? env[name] : undefined);
    const store = pick(options.store, "OFFLOADFS_STORE") ??
      (process.getuid?.() === 0 ? "/var/lib/offloadfs"
        : path.join(env.XDG_STATE_HOME || path.join(os.homedir(), ".local/state"), "offloadfs"));
    this.#store = path.resolve(store);
    // The CLI gets only the namespace and mount the caller gave: it resolves
    // the rest (environment, then the policy file $OFFLOADFS_CONFIG, then
    // the default) as the daemon and every other program do.
    this.#namespaceGiven = pick(options.namespace, undefined);
    this.#namespace = pick(options.namespace, "OFFLOADFS_NAMESPACE") ?? null;
    this.#mountGiven = pick(options.mount, undefined);
    this.#mount = pick(options.mount, "OFFLOADFS_MOUNT") ?? "/large_tool_results";
    this.#cli = options.agentlink ? String(options.agentlink) : "agentlink";
    // A path with a '/' is resolved now, as the store is: an agent that
    // chdir's later must still find the same program. A bare name is
    // looked up on the PATH at each call.
    if (this.#cli.includes("/")) this.#cli = path.resolve(this.#cli);
    const bad = this.#namespace === null ? null : keyRuleBroken(this.#namespace);
    if (bad) throw new Error(`OffloadBackend: namespace '${this.#namespace}' ${bad}`);
    if (!path.isAbsolute(this.#mount)) {
      throw new Error(`OffloadBackend: mount '${this.#mount}' is not an absolute path`);
    }
    this.#mount = path.resolve(this.#mount);
  }

  /** The store directory this backend writes to (absolute). */
  get store() { return this.#store; }
  /**
   * The namespace inside the store, as given (option, else
   * $OFFLOADFS_NAMESPACE); null when neither is: the CLI takes the policy
   * file's, else "default".
   */
  get namespace() { return this.#namespace; }
  /** The mount path the reads come from when an offloadfs mount is up there. */
  get mount() { return this.#mount; }
  /** The agentlink CLI this backend runs. */
  get agentlink() { return this.#cli; }

  // ---- the protocol ------------------------------------------------------

  /**
   * Lists the results directly in a directory of the route (non-recursive).
   * Names with a '/' (written by a model's write_file, never by deepagents'
   * eviction) show as directories, with a trailing '/' and is_dir true.
   *
   * @param {string} dirPath Absolute directory path within the route ("/").
   * @returns {Promise<{files?: Array<{path: string, is_dir?: boolean, size?: number,
   *   modified_at?: string}>, error?: string}>} The entries, sorted by path; an
   *   error only when the store cannot be read.
   */
  async ls(dirPath = "/") {
    const listed = await this.#list();
    if (listed.error) return { error: `Error listing '${dirPath}': ${listed.error}` };
    const prefix = dirPrefix(dirPath);
    const files = [];
    const dirs = new Set();
    for (const e of listed.entries) {
      if (!e.name.startsWith(prefix)) continue;
      const rest = e.name.slice(prefix.length);
      const slash = rest.indexOf("/");
      if (slash !== -1) { dirs.add(`/${prefix}${rest.slice(0, slash)}/`); continue; }
      files.push(this.#info(e));
    }
    for (const d of dirs) files.push({ path: d, is_dir: true, size: 0, modified_at: "" });
    files.sort((a, b) => a.path.localeCompare(b.path));
    if (listed.partial) {
      const partial = this.#partialNote("listed", listed.partial);
      files.unshift({ path: `/${partial}`, is_dir: false, size: 0, modified_at: "" });
      return { files, partial };
    }
    return { files };
  }

  /**
   * Reads a result, paginated by lines as deepagents' own backends do.
   *
   * @param {string} filePath Absolute path within the route ("/call_1.txt").
   * @param {number} [offset=0] First line to return, 0-based.
   * @param {number} [limit=500] Most lines to return.
   * @returns {Promise<{content?: string | Uint8Array, mimeType?: string,
   *   totalLines?: number, startLine?: number, endLine?: number,
   *   nextOffset?: number, error?: string}>} The lines, or an error that says
   *   whether the result was evicted (when, why, run the tool again), never
   *   written, or the store is unavailable.
   */
  async read(filePath, offset = 0, limit = 500) {
    const got = await this.#readBytes(filePath, "reading");
    if (got.error) return { error: got.error };
    const mimeType = mimeOf(nameOf(filePath));
    if (isBinaryName(nameOf(filePath))) return { content: new Uint8Array(got.bytes), mimeType };
    const text = got.bytes.toString("utf8");
    if (text.trim() === "") return { content: EMPTY_CONTENT_WARNING, mimeType };
    const off = Number.isFinite(offset) ? Math.max(0, Math.floor(offset)) : 0;
    const lim = Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : 0;
    const lines = text.split("\n");
    const totalLines = lines[lines.length - 1] === "" ? lines.length - 1 : lines.length;
    if (off >= totalLines) {
      return { error: `Line offset ${off} exceeds file length (${totalLines} lines)` };
    }
    const selected = lines.slice(off, Math.min(off + lim, lines.length));
    if (selected.length === 0 || lim === 0) return { content: selected.join("\n"), mimeType };
    const end = Math.min(off + lim, totalLines);
    return {
      content: selected.join("\n"),
      mimeType,
      totalLines,
      startLine: off + 1,
      endLine: end,
      nextOffset: end < totalLines ? end : undefined,
    };
  }

  /**
   * Reads a whole result as deepagents FileData (v2).
   *
   * @param {string} filePath Absolute path within the route.
   * @returns {Promise<{data?: {content: string | Uint8Array, mimeType: string,
   *   created_at: string, modified_at: string}, error?: string}>} created_at and
   *   modified_at are both the time the result was stored.
   */
  async readRaw(filePath) {
    const got = await this.#readBytes(filePath, "reading", true);
    if (got.error) return { error: got.error };
    const name = nameOf(filePath);
    const when = got.mtime.toISOString();
    return {
      data: {
        content: isBinaryName(name) ? new Uint8Array(got.bytes) : got.bytes.toString("utf8"),
        mimeType: mimeOf(name),
        created_at: when,
        modified_at: when,
      },
    };
  }

  /**
   * Stores CONTENT under the file's name (a rerun of the same tool call
   * replaces it), through `agentlink put`. The store evicts its oldest
   * results to stay under max_total_bytes, and cuts a result longer than
   * max_result_bytes to its head and tail with a marked gap.
   *
   * @param {string} filePath Absolute path within the route ("/call_1.txt").
   * @param {string} content The text (base64 for binary types such as .png,
   *   as deepagents sends them).
   * @returns {Promise<{path?: string, filesUpdate?: null, metadata?: object,
   *   error?: string}>} The path, and metadata.offloadfs the file under the
   *   mount. On a store with a remote tier whose upload failed the write
   *   still succeeds (the result is stored and readable here):
   *   metadata.pending then holds the CLI's line saying why it is not yet on
   *   the remote. On failure an error, which deepagents' eviction turns
   *   into "the result could not be saved"; nothing is lost silently.
   */
  async write(filePath, content) {
    const name = nameOf(filePath);
    const bad = badFileName(name);
    if (bad) return { error: `Error writing file '${filePath}': ${bad}` };
    const bytes = isBinaryName(name) ? Buffer.from(String(content), "base64")
      : Buffer.from(String(content ?? ""), "utf8");
    const put = await this.#put(name, bytes);
    if (put.error) return { error: `Error writing file '${filePath}': ${put.error}` };
    const metadata = { offloadfs: put.mountPath };
    if (put.pending) metadata.pending = put.pending;
    return { path: filePath, filesUpdate: null, metadata };
  }

  /**
   * Results are read-only: always answers an error saying so.
   *
   * @param {string} filePath Absolute path within the route.
   * @returns {Promise<{error: string}>}
   */
  async edit(filePath, _oldString, _newString, _replaceAll = false) {
    return {
      error: `Error: '${filePath}' is read-only: a stored tool result is kept exactly as ` +
        "the tool returned it and cannot be edited. Read it, then write what you need to a " +
        "file outside this directory and edit that.",
    };
  }

  /**
   * Searches the results for a literal text (not a regular expression).
   *
   * @param {string} pattern Literal text.
   * @param {string | null} [dirPath="/"] A directory within the route, or one
   *   result's path.
   * @param {string | null} [glob=null] Only results whose file name matches.
   * @param {number | null} [maxCount=null] Most matches to return; more sets
   *   `truncated`.
   * @returns {Promise<{matches?: Array<{path: string, line: number, text: string}>,
   *   truncated?: boolean, error?: string}>} Matches in path order, 1-based
   *   line numbers; an error when the one result searched was evicted or the
   *   store cannot be read.
   */
  async grep(pattern, dirPath = "/", glob = null, maxCount = null) {
    const listed = await this.#list();
    if (listed.error) return { error: `Error searching '${dirPath || "/"}': ${listed.error}` };
    const exact = nameOf(dirPath);
    let targets = listed.entries.filter((e) => e.name === exact);
    if (targets.length === 0) {
      const prefix = dirPrefix(dirPath);
      targets = listed.entries.filter((e) => e.name.startsWith(prefix));
      if (targets.length === 0 && exact !== "" && !exact.endsWith("/")) {
        // One result named, and it is not live: say why when it was evicted.
        const got = await this.#readBytes(`/${exact}`, "searching");
        if (got.error && got.evicted) return { error: got.error };
      }
    }
    if (glob) {
      const re = globToRegExp(glob);
      targets = targets.filter((e) => re.test(e.name.slice(e.name.lastIndexOf("/") + 1)));
    }
    targets = targets.filter((e) => !isBinaryName(e.name));
    targets.sort((a, b) => a.name.localeCompare(b.name));
    const cap = maxCount === null || maxCount === undefined ? Infinity : maxCount;
    const matches = [];
    let truncated = false;
    let unread = null; // why results held only on the remote could not be read
    // A few reads at a time (results only on the remote are each a fetch),
    // their matches taken in path order.
    outer: for (let at = 0; at < targets.length; at += GREP_READS_AT_ONCE) {
      const batch = targets.slice(at, at + GREP_READS_AT_ONCE);
      const got = await Promise.all(batch.map((e) => this.#readBytes(`/${e.name}`, "searching")));
      for (let j = 0; j < batch.length; j++) {
        const g = got[j];
        if (g.error) {
          if (g.evicted || g.missing) continue; // evicted since the listing
          if (g.unreachable) { unread ??= g.error; continue; }
          return { error: g.error };
        }
        const lines = g.bytes.toString("utf8").split("\n");
        for (let i = 0; i < lines.length; i++) {
          if (!lines[i].includes(pattern)) continue;
          if (matches.length >= cap) { truncated = true; break outer; }
          matches.push({ path: `/${batch[j].name}`, line: i + 1, text: lines[i] });
        }
      }
    }
    const out = truncated ? { matches, truncated } : { matches };
    if (listed.partial || unread) {
      // First, so that it is seen whatever the output mode: deepagents
      // shows only the paths for files_with_matches. Not `truncated`: the
      // grep tool would add that the match count cap was hit.
      out.partial = this.#partialNote("searched", listed.partial ?? unread);
      matches.unshift({ path: `/${out.partial}`, line: 0, text: "(no match: see the note in the path)" });
    }
    return out;
  }

  /**
   * Finds results whose path (relative to SEARCHPATH) matches a glob
   * pattern: `*`, `**`, `?`, `{a,b}`, `[...]`; dot files match too.
   *
   * @param {string} pattern Glob pattern, e.g. "*.txt" or "**\/call_*".
   * @param {string} [searchPath="/"] Directory within the route.
   * @returns {Promise<{files?: Array<{path: string, is_dir?: boolean, size?: number,
   *   modified_at?: string}>, error?: string}>} Sorted by path.
   */
  async glob(pattern, searchPath = "/") {
    const listed = await this.#list();
    if (listed.error) return { error: `Error finding files in '${searchPath}': ${listed.error}` };
    const prefix = dirPrefix(searchPath);
    const re = globToRegExp(String(pattern).replace(/^\/+/, ""));
    const files = listed.entries
      .filter((e) => e.name.startsWith(prefix) && re.test(e.name.slice(prefix.length)))
      .map((e) => this.#info(e));
    files.sort((a, b) => a.path.localeCompare(b.path));
    if (listed.partial) {
      const partial = this.#partialNote("matched", listed.partial);
      files.unshift({ path: `/${partial}`, is_dir: false, size: 0, modified_at: "" });
      return { files, truncated: true, partial };
    }
    return { files };
  }

  /**
   * Stores each [path, bytes] pair as write() does (bytes as they are).
   *
   * @param {Array<[string, Uint8Array]>} files
   * @returns {Promise<Array<{path: string, error: "file_not_found" |
   *   "permission_denied" | "is_directory" | "invalid_path" | null}>>}
   *   "invalid_path" for a name that is no file name or a store that refused
   *   the write.
   */
  async uploadFiles(files) {
    const out = [];
    for (const [filePath, content] of files) {
      const name = nameOf(filePath);
      if (name === "" || name.endsWith("/")) { out.push({ path: filePath, error: "is_directory" }); continue; }
      if (badFileName(name)) { out.push({ path: filePath, error: "invalid_path" }); continue; }
      const put = await this.#put(name, Buffer.from(content.buffer, content.byteOffset, content.byteLength));
      out.push({ path: filePath, error: put.error ? "invalid_path" : null });
    }
    return out;
  }

  /**
   * Returns the stored bytes of each path.
   *
   * @param {string[]} paths
   * @returns {Promise<Array<{path: string, content: Uint8Array | null,
   *   error: "file_not_found" | "permission_denied" | "is_directory" |
   *   "invalid_path" | null}>>} "file_not_found" for a never-written or
   *   evicted result.
   */
  async downloadFiles(paths) {
    const out = [];
    for (const filePath of paths) {
      const got = await this.#readBytes(filePath, "reading");
      if (got.error) {
        out.push({ path: filePath, content: null, error: got.missing || got.evicted ? "file_not_found" : "invalid_path" });
      } else out.push({ path: filePath, content: new Uint8Array(got.bytes), error: null });
    }
    return out;
  }

  // ---- store and mount -----------------------------------------------------

  #info(e) {
    return { path: `/${e.name}`, is_dir: false, size: e.size, modified_at: e.mtime.toISOString() };
  }

  #cliArgs(...rest) {
    const given = [];
    if (this.#namespaceGiven !== undefined) given.push("--namespace", this.#namespaceGiven);
    if (this.#mountGiven !== undefined) given.push("--mount", path.resolve(this.#mountGiven));
    return ["--store", this.#store, ...given, ...rest];
  }

  /** Why a CLI run failed, in words a model can act on. */
  #cliFailure(r) {
    if (r.spawnError) {
      return r.spawnError.code === "ENOENT"
        ? `the offloadfs store is unavailable: the agentlink CLI '${this.#cli}' was not found ` +
          "(install offloadfs, or pass OffloadBackend the agentlink option)"
        : `the offloadfs store is unavailable: cannot run '${this.#cli}': ${r.spawnError.message}`;
    }
    if (r.timedOut) {
      return "the offloadfs store is unavailable: agentlink printed nothing for " +
        `${CLI_TIMEOUT_MS / 1000} s and was stopped`;
    }
    if (r.signal) return `the offloadfs store is unavailable: agentlink was killed (${r.signal})`;
    return `the offloadfs store is unavailable: ${r.stderr || `agentlink exited with status ${r.code}`}`;
  }

  /**
   * The store key of NAME: NAME itself when it is a valid key, else
   * `agentlink key NAME`. A name that is not well-formed Unicode is refused:
   * argv would turn its lone surrogates into U+FFFD, and it would share the
   * key of the name that has U+FFFD there.
   */
  async #keyOf(name) {
    const lone = loneSurrogate(name);
    if (lone) return { error: lone };
    if (keyRuleBroken(name) === null) return { key: name };
    const cached = this.#keys.get(name);
    if (cached) return { key: cached };
    if (name.includes("\0")) return { error: "the name contains a NUL character" };
    const r = await runCli(this.#cli, ["key", "--", name]);
    if (r.code !== 0) return { error: this.#cliFailure(r) };
    const key = r.stdout.toString("utf8").replace(/\n$/, "");
    if (this.#keys.size >= KEY_CACHE_MAX) this.#keys.clear();
    this.#keys.set(name, key);
    return { key };
  }

  /**
   * `agentlink put` of BYTES under NAME's key. Resolves { mountPath }, or
   * { mountPath, pending } when the CLI exits 5 (stored here, not yet on
   * the store's remote tier: PENDING is the CLI's line saying why), or
   * { error }.
   */
  async #put(name, bytes) {
    const k = await this.#keyOf(name);
    if (k.error) return k;
    const named = `${NAMED_TOOL_PREFIX}${name}`;
    const tool = k.key !== name && isToolName(named) ? named : TOOL;
    const r = await runCli(this.#cli, this.#cliArgs("put", "--tool", tool, "--", k.key), bytes);
    if (r.code !== 0 && r.code !== EXIT_PENDING) return { error: this.#cliFailure(r) };
    // Only the newline put ends with: a key may end in a space.
    const mountPath = r.stdout.toString("utf8").replace(/\n$/, "");
    if (r.code === EXIT_PENDING) {
      return { mountPath, pending: r.stderr || "stored here, not yet on the remote (pending)" };
    }
    return { mountPath };
  }

  /**
   * Is a mount serving this store and namespace up at the mount path? The
   * mount table is read on every call (a mount comes and goes): the last
   * mount at that path must be a FUSE mount, and say (through the CLI, once
   * per mount) that it serves this store and namespace.
   */
  async #mountUp() {
    if (this.#stuck > 0) return false;
    const id = await this.#mountId();
    if (id === null) return false;
    const v = this.#verdicts.get(id);
    if (v?.asking) return v.asking;
    if (v && Date.now() < v.until) return v.serves;
    const asking = this.#askMount(id);
    this.#verdicts.set(id, { asking });
    return asking;
  }

  /**
   * The identity of the FUSE mount last mounted at the mount path: mount
   * id, device and the root's ctime (the daemon's start: ids and devices
   * are reused as soon as a mount goes), or null when none is there or it
   * does not answer within MOUNT_TIMEOUT_MS (deadMount()).
   */
  async #mountId() {
    // Synchronous on purpose: /proc and realpath answer from memory, and
    // fs.promises.readFile of a /proc file costs ten times more (0.6 ms).
    let text;
    try {
      text = readFileSync("/proc/self/mountinfo", "utf8");
    } catch {
      return null;
    }
    let where = this.#mount;
    try {
      where = path.join(realpathSync(path.dirname(this.#mount)), path.basename(this.#mount));
    } catch { /* the parent is missing: nothing is mounted there */ }
    let dev = null;
    for (const line of text.split("\n")) {
      const f = line.split(" ");
      if (f.length < 10 || unescapeMountinfo(f[4]) !== where) continue;
      const dash = f.indexOf("-", 6);
      if (dash === -1) continue;
      dev = f[dash + 1].startsWith("fuse") ? `${f[0]} ${f[2]}` : null;
    }
    if (dev === null) return null;
    try {
      const st = await this.#onMount(() => fsp.stat(this.#mount, { bigint: true }));
      return `${dev} ${st.ctimeNs}`;
    } catch {
      return null; // gone or stopped: the CLI answers
    }
  }

  /**
   * Asks the CLI whether the mount ID (#mountId()) serves this store and
   * namespace (`agentlink stats --json`, its "mount" member: the mount's
   * own user.offloadfs.* attributes) and remembers the answer. A CLI that
   * fails (no store yet) is asked again on the next call.
   */
  async #askMount(id) {
    // The mount path the reads use, whatever the policy file says: the
    // answer must be about that mount. The namespace is the CLI's, as for
    // writes.
    const args = this.#mountGiven === undefined
      ? this.#cliArgs("--mount", this.#mount, "--json", "stats") : this.#cliArgs("--json", "stats");
    const r = await runCli(this.#cli, args);
    let m = null;
    if (r.code === 0) {
      try { m = JSON.parse(r.stdout.toString("utf8")).mount ?? null; } catch { /* no answer */ }
    }
    const serves = m?.serves === true;
    // The answer is about the mount there when the CLI looked: keep it only
    // when that is still the mount this call found.
    if (!m || (await this.#mountId()) !== id) {
      this.#verdicts.delete(id);
      return false;
    }
    const said = serves || typeof m.store === "string";
    if (this.#verdicts.size >= MOUNT_VERDICTS_MAX) this.#verdicts.delete(this.#verdicts.keys().next().value);
    this.#verdicts.set(id, { serves, until: said ? Infinity : Date.now() + MOUNT_RECHECK_MS });
    return serves;
  }

  /**
   * Runs OP (async work on the mount) for at most MOUNT_TIMEOUT_MS. Past it,
   * rejects with code MOUNT_SLOW (deadMount() is true: callers ask the CLI)
   * and counts OP as stuck until it settles, so that no later call waits
   * on the same blocked daemon (each blocked access also holds one of
   * Node's few file-system threads).
   */
  async #onMount(op) {
    const work = op();
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => {
        this.#stuck++;
        work.then(() => {}, () => {}).finally(() => { this.#stuck--; });
        reject(Object.assign(new Error(`the offloadfs mount ${this.#mount} did not answer within ` +
          `${MOUNT_TIMEOUT_MS} ms`), { code: MOUNT_SLOW }));
      }, MOUNT_TIMEOUT_MS);
    });
    try {
      return await Promise.race([work, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Every live result of the namespace, here and on the store's remote:
   * { entries: [{ name, key, size, mtime }], partial? } or { error }.
   * PARTIAL (the CLI's words) when the remote could not be reached: the
   * entries are then the results held here only.
   *
   * With a mount up the entries are the mount's (readdir, a stat per
   * name): what it serves is what is listed. The mount's readdir cannot
   * say whether it is complete, though: it waits a bounded time for the
   * remote, then answers with the local names and the daemon's last
   * snapshot. So `agentlink ls --json` runs beside it, the one listing
   * that is complete or says it is not (exit 6): it adds the names the
   * mount has not listed yet, gives deepagents' name of a derived key (the
   * tool field), says whether the answer is partial, and is the whole
   * answer when the mount is down or does not answer in time. It has no
   * time limit as long as it keeps printing (runCli()).
   */
  async #list() {
    const [cli, seen] = await Promise.all([this.#cliList(), this.#mountList()]);
    // Partial: the results held here, as the note says; the mount may
    // still list names of its last snapshot of the remote, which it cannot
    // read now either.
    if (cli.error || cli.partial || !seen) return cli;
    const byKey = new Map(cli.entries.map((e) => [e.key, e]));
    const entries = seen.map((m) => ({ ...m, name: byKey.get(m.key)?.name ?? m.key }));
    const listed = new Set(seen.map((m) => m.key));
    for (const e of cli.entries) if (!listed.has(e.key)) entries.push(e);
    return { entries };
  }

  /** The mount's entries [{ key, size, mtime }], or null (no mount up, or
   * it cannot be read or does not answer in time). */
  async #mountList() {
    if (!(await this.#mountUp())) return null;
    try {
      return await this.#onMount(async () => {
        const dirents = await fsp.readdir(this.#mount);
        const stats = await Promise.all(dirents.map(async (key) => {
          try {
            const st = await fsp.stat(path.join(this.#mount, key));
            return { key, size: st.size, mtime: st.mtime };
          } catch {
            return null; // evicted or replaced since readdir
          }
        }));
        return stats.filter(Boolean);
      });
    } catch {
      return null;
    }
  }

  async #cliList() {
    const r = await runCli(this.#cli, this.#cliArgs("--json", "ls"));
    if (noStore(r)) return { entries: [] };
    if (r.code !== 0 && r.code !== EXIT_UNREACHABLE) return { error: this.#cliFailure(r) };
    let rows;
    try {
      rows = JSON.parse(r.stdout.toString("utf8"));
    } catch (e) {
      return { error: `the offloadfs store is unavailable: agentlink ls printed no JSON (${e.message})` };
    }
    const entries = rows.map((row) => ({
      name: typeof row.tool === "string" && row.tool.startsWith(NAMED_TOOL_PREFIX) &&
        DERIVED_KEY.test(row.key) ? row.tool.slice(NAMED_TOOL_PREFIX.length) : row.key,
      key: row.key,
      size: row.size,
      mtime: new Date(row.created),
    }));
    if (r.code === EXIT_UNREACHABLE) {
      return { entries, partial: r.stderr.replace(/^agentlink: /, "") || "the remote could not be reached" };
    }
    return { entries };
  }

  /**
   * The note that tells the model an answer is incomplete: the text of a
   * listing entry's path (ls, glob) or of a grep match's path, and of the
   * result's `partial` field. It starts with "!" so that it sorts before
   * every result name (deepagents sorts grep's paths), and says it is no
   * file. WHAT: what was done with the results held here ("listed").
   */
  #partialNote(what, cause) {
    return `! INCOMPLETE ANSWER (a note from offloadfs, not a file): the store's remote could not ` +
      `be reached, so only the results held on this host were ${what}; results kept only on the ` +
      "remote exist but are missing from this answer. Try again later (no tool needs to be run " +
      `again for this). Cause: ${cause}`;
  }

  /**
   * The bytes of one result: { bytes, mtime } or { error, evicted?,
   * missing?, unreachable? } (unreachable: held only on the store's remote,
   * which could not be reached).
   * VERB ("reading", "searching") goes into the error text; WANTTIME asks
   * for the write time when reading through the CLI.
   */
  async #readBytes(filePath, verb, wantTime = false) {
    const name = nameOf(filePath);
    if (name === "" || name.endsWith("/")) return { error: `File '${filePath}' not found`, missing: true };
    const k = await this.#keyOf(name);
    if (k.error) return { error: `Error ${verb} file '${filePath}': ${k.error}` };
    let viaMount = await this.#mountUp();
    for (let attempt = 0; attempt < 2; attempt++) {
      if (viaMount) {
        try {
          return await this.#onMount(async () => {
            const fh = await fsp.open(path.join(this.#mount, k.key), "r");
            try {
              const st = await fh.stat();
              const bytes = await fh.readFile();
              return { bytes, mtime: st.mtime };
            } finally {
              await fh.close().catch(() => {});
            }
          });
        } catch (e) {
          if (e.code === "ENOENT") {
            // Never written, or by a writer the mount has not caught up
            // with yet (it did not answer the writer in time): ask the store.
            const s = await this.#stat(k.key);
            if (s.missing || s.error) return this.#missing(filePath, k.key);
            viaMount = false;
            attempt--;
            continue;
          }
          if (deadMount(e)) {
            // The daemon is gone (its mount still listed) or does not
            // answer: the store still holds the result, so ask the CLI.
            viaMount = false;
            attempt--;
            continue;
          }
          if (e.code !== "ENODATA") {
            // EIO: the daemon could not reach the store's remote for a
            // result not held here (doc/remote.md).
            return {
              unreachable: e.code === "EIO",
              error: `Error ${verb} file '${filePath}': the offloadfs mount ${this.#mount} answered ${e.code || e.message}`,
            };
          }
        }
      } else {
        const r = await runCli(this.#cli, this.#cliArgs("get", "--", k.key));
        // get prints the bytes, so no store is told by stat --json.
        if (r.code === 3 || (r.code === 1 && (await this.#stat(k.key)).missing)) {
          return this.#missing(filePath, k.key);
        }
        if (r.code !== 0 && r.code !== 4) {
          return { unreachable: r.code === EXIT_UNREACHABLE, error: `Error ${verb} file '${filePath}': ${this.#cliFailure(r)}` };
        }
        if (r.code === 0) {
          let mtime = new Date();
          if (wantTime) {
            const s = await this.#stat(k.key);
            if (s.row?.created) mtime = new Date(s.row.created);
          }
          return { bytes: r.stdout, mtime };
        }
      }
      // ENODATA or exit 4: evicted or removed; the CLI says when and why.
      const s = await this.#stat(k.key);
      if (s.evicted) return this.#evicted(filePath, k.key, s.row);
      if (s.missing) return this.#missing(filePath, k.key);
      if (s.error) return this.#evicted(filePath, k.key, null, s.error);
      // Live again: rewritten between the two calls; read once more.
      viaMount = viaMount && await this.#mountUp();
    }
    return { error: `Error ${verb} file '${filePath}': it was replaced while being read; read it again` };
  }

  /** `agentlink stat --json KEY`: { row, evicted?, missing? } or { error }. */
  async #stat(key) {
    const r = await runCli(this.#cli, this.#cliArgs("--json", "stat", "--", key));
    if (r.code === 3 || noStore(r)) return { missing: true };
    if (r.code !== 0 && r.code !== 4) return { error: this.#cliFailure(r) };
    try {
      const row = JSON.parse(r.stdout.toString("utf8"));
      return { row, evicted: r.code === 4 };
    } catch (e) {
      return { error: `the offloadfs store is unavailable: agentlink stat printed no JSON (${e.message})` };
    }
  }

  #where(key) {
    return path.join(this.#mount, key);
  }

  #missing(filePath, key) {
    return {
      missing: true,
      error: `File '${filePath}' not found: no result was ever stored under that name ` +
        `(offloadfs store ${this.#store}, ${this.#namespace === null ? "the configured namespace"
          : `namespace '${this.#namespace}'`}, ${this.#where(key)})`,
    };
  }

  /** ROW: stat's JSON (when, why); null when stat failed, with DETAIL saying why. */
  #evicted(filePath, key, row, detail) {
    const why = row?.reason === "removed" ? "removed with agentlink rm or drop-referenced"
      : "to keep the store under its size bound, max_total_bytes";
    const when = row ? ` at ${row.evicted_at} (${why})` : ` (when and why unknown: ${detail})`;
    return {
      evicted: true,
      error: `File '${filePath}' (${this.#where(key)}) was evicted from the offloadfs store${when}: ` +
        "its content is gone. Run the tool that produced it again to get the result.",
    };
  }
}

export default OffloadBackend;
