# Shared by the .ci scripts that drive a built dsh with npm clients. Source
# it from the repository root, after `set -euo pipefail`, with the script's
# arguments: `source .ci/lib.sh "$@"`. It sets
#   bin         the absolute path of the dsh binary given (or prints usage);
#   tmp         a temporary directory, removed at exit;
#   server_pid  empty; a script that starts a server puts its pid here, and
#               the server is stopped at exit;
# and defines npm_need.

if (($# != 1)) || [[ ! -x "$1" ]]; then
  echo "usage: $0 PATH/TO/dsh (a built, executable dsh binary)" >&2
  exit 2
fi
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")

command -v node >/dev/null || { echo "node is required (Node 20 or later)" >&2; exit 1; }
command -v npm >/dev/null || { echo "npm is required" >&2; exit 1; }

prefix=.ci/node
tmp=$(mktemp -d)
server_pid=
cleanup() {
  local rc=$?
  if [[ -n "$server_pid" ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# npm_need PKG@VERSION...: installs the packages into .ci/node (gitignored,
# shared by the scripts) unless each is there at its version already.
npm_need() {
  local p
  for p in "$@"; do
    if [[ "$(node -p "require('./$prefix/node_modules/${p%@*}/package.json').version" 2>/dev/null || true)" != "${p##*@}" ]]; then
      echo "== install $*"
      npm install --no-audit --no-fund --save-exact --prefix "$prefix" "$@"
      return
    fi
  done
}
