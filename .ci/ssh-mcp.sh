#!/usr/bin/env bash
# The whole MCP pipeline over SSH (issue 17): an MCP client (the official
# TypeScript SDK) drives `dsh mcp` with `executor: ssh`, whose commands run
# on a real sshd this script starts on a loopback port.
#   1. installs @modelcontextprotocol/sdk from npm into .ci/node (gitignored,
#      shared with the other .ci scripts);
#   2. starts `sshd -D -f CONFIG` on a free loopback port with a host key and
#      a client key made here, logging in as the test account (made if
#      missing when root, as the Go tests do) or as the current user;
#   3. `dsh doctor` reports the host; .ci/ssh-mcp.mjs calls the tools through
#      `dsh mcp --config` and checks the texts; then sshd is stopped.
# Usage: bash .ci/ssh-mcp.sh PATH/TO/dsh
set -euo pipefail
cd "$(dirname "$0")/.."

if (($# != 1)) || [[ ! -x "$1" ]]; then
  echo "usage: $0 PATH/TO/dsh (a built, executable dsh binary)" >&2
  exit 2
fi
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")

SDK_VERSION=1.32.2
TEST_USER=dsh-ssh-test # as internal/sshtest's
TEST_HOME=/var/lib/dsh-ssh-test

prefix=.ci/node
tmp=$(mktemp -d)
sshd_pid=
cleanup() {
  local rc=$?
  if [[ -n "$sshd_pid" ]]; then
    # The listener, then what it forked for connections.
    children=$(pgrep -P "$sshd_pid" || true)
    kill "$sshd_pid" 2>/dev/null || true
    wait "$sshd_pid" 2>/dev/null || true
    [[ -z "$children" ]] || kill $children 2>/dev/null || true
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

pass() { echo "PASS  $*"; }

command -v node >/dev/null || { echo "node is required (Node 20 or later)" >&2; exit 1; }
sshd=$(command -v sshd || echo /usr/sbin/sshd)
[[ -x "$sshd" ]] || { echo "sshd is required (Debian: openssh-server)" >&2; exit 1; }
command -v ssh-keygen >/dev/null || { echo "ssh-keygen is required (Debian: openssh-client)" >&2; exit 1; }

# ---- 1. install -------------------------------------------------------------
echo "== MCP over SSH: install (node $(node --version))"
installed_version() {
  node -p "require('./$prefix/node_modules/$1/package.json').version" 2>/dev/null || true
}
if [[ "$(installed_version @modelcontextprotocol/sdk)" != "$SDK_VERSION" ]]; then
  npm install --no-audit --no-fund --save-exact --prefix "$prefix" "@modelcontextprotocol/sdk@$SDK_VERSION"
fi
got=$(installed_version @modelcontextprotocol/sdk)
if [[ "$got" != "$SDK_VERSION" ]]; then
  echo "FAIL  install: @modelcontextprotocol/sdk is '${got:-missing}', want $SDK_VERSION"
  exit 1
fi
pass "install: @modelcontextprotocol/sdk@$SDK_VERSION in $prefix"

# ---- 2. sshd ------------------------------------------------------------------
if ((EUID == 0)); then
  if ! id "$TEST_USER" >/dev/null 2>&1; then
    useradd --system --create-home --home-dir "$TEST_HOME" --shell /bin/bash --password '*' "$TEST_USER" ||
      id "$TEST_USER" >/dev/null # made meanwhile by a test
  fi
  user=$TEST_USER
  mkdir -p /run/sshd
else
  user=$(id -un)
fi
home=$(getent passwd "$user" | cut -d: -f6)
chmod 755 "$tmp"
ssh-keygen -q -t ed25519 -N '' -f "$tmp/host_ed25519"
ssh-keygen -q -t ed25519 -N '' -f "$tmp/id_ed25519"
cp "$tmp/id_ed25519.pub" "$tmp/authorized_keys"
chmod 644 "$tmp/authorized_keys"
port=$(node -e '
  const s = require("net").createServer();
  s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });
')
cat >"$tmp/sshd_config" <<CONF
ListenAddress 127.0.0.1:$port
HostKey $tmp/host_ed25519
AuthorizedKeysFile $tmp/authorized_keys
AllowUsers $user
PidFile none
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
X11Forwarding no
AllowTcpForwarding no
PrintMotd no
LogLevel ERROR
CONF
echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$tmp/host_ed25519.pub")" >"$tmp/known_hosts"
"$sshd" -D -e -f "$tmp/sshd_config" 2>"$tmp/sshd.log" &
sshd_pid=$!
ready=
for _ in $(seq 100); do
  kill -0 "$sshd_pid" 2>/dev/null || break
  if node -e 'require("net").connect(+process.argv[1], "127.0.0.1").on("connect", () => process.exit(0)).on("error", () => process.exit(1))' "$port"; then
    ready=1
    break
  fi
  sleep 0.1
done
if [[ -z "$ready" ]]; then
  echo "FAIL  sshd did not listen on 127.0.0.1:$port within 10s"
  sed 's/^/      /' "$tmp/sshd.log"
  exit 1
fi
pass "sshd listening on 127.0.0.1:$port, logging in as $user"

cat >"$tmp/dsh.yaml" <<CONF
executor: ssh
ssh:
  host: $user@127.0.0.1:$port
  identityFile: $tmp/id_ed25519
  knownHosts: $tmp/known_hosts
  graceMs: 500
  env:
    set: {DSH_CI_MARK: over-ssh}
CONF

echo "== MCP over SSH: dsh doctor"
if "$bin" doctor --config "$tmp/dsh.yaml" >"$tmp/doctor.out" 2>"$tmp/doctor.err"; then
  sed 's/^/      /' "$tmp/doctor.out"
  pass "dsh doctor reached the host"
else
  echo "FAIL  dsh doctor"
  sed 's/^/      /' "$tmp/doctor.out" "$tmp/doctor.err"
  exit 1
fi

# ---- 3. the client --------------------------------------------------------------
echo "== MCP over SSH: the TypeScript client drives $bin mcp"
node .ci/ssh-mcp.mjs "$bin" "$tmp/dsh.yaml" "$user" "$home"
echo "== MCP over SSH: all passed"
