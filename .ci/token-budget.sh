#!/usr/bin/env bash
# The token budget of the tool schemas and instructions (README): installs
# the TypeScript MCP SDK and two tokenizers from npm into .ci/node
# (gitignored) and runs .ci/token-budget.mjs against `dsh mcp`.
# Usage: bash .ci/token-budget.sh PATH/TO/dsh
set -euo pipefail
cd "$(dirname "$0")/.."

if (($# != 1)) || [[ ! -x "$1" ]]; then
  echo "usage: $0 PATH/TO/dsh (a built, executable dsh binary)" >&2
  exit 2
fi
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")

PACKAGES=(@modelcontextprotocol/sdk@1.32.2 @anthropic-ai/tokenizer@0.0.4 gpt-tokenizer@3.4.0)
prefix=.ci/node
installed() { node -p "require('./$prefix/node_modules/$1/package.json').version" 2>/dev/null || true; }
for p in "${PACKAGES[@]}"; do
  if [[ "$(installed "${p%@*}")" != "${p##*@}" ]]; then
    npm install --no-audit --no-fund --save-exact --prefix "$prefix" "${PACKAGES[@]}"
    break
  fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node .ci/token-budget.mjs "$bin" "$work"
