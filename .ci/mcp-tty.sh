#!/usr/bin/env bash
# Interactive tasks (issue 29) through the official TypeScript MCP client
# SDK: installs @modelcontextprotocol/sdk from npm into .ci/node
# (gitignored), then runs .ci/mcp-tty.mjs against `dsh mcp` over stdio:
# python's REPL, an interactive bash's read -p and C-c, less's screen.
# Usage: bash .ci/mcp-tty.sh PATH/TO/dsh
set -euo pipefail
cd "$(dirname "$0")/.."

source .ci/lib.sh "$@"

npm_need "@modelcontextprotocol/sdk@1.32.2"
node .ci/mcp-tty.mjs "$bin" "$tmp"
