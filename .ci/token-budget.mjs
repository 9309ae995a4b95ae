// The token budget of what a model reads on every call (README: the five
// tool schemas plus the instructions stay under 800 tokens). The official
// TypeScript MCP client starts `dsh mcp` with its default configuration (the
// sandbox on, where a backend works) and
// lists the tools; what a client hands the model for a tool is its name,
// description and input schema (the Messages API's name, description,
// input_schema), so those are counted, JSON-encoded, with the instructions.
// Counted with Anthropic's published tokenizer and with o200k_base
// (gpt-tokenizer); the larger count must stay under the budget.
// Usage: node .ci/token-budget.mjs PATH/TO/dsh WORKDIR
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const BUDGET = 800;
const modules = join(dirname(fileURLToPath(import.meta.url)), "node", "node_modules");
const load = (p) => import(pathToFileURL(join(modules, p)).href);
const sdk = "@modelcontextprotocol/sdk/dist/esm/";
const { Client } = await load(sdk + "client/index.js");
const { StdioClientTransport } = await load(sdk + "client/stdio.js");
const { countTokens } = await load("@anthropic-ai/tokenizer/dist/cjs/index.js");
const { encode } = await load("gpt-tokenizer/esm/main.js");

const [bin, workdir] = process.argv.slice(2);
const client = new Client({ name: "token-budget", version: "1" });
await client.connect(new StdioClientTransport({ command: bin, args: ["mcp", "--workdir", workdir], stderr: "ignore" }));
const { tools } = await client.listTools();
const instructions = client.getInstructions() ?? "";
await client.close();

const texts = [["instructions", instructions]];
for (const t of tools) {
  texts.push([t.name, JSON.stringify({ name: t.name, description: t.description, input_schema: t.inputSchema })]);
}
let claude = 0, o200k = 0;
for (const [name, text] of texts) {
  const c = countTokens(text), o = encode(text).length;
  claude += c;
  o200k += o;
  console.log(`      ${name}: ${c} (o200k ${o})`);
}
const total = Math.max(claude, o200k);
const line = `${tools.length} tool schemas + instructions: ${claude} tokens (Anthropic tokenizer), ${o200k} (o200k_base); budget ${BUDGET}`;
if (tools.length !== 5 || total >= BUDGET) {
  console.log(`FAIL  ${line}`);
  process.exit(1);
}
console.log(`PASS  ${line}`);
