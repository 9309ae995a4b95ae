#!/usr/bin/env bash
# Long calls (issue 16) through the official TypeScript MCP client SDK:
# installs @modelcontextprotocol/sdk from npm into .ci/node (gitignored, as
# .ci/mcp-elicit.sh does), then runs .ci/mcp-long.mjs against `dsh mcp`
# over stdio and against `dsh serve` over streamable HTTP: heartbeats
# under a short client timeout, yielding to a task, no yield without
# background runs, and no response after a cancel.
# Usage: bash .ci/mcp-long.sh PATH/TO/dsh
set -euo pipefail
cd "$(dirname "$0")/.."

source .ci/lib.sh "$@"

SDK_VERSION=1.32.2

npm_need "@modelcontextprotocol/sdk@$SDK_VERSION"

# heartbeat: the user is asked about touch (and answers after 2.5 s).
cat >"$tmp/ask.yaml" <<'YAML'
permissions:
  default: allow
  ask: ["touch *"]
  claudeSettings: false
YAML
# yield and cancel: a task after 1 s.
cat >"$tmp/yield.yaml" <<'YAML'
bash:
  yieldAfterMs: 1000
YAML
# noyield: the same, with background runs off.
cat >"$tmp/noyield.yaml" <<'YAML'
bash:
  enableRunInBackground: false
  yieldAfterMs: 1000
YAML

failed=0
run_stdio() { # CASE CONFIG
  mkdir -p "$tmp/$1-stdio"
  node .ci/mcp-long.mjs "$1" stdio "$bin" "$2" "$tmp/$1-stdio" || failed=1
}
echo "== long calls over stdio ($bin mcp)"
run_stdio heartbeat "$tmp/ask.yaml"
run_stdio yield "$tmp/yield.yaml"
run_stdio noyield "$tmp/noyield.yaml"
run_stdio cancel "$tmp/yield.yaml"

port=$(node -e '
  const s = require("net").createServer();
  s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });
')
url="http://127.0.0.1:$port/mcp"
mkdir -p "$tmp/http"
echo "== long calls over streamable HTTP ($bin serve at $url)"
"$bin" serve --addr "127.0.0.1:$port" --no-auth --config "$tmp/yield.yaml" --workdir "$tmp/http" >"$tmp/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  node -e 'fetch(process.argv[1]).then(() => process.exit(0), () => process.exit(1))' "$url" 2>/dev/null && break
  sleep 0.1
done
for c in yield cancel; do
  node .ci/mcp-long.mjs "$c" http "$url" "$tmp/http" || { failed=1; sed 's/^/      /' "$tmp/serve.log" | tail -20; }
done

if ((failed)); then
  echo "== long calls: FAILED"
  exit 1
fi
echo "== long calls: all passed"
