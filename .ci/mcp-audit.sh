#!/usr/bin/env bash
# The audit log (issue 20) through the official TypeScript MCP client SDK:
# installs @modelcontextprotocol/sdk from npm into .ci/node (gitignored, as
# .ci/mcp-long.sh does), starts `dsh serve` with an audit log and a deny
# rule, and runs .ci/mcp-audit.mjs: a scripted session whose allowed,
# failing, timed-out, denied, redacted, background and killed commands must
# give exactly the expected lines.
# Usage: bash .ci/mcp-audit.sh PATH/TO/dsh
set -euo pipefail
cd "$(dirname "$0")/.."

source .ci/lib.sh "$@"

SDK_VERSION=1.32.2

npm_need "@modelcontextprotocol/sdk@$SDK_VERSION"

cat >"$tmp/dsh.yaml" <<YAML
audit:
  path: $tmp/audit.jsonl
permissions:
  default: allow
  deny: ["rm *"]
  claudeSettings: false
YAML
mkdir -p "$tmp/work"

port=$(node -e '
  const s = require("net").createServer();
  s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });
')
url="http://127.0.0.1:$port/mcp"
echo "== audit log over streamable HTTP ($bin serve at $url)"
"$bin" serve --addr "127.0.0.1:$port" --no-auth --config "$tmp/dsh.yaml" --workdir "$tmp/work" >"$tmp/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  node -e 'fetch(process.argv[1]).then(() => process.exit(0), () => process.exit(1))' "$url" 2>/dev/null && break
  sleep 0.1
done
if ! node .ci/mcp-audit.mjs "$url" "$tmp/work" "$tmp/audit.jsonl" "$server_pid"; then
  sed 's/^/      /' "$tmp/serve.log" | tail -20
  echo "== audit: FAILED"
  exit 1
fi
wait "$server_pid" || { echo "== audit: dsh serve exited $?"; exit 1; }
server_pid=
mode=$(stat -c %a "$tmp/audit.jsonl")
if [[ "$mode" != 600 ]]; then
  echo "FAIL  audit: the file's mode is $mode, want 600"
  exit 1
fi
echo "PASS  audit: the file's mode is 600"
echo "== audit: all passed"
