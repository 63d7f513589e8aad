/**
 * agentlink/js -- OffloadBackend, a deepagents backend (BackendProtocolV2 of
 * deepagents 1.14) that keeps the large tool results deepagents spills to
 * `/large_tool_results/` in a bounded offloadfs store.
 *
 * The types below come from deepagents (a peer dependency), imported as
 * types only: at run time the package imports nothing but Node's modules.
 */
import type {
  BackendProtocolV2,
  EditResult,
  FileDownloadResponse,
  FileUploadResponse,
  GlobResult,
  GrepResult,
  LsResult,
  ReadRawResult,
  ReadResult,
  WriteResult,
} from "deepagents";

/**
 * Set on an `ls`, `glob` or `grep` answer that is incomplete: the store's
 * remote could not be reached, so only the results held on this host are in
 * it. The same text is also the path of a first entry (ls, glob) or match
 * (grep), starting with "!", so that the model sees it through deepagents'
 * tools; that entry is no file.
 */
export interface PartialAnswer {
  partial?: string;
}

/** Options of {@link OffloadBackend}; each one: option > environment > default. */
export interface OffloadBackendOptions {
  /**
   * Store directory. Else `$OFFLOADFS_STORE`, else `/var/lib/offloadfs` as
   * root, else `${XDG_STATE_HOME:-$HOME/.local/state}/offloadfs` (as the CLI).
   * A missing store is created on the first write.
   */
  store?: string;
  /**
   * Namespace inside the store (key rules: 1-255 bytes of UTF-8, no '/', no
   * control character, not starting with '.'). Else `$OFFLOADFS_NAMESPACE`,
   * else the policy file's (`$OFFLOADFS_CONFIG`), else `"default"`: the CLI
   * resolves what is not given here. The mount must show the same one
   * (`-o namespace=NS`).
   */
  namespace?: string;
  /** Absolute mount path. Else `$OFFLOADFS_MOUNT`, else `/large_tool_results`. */
  mount?: string;
  /** Path of the `agentlink` CLI (a relative one is resolved at construction). Default `"agentlink"`, found on the PATH. */
  agentlink?: string;
}

/**
 * A deepagents backend for the `/large_tool_results/` route of a
 * CompositeBackend:
 *
 * ```ts
 * new CompositeBackend(new StateBackend(), { "/large_tool_results/": new OffloadBackend() })
 * ```
 *
 * - `write` stores the content under the file's name as the store key
 *   (`agentlink put`); a rerun replaces it; a name that is no valid key gets
 *   a derived key (`agentlink key`) and is still found by its name.
 * - `read`, `readRaw`, `ls`, `grep`, `glob`, `downloadFiles` read the
 *   offloadfs mount; without a mount of this store they use the CLI.
 * - `edit` answers a read-only error. An evicted result's read error says
 *   it was evicted, when, why, and to run the tool again.
 * - No `delete`: results leave the store by eviction (or `agentlink rm`).
 */
export declare class OffloadBackend implements BackendProtocolV2 {
  /**
   * @throws Error naming the option when the namespace breaks the key rules
   *   or the mount is not an absolute path.
   */
  constructor(options?: OffloadBackendOptions);
  /** The store directory this backend writes to (absolute). */
  readonly store: string;
  /** The namespace inside the store as given (option, else `$OFFLOADFS_NAMESPACE`); null when neither is: the CLI takes the policy file's, else `"default"`. */
  readonly namespace: string | null;
  /** The mount path reads come from when an offloadfs mount of the store is up. */
  readonly mount: string;
  /** The agentlink CLI this backend runs. */
  readonly agentlink: string;

  /**
   * Lists the results directly in a directory of the route (names with '/'
   * show as directories): every live result, here and on the store's remote.
   */
  ls(path: string): Promise<LsResult & PartialAnswer>;
  /** Reads a result by lines (0-based offset, default limit 500), as deepagents' backends do. */
  read(filePath: string, offset?: number, limit?: number): Promise<ReadResult>;
  /** Reads a whole result as FileData (v2); created_at = modified_at = the time it was stored. */
  readRaw(filePath: string): Promise<ReadRawResult>;
  /** Stores the content under the file's name through `agentlink put`; an error result on failure. */
  write(filePath: string, content: string): Promise<WriteResult>;
  /** Always an error: stored results are read-only. */
  edit(filePath: string, oldString: string, newString: string, replaceAll?: boolean): Promise<EditResult>;
  /** Literal (not regex) search over the results, 1-based line numbers. */
  grep(pattern: string, path?: string | null, glob?: string | null,
    maxCount?: number | null): Promise<GrepResult & PartialAnswer>;
  /**
   * Results whose path relative to `path` matches the glob pattern (dot
   * files too); an incomplete answer also has `truncated: true`.
   */
  glob(pattern: string, path?: string): Promise<GlobResult & PartialAnswer>;
  /** Stores each [path, bytes] pair as `write` does, bytes unchanged. */
  uploadFiles(files: Array<[string, Uint8Array]>): Promise<FileUploadResponse[]>;
  /** The stored bytes of each path; `file_not_found` for never-written or evicted ones. */
  downloadFiles(paths: string[]): Promise<FileDownloadResponse[]>;
}

export default OffloadBackend;
