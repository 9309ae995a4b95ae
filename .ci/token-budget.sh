#!/usr/bin/env bash
# The token budget of the tool schemas and instructions (README): installs
# the TypeScript MCP SDK and two tokenizers from npm into .ci/node
# (gitignored) and runs .ci/token-budget.mjs against `dsh mcp`.
# Usage: bash .ci/token-budget.sh PATH/TO/dsh
set -euo pipefail
cd "$(dirname "$0")/.."

source .ci/lib.sh "$@"

PACKAGES=(@modelcontextprotocol/sdk@1.32.2 @anthropic-ai/tokenizer@0.0.4 gpt-tokenizer@3.4.0)
npm_need "${PACKAGES[@]}"
node .ci/token-budget.mjs "$bin" "$tmp"
