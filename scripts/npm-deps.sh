#!/bin/sh
# npm-deps.sh DIR -- installs the npm packages a test folder pins, outside the
# tree, and links them in.
#
# DIR holds a package.json with exact versions and its package-lock.json. The
# packages go to CACHE/NAME-HASH, HASH being that of the lock file, so a
# changed pin installs afresh and an unchanged one is installed once per
# machine. CACHE is $OFFLOADFS_NPM_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/
# offloadfs-npm ($HOME unset: /tmp).
# DIR/node_modules becomes a symlink to it (git ignores it), so Node's module
# resolution finds the packages from DIR's files. Prints the install folder.
# Exits non-zero, saying why, when npm fails: callers must fail, not skip.
set -eu
dir=$(cd "$1" && pwd)
[ -f "$dir/package.json" ] && [ -f "$dir/package-lock.json" ] || {
    echo "npm-deps: $dir needs package.json and package-lock.json" >&2; exit 2; }
command -v npm >/dev/null || { echo "npm-deps: npm is not installed (Node 20 and npm are needed)" >&2; exit 1; }
cache=${OFFLOADFS_NPM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/offloadfs-npm}
hash=$(cat "$dir/package.json" "$dir/package-lock.json" | sha256sum | cut -c1-16)
dest=$cache/$(basename "$dir")-$hash
if [ ! -f "$dest/.installed" ]; then
    mkdir -p "$dest"
    cp "$dir/package.json" "$dir/package-lock.json" "$dest/"
    # One install at a time per folder (parallel test runs share the cache).
    (
        flock 9
        if [ ! -f "$dest/.installed" ]; then
            (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error >&2) || {
                echo "npm-deps: npm ci failed in $dest" >&2; exit 1; }
            touch "$dest/.installed"
        fi
    ) 9>"$dest/.lock"
fi
if [ "$(readlink "$dir/node_modules" 2>/dev/null)" != "$dest/node_modules" ]; then
    # Suites run side by side may get here together: the link is made under
    # another name and renamed into place, which is atomic.
    if [ -d "$dir/node_modules" ] && [ ! -L "$dir/node_modules" ]; then rm -rf "$dir/node_modules"; fi
    ln -sfn "$dest/node_modules" "$dir/node_modules.$$"
    mv -Tf "$dir/node_modules.$$" "$dir/node_modules"
fi
echo "$dest"
