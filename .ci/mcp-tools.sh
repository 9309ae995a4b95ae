#!/usr/bin/env bash
# Checks a built dsh binary with the MCP ecosystem's own tools (issue 5):
#   1. installs the MCP Inspector and the MCP conformance suite from npm into
#      .ci/node (gitignored);
#   2. MCP Inspector, CLI mode, over stdio against `dsh mcp`: tools/list with
#      --strict schema linting (any finding, error or warning, fails), and a
#      tools/call of bash whose output must contain "hi";
#   3. the conformance suite's generic server scenarios against `dsh serve`
#      (streamable HTTP, --no-auth, a free loopback port).
# Usage: bash .ci/mcp-tools.sh PATH/TO/dsh
set -euo pipefail
cd "$(dirname "$0")/.."

if (($# != 1)) || [[ ! -x "$1" ]]; then
  echo "usage: $0 PATH/TO/dsh (a built, executable dsh binary)" >&2
  exit 2
fi
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")

# The newest Inspector that runs on the machine's Node 20. Every release with
# --strict (2.4.0 and later) declares engines node >=22.19, so npm prints
# EBADENGINE warnings; its CLI (all we use) runs fine on Node 20.
INSPECTOR_VERSION=2.12.0
# 0.1.10 runs on Node 20; newer versions need Node 22.
CONFORMANCE_VERSION=0.1.10

# Scenarios of the conformance suite that apply to any server declaring the
# capabilities dsh declares (tools, logging). The suite's other server
# scenarios drive the reference "everything" server: they call fixture tools,
# prompts and resources (test_simple_text, test_simple_prompt,
# test://static-text, ...) or need capabilities dsh does not declare
# (completions, prompts, resources, resource subscriptions).
SCENARIOS=(server-initialize ping logging-set-level tools-list server-sse-multiple-streams)

prefix=.ci/node
inspector=$prefix/node_modules/.bin/mcp-inspector
conformance=$prefix/node_modules/.bin/conformance

tmp=$(mktemp -d)
server_pid=
# Stops the dsh server started below: SIGTERM, then SIGKILL after 10s.
# Returns the server's exit status.
stop_server() {
  local pid=$server_pid rc=0
  server_pid=
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "dsh serve (pid $pid) still running 10s after SIGTERM: SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || rc=$?
  return "$rc"
}
cleanup() {
  local rc=$?
  if [[ -n "$server_pid" ]]; then stop_server || true; fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

failed=0
pass() { echo "PASS  $*"; }
fail() { echo "FAIL  $*"; failed=1; }
# Shows a file without dsh's own log lines (it logs to stderr).
show() { grep -v '^time=.* level=' "$1" | sed 's/^/      /' || true; }

command -v node >/dev/null || { echo "node is required (Node 20 or later)" >&2; exit 1; }
command -v npm >/dev/null || { echo "npm is required" >&2; exit 1; }

# ---- 1. install -------------------------------------------------------------
echo "== MCP tools: install (node $(node --version), npm $(npm --version))"
installed_version() {
  node -p "require('./$prefix/node_modules/$1/package.json').version" 2>/dev/null || true
}
if [[ "$(installed_version @modelcontextprotocol/inspector)" != "$INSPECTOR_VERSION" ||
  "$(installed_version @modelcontextprotocol/conformance)" != "$CONFORMANCE_VERSION" ]]; then
  npm install --no-audit --no-fund --save-exact --prefix "$prefix" \
    "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" \
    "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
fi
for want in "inspector@$INSPECTOR_VERSION" "conformance@$CONFORMANCE_VERSION"; do
  got=$(installed_version "@modelcontextprotocol/${want%@*}")
  if [[ "$got" != "${want#*@}" ]]; then
    echo "FAIL  install: @modelcontextprotocol/${want%@*} is '${got:-missing}', want ${want#*@}"
    exit 1
  fi
done
pass "install: @modelcontextprotocol/inspector@$INSPECTOR_VERSION, @modelcontextprotocol/conformance@$CONFORMANCE_VERSION in $prefix"

# ---- 2. MCP Inspector over stdio ---------------------------------------------
echo "== MCP Inspector (CLI mode, stdio: $bin mcp)"
mkdir -p "$tmp/work"

rc=0
timeout 120 "$inspector" --cli --method tools/list --strict \
  "$bin" mcp --workdir "$tmp/work" >"$tmp/list.out" 2>"$tmp/list.err" || rc=$?
findings=$(grep -cE '^(Error|Warning): tool "' "$tmp/list.err" || true)
tools=$(node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(r.tools.map(t => t.name).join(" "));
' "$tmp/list.out" 2>/dev/null || true)
if ((rc != 0)) || ((findings > 0)) || [[ -z "$tools" ]]; then
  fail "inspector tools/list --strict: exit $rc, $findings schema lint finding(s), tools: ${tools:-none}"
  show "$tmp/list.err"
  [[ -n "$tools" ]] || show "$tmp/list.out"
else
  pass "inspector tools/list --strict: no schema lint findings; tools: $tools"
fi

rc=0
timeout 120 "$inspector" --cli --method tools/call --tool-name bash \
  --tool-args-json '{"command":"echo hi","description":"say hi"}' \
  "$bin" mcp --workdir "$tmp/work" >"$tmp/call.out" 2>"$tmp/call.err" || rc=$?
text=$(node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  if (r.isError) process.exit(1);
  console.log(r.content.filter(c => c.type === "text").map(c => c.text).join(""));
' "$tmp/call.out" 2>/dev/null || true)
if ((rc == 0)) && grep -qw hi <<<"$text"; then
  pass "inspector tools/call bash {\"command\":\"echo hi\"}: output \"$(head -n1 <<<"$text")\""
else
  fail "inspector tools/call bash {\"command\":\"echo hi\"}: exit $rc, output does not contain \"hi\""
  show "$tmp/call.out"
  show "$tmp/call.err"
fi

# ---- 3. conformance suite over streamable HTTP --------------------------------
port=$(node -e '
  const s = require("net").createServer();
  s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });
')
url="http://127.0.0.1:$port/mcp"
echo "== MCP conformance $CONFORMANCE_VERSION (streamable HTTP: $bin serve at $url)"
"$bin" serve --addr "127.0.0.1:$port" --no-auth --workdir "$tmp/work" >"$tmp/serve.log" 2>&1 &
server_pid=$!

# Ready once /mcp answers HTTP at all (a bare GET gets a 4xx).
ready=
for _ in $(seq 100); do
  if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
  if node -e 'fetch(process.argv[1]).then(() => process.exit(0), () => process.exit(1))' "$url" 2>/dev/null; then
    ready=1
    break
  fi
  sleep 0.1
done
if [[ -z "$ready" ]]; then
  fail "dsh serve did not answer at $url within 10s"
  sed 's/^/      /' "$tmp/serve.log"
  exit 1
fi

for scenario in "${SCENARIOS[@]}"; do
  rc=0
  timeout 120 "$conformance" server --url "$url" --scenario "$scenario" \
    -o "$tmp/conformance" >"$tmp/$scenario.out" 2>&1 || rc=$?
  # "Passed: 1/1, 0 failed, 0 warnings"
  counts=$(sed -nE 's/^Passed: ([0-9]+)\/[0-9]+, ([0-9]+) failed, ([0-9]+) warnings$/\1 \2 \3/p' "$tmp/$scenario.out")
  read -r passed nfailed warnings <<<"${counts:-0 0 0}"
  if ((rc == 0)) && [[ -n "$counts" ]] && ((passed > 0 && nfailed == 0 && warnings == 0)); then
    pass "conformance $scenario: $passed passed"
  else
    fail "conformance $scenario: exit $rc, ${counts:+$passed passed, $nfailed failed, $warnings warnings}${counts:-no result}"
    sed 's/^/      /' "$tmp/$scenario.out"
  fi
done

# Stop the server: SIGTERM ends every session and exits 0 (docs/spec.md §6.2).
rc=0
stop_server || rc=$?
if ((rc == 0)); then
  pass "dsh serve stopped cleanly on SIGTERM"
else
  fail "dsh serve exited $rc on SIGTERM (want 0)"
  sed 's/^/      /' "$tmp/serve.log" | tail -20
fi

if ((failed)); then
  echo "== MCP tools: FAILED"
  exit 1
fi
echo "== MCP tools: all passed"
