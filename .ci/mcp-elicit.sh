#!/usr/bin/env bash
# Drives dsh's command policy and its asks with the official TypeScript MCP
# client SDK (issue 12): installs @modelcontextprotocol/sdk from npm into
# .ci/node (gitignored), then runs .ci/mcp-elicit.mjs against `dsh mcp` over
# stdio and against `dsh serve` over streamable HTTP, with a config of rules.
# Usage: bash .ci/mcp-elicit.sh PATH/TO/dsh
set -euo pipefail
cd "$(dirname "$0")/.."

source .ci/lib.sh "$@"

# 1.32.x supports elicitation (form mode) and runs on Node 20.
SDK_VERSION=1.32.2

npm_need "@modelcontextprotocol/sdk@$SDK_VERSION"

# The rules of .ci/mcp-elicit.mjs. claudeSettings: false keeps this
# machine's Claude Code settings, if any, out of the test.
cat >"$tmp/dsh.yaml" <<'YAML'
permissions:
  default: ask
  allow: ["echo *"]
  ask: ["git push *"]
  deny: ["rm -rf *"]
  claudeSettings: false
YAML

failed=0
mkdir -p "$tmp/stdio"
echo "== MCP elicitation over stdio ($bin mcp)"
node .ci/mcp-elicit.mjs stdio "$bin" "$tmp/dsh.yaml" "$tmp/stdio" || failed=1

# Hooks through the same client (issue 13).
cat >"$tmp/guard.sh" <<'SH'
#!/bin/bash
grep -q -- '--force' && { echo "no force pushes" >&2; exit 2; }
exit 0
SH
cat >"$tmp/note.sh" <<'SH'
#!/bin/bash
code=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_response"]["exitCode"])')
[ "$code" != 0 ] && printf '{"decision":"block","reason":"exit code %s seen"}' "$code"
exit 0
SH
chmod +x "$tmp/guard.sh" "$tmp/note.sh"
cat >"$tmp/hooks.yaml" <<YAML
hooks:
  PreToolUse:
    - matcher: Bash
      hooks: [{type: command, command: $tmp/guard.sh}]
  PostToolUse:
    - matcher: Bash
      hooks: [{type: command, command: $tmp/note.sh}]
YAML
mkdir -p "$tmp/hooks"
echo "== MCP hooks over stdio ($bin mcp)"
node .ci/mcp-elicit.mjs hooks "$bin" "$tmp/hooks.yaml" "$tmp/hooks" || failed=1

port=$(node -e '
  const s = require("net").createServer();
  s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });
')
url="http://127.0.0.1:$port/mcp"
mkdir -p "$tmp/http"
echo "== MCP elicitation over streamable HTTP ($bin serve at $url)"
"$bin" serve --addr "127.0.0.1:$port" --no-auth --config "$tmp/dsh.yaml" --workdir "$tmp/http" >"$tmp/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  node -e 'fetch(process.argv[1]).then(() => process.exit(0), () => process.exit(1))' "$url" 2>/dev/null && break
  sleep 0.1
done
node .ci/mcp-elicit.mjs http "$url" "$tmp/http" || { failed=1; sed 's/^/      /' "$tmp/serve.log" | tail -20; }

if ((failed)); then
  echo "== MCP elicitation: FAILED"
  exit 1
fi
echo "== MCP elicitation: all passed"
