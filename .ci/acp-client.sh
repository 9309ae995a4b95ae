#!/usr/bin/env bash
# Drives package acp's example agent with a real ACP client (issue 6):
#   1. installs the official TypeScript ACP SDK from npm into .ci/node
#      (gitignored, shared with .ci/mcp-tools.sh); its schema/v1/schema.json is
#      what package acp's tests validate payloads against (they skip without
#      it, so CI fails here instead);
#   2. builds the agent: the test binary of package acp serves the example
#      agent on stdio when DSH_ACP_EXAMPLE_AGENT=1 (acp/main_test.go);
#   3. .ci/acp-client.mjs drives it over stdio with the SDK's client: a client
#      advertising terminal_output gets the tool call and the update with the
#      terminal _meta, a client without it gets a console text block, and the
#      agent exits 0 once its stdin closes.
# Usage: bash .ci/acp-client.sh
set -euo pipefail
cd "$(dirname "$0")/.."

if (($# != 0)); then
  echo "usage: $0" >&2
  exit 2
fi

# 2.x is the app API (client(), connectWith); it runs on the machine's Node 20.
SDK_VERSION=2.4.0

prefix=.ci/node
schema=$prefix/node_modules/@agentclientprotocol/sdk/schema/v1/schema.json

tmp=$(mktemp -d)
cleanup() {
  local rc=$?
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

pass() { echo "PASS  $*"; }

command -v node >/dev/null || { echo "node is required (Node 20 or later)" >&2; exit 1; }
command -v npm >/dev/null || { echo "npm is required" >&2; exit 1; }

# ---- 1. install -------------------------------------------------------------
echo "== ACP client: install (node $(node --version), npm $(npm --version))"
installed_version() {
  node -p "require('./$prefix/node_modules/$1/package.json').version" 2>/dev/null || true
}
if [[ "$(installed_version @agentclientprotocol/sdk)" != "$SDK_VERSION" ]]; then
  npm install --no-audit --no-fund --save-exact --prefix "$prefix" \
    "@agentclientprotocol/sdk@$SDK_VERSION"
fi
got=$(installed_version @agentclientprotocol/sdk)
if [[ "$got" != "$SDK_VERSION" ]]; then
  echo "FAIL  install: @agentclientprotocol/sdk is '${got:-missing}', want $SDK_VERSION"
  exit 1
fi
if [[ ! -f "$schema" ]]; then
  echo "FAIL  install: $schema is missing (package acp's tests validate against it)"
  exit 1
fi
pass "install: @agentclientprotocol/sdk@$SDK_VERSION in $prefix, with $schema"

# ---- 2. build the agent -------------------------------------------------------
echo "== ACP client: build the example agent (go test -c ./acp)"
go test -c -o "$tmp/acp-agent" ./acp
pass "build: $tmp/acp-agent"

# ---- 3. drive it with the SDK's client ----------------------------------------
echo "== ACP client: @agentclientprotocol/sdk@$SDK_VERSION over stdio"
rc=0
node .ci/acp-client.mjs "$tmp/acp-agent" || rc=$?
if ((rc != 0)); then
  echo "== ACP client: FAILED"
  exit 1
fi
echo "== ACP client: all passed"
