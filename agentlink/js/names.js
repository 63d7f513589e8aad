/**
 * agentlink/js/names.js -- the backend's pure helpers for names and
 * patterns (index.js imports them): deepagents' MIME rules, the store's key
 * rules, path and glob handling. No I/O, nothing but the language.
 */
/**
 * Extensions deepagents treats as binary (its getMimeType/isTextMimeType):
 * written from base64 text, read back as bytes. Everything else is text.
 */
const BINARY_MIME = {
  ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
  ".webp": "image/webp", ".heic": "image/heic", ".heif": "image/heif",
  ".mp3": "audio/mpeg", ".wav": "audio/wav", ".aiff": "audio/aiff", ".aac": "audio/aac",
  ".ogg": "audio/ogg", ".flac": "audio/flac", ".mp4": "video/mp4", ".webm": "video/webm",
  ".mpeg": "video/mpeg", ".mov": "video/quicktime", ".avi": "video/x-msvideo",
  ".flv": "video/x-flv", ".mpg": "video/mpeg", ".wmv": "video/x-ms-wmv", ".3gpp": "video/3gpp",
  ".pdf": "application/pdf", ".ppt": "application/vnd.ms-powerpoint",
  ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
};
const TEXT_MIME = {
  ".txt": "text/plain", ".md": "text/markdown", ".markdown": "text/markdown",
  ".html": "text/html", ".htm": "text/html", ".css": "text/css", ".csv": "text/csv",
  ".xml": "text/xml", ".json": "application/json", ".js": "application/javascript",
  ".mjs": "application/javascript", ".cjs": "application/javascript", ".svg": "image/svg+xml",
};

export function mimeOf(name) {
  const base = name.slice(name.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  const ext = dot <= 0 ? "" : base.slice(dot).toLowerCase();
  return BINARY_MIME[ext] || TEXT_MIME[ext] || "text/plain";
}

export function isBinaryName(name) {
  const base = name.slice(name.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  return dot > 0 && Object.hasOwn(BINARY_MIME, base.slice(dot).toLowerCase());
}

/**
 * The store's key rules (contract "Keys"): returns the first rule NAME
 * breaks, as the text that completes "key 'K' ...", or null when it is a key.
 */
export function keyRuleBroken(name) {
  if (name.length === 0) return "is empty";
  if (!name.isWellFormed()) return "is not valid UTF-8";
  if (Buffer.byteLength(name) > 255) return "is longer than 255 bytes";
  if (name.includes("/")) return "contains '/'";
  if (/[\x00-\x1f\x7f]/.test(name)) return "contains a control character";
  if (name.startsWith(".")) return "starts with '.'";
  return null;
}

/**
 * Why NAME cannot be written, as the text that completes "Error writing file
 * 'P': ...", or null. A '..' component would show in ls and glob as a path
 * outside the route ("/large_tool_results/../etc/x"), which it is not:
 * refused as deepagents' own backends refuse it. Never in an eviction path.
 */
export function badFileName(name) {
  if (name === "" || name.endsWith("/")) return "not a file name";
  if (name.split("/").includes("..")) return "a '..' component is not allowed (path traversal)";
  return null;
}

/**
 * Why NAME is not well-formed Unicode (a UTF-16 surrogate with no partner:
 * no character, no UTF-8), as words that follow "Error writing file 'P': ",
 * or null when it is.
 */
export function loneSurrogate(name) {
  if (name.isWellFormed()) return null;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    const next = name.charCodeAt(i + 1);
    if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) { i++; continue; }
    return `the name is not well-formed Unicode: it holds a lone surrogate \\u${c.toString(16)} ` +
      `at index ${i}, which is no character and has no UTF-8 form, so no result can be stored ` +
      "or found under it; use a name made of whole characters";
  }
  return null;
}

/** A tool name the store accepts: 1-255 bytes of UTF-8, no control character. */
export function isToolName(s) {
  return s.isWellFormed() && Buffer.byteLength(s) <= 255 && !/[\x00-\x1f\x7f]/.test(s);
}

/** "/a/b.txt" -> "a/b.txt"; the route hands paths with a leading slash. */
export function nameOf(filePath) {
  return String(filePath ?? "").replace(/^\/+/, "");
}

/** "/", "", "/sub", "/sub/" -> "" or "sub/": the name prefix of a directory. */
export function dirPrefix(dirPath) {
  const n = nameOf(dirPath).replace(/\/+$/, "");
  return n === "" ? "" : `${n}/`;
}

/** Undoes the octal escapes of /proc/self/mountinfo (\040 for a space, ...). */
export function unescapeMountinfo(s) {
  return s.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)));
}

/**
 * A glob pattern as a RegExp over slash-separated names, as micromatch
 * matches them for deepagents ({ dot: true }): `**` any number of path
 * segments, `*` and `?` within one segment, `{a,b}` alternatives, `[...]`
 * classes; everything else literal.
 */
export function globToRegExp(pattern) {
  let re = "";
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "*") {
      if (pattern[i + 1] === "*") {
        i++;
        if (pattern[i + 1] === "/") { i++; re += "(?:[^/]*/)*"; } else re += ".*";
      } else re += "[^/]*";
    } else if (c === "?") re += "[^/]";
    else if (c === "{") { depth++; re += "(?:"; }
    else if (c === "}" && depth > 0) { depth--; re += ")"; }
    else if (c === "," && depth > 0) re += "|";
    else if (c === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end === -1) re += "\\[";
      else {
        let body = pattern.slice(i + 1, end).replace(/\\/g, "\\\\");
        if (body[0] === "!") body = `^${body.slice(1)}`;
        re += `[${body}]`;
        i = end;
      }
    } else re += c.replace(/[.+^$()|\\\]]/g, "\\$&");
  }
  while (depth-- > 0) re += ")";
  try {
    return new RegExp(`^${re}$`, "s");
  } catch {
    // A class no RegExp takes ("[z-a]"): it matches no name, as micromatch's.
    return /(?!)/;
  }
}

/**
 * Whether the CLI failed only because the store does not exist yet: a store
 * no one has written to is an empty one. R is a run with --json, where the
 * CLI says so on stdout as {"error": "no_store", ...} (exit 1), whatever
 * the language of its messages.
 */
