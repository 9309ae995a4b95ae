// Drives `dsh mcp` over stdio with the official TypeScript MCP client SDK
// (the one .ci/node holds) for TestNetworkAskTypeScriptSDK: it runs each
// command given as a bash call, in order, in one session, answering each
// elicitation with decline when its message names a host in DECLINE
// (comma-separated), else with accept. It prints one JSON object:
// {"calls": [{"text", "isError", "asked"}], "asked": [elicitation params]},
// a call's "asked" the number of questions asked by its end; the Go test
// judges it.
// Usage: node netask.mjs SDK_DIR DSH CONFIG WORKDIR DECLINE COMMAND...
// SDK_DIR is @modelcontextprotocol/sdk's installed directory.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, dsh, config, workdir, decline, ...commands] = process.argv.slice(2);
if (!commands.length) {
  console.error("usage: node netask.mjs SDK_DIR DSH CONFIG WORKDIR DECLINE COMMAND...");
  process.exit(2);
}
const load = (p) => import(pathToFileURL(join(sdkDir, "dist", "esm", p)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const { ElicitRequestSchema } = await load("types.js");

const declined = decline.split(",").filter(Boolean);
const asked = [];
const client = new Client({ name: "dsh-netask", version: "1" }, { capabilities: { elicitation: { form: {} } } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked.push(req.params);
  return declined.some((h) => req.params.message.includes(h + ":")) ? { action: "decline" } : { action: "accept", content: {} };
});
// The whole environment: the SDK passes only a few variables by default,
// and the Go tests mark every process they start through it.
const transport = new StdioClientTransport({
  command: dsh, args: ["mcp", "--config", config, "--workdir", workdir], env: process.env, stderr: "inherit",
});
await client.connect(transport);

const calls = [];
for (const command of commands) {
  const res = await client.callTool({ name: "bash", arguments: { command, description: "fetch over the network" } });
  calls.push({ text: res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n"), isError: !!res.isError, asked: asked.length });
}
await client.close();
console.log(JSON.stringify({ calls, asked }));
