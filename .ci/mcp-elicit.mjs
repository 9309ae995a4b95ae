// Drives dsh's command policy end to end with the official TypeScript MCP
// client SDK (issue 12), from .ci/node, over stdio (`dsh mcp`) or
// streamable HTTP (`dsh serve`, already running at the URL given):
//   1. an allowed command runs; a denied one returns the exact text and
//      never spawns (its marker file stays absent);
//   2. an ask reaches the client as elicitation/create: accept runs it,
//      decline and cancel return the exact texts and run nothing;
//   3. accepting with remember allows that kind of command for the rest of
//      the session without asking, and not in another session;
//   4. a client without the elicitation capability gets the fallback text.
// Usage: node .ci/mcp-elicit.mjs stdio PATH/TO/dsh CONFIG WORKDIR
//        node .ci/mcp-elicit.mjs http URL WORKDIR
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { inspect } from "node:util";
import { fileURLToPath, pathToFileURL } from "node:url";

const sdkDir = join(dirname(fileURLToPath(import.meta.url)), "node", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm");
const load = (p) => import(pathToFileURL(join(sdkDir, p)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
const { ElicitRequestSchema } = await load("types.js");

const [mode, target, ...rest] = process.argv.slice(2);
if (!((mode === "stdio" || mode === "hooks") && rest.length === 2) && !(mode === "http" && rest.length === 1)) {
  console.error("usage: node .ci/mcp-elicit.mjs stdio|hooks PATH/TO/dsh CONFIG WORKDIR | http URL WORKDIR");
  process.exit(2);
}
const workdir = rest[rest.length - 1];

const watchdog = setTimeout(() => {
  console.log("FAIL  watchdog: not done within 120s");
  process.exit(1);
}, 120_000);

let failed = false;
const pass = (msg) => console.log(`PASS  ${mode}: ${msg}`);
const fail = (msg, got) => {
  failed = true;
  console.log(`FAIL  ${mode}: ${msg}`);
  if (got !== undefined) console.log(inspect(got, { depth: null }).replace(/^/gm, "      "));
};
const expect = (label, got, want) => (got === want ? pass(label) : fail(`${label}: want ${JSON.stringify(want)}`, got));

// connect opens a session; answer (when given) answers each elicitation and
// the client declares the capability; asked counts the questions.
async function connect(answer) {
  const caps = answer ? { elicitation: { form: {} } } : {};
  const client = new Client({ name: "dsh-ci", version: "1" }, { capabilities: caps });
  const session = { client, asked: [] };
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      session.asked.push(req.params);
      return answer(req.params);
    });
  }
  const transport = mode !== "http"
    ? new StdioClientTransport({ command: target, args: ["mcp", "--config", rest[0], "--workdir", workdir], stderr: "ignore" })
    : new StreamableHTTPClientTransport(new URL(target));
  await client.connect(transport);
  return session;
}

async function bash(session, command) {
  const res = await session.client.callTool({ name: "bash", arguments: { command, description: "policy check" } });
  return { text: res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n"), isError: !!res.isError };
}

// Hooks (issue 13), with the hooks config of .ci/mcp-elicit.sh: a
// PreToolUse guard that refuses force pushes, and a PostToolUse hook that
// adds a note to failing commands.
if (mode === "hooks") {
  const s = await connect(null);
  const blocked = await bash(s, "echo git push --force");
  expect("a PreToolUse hook blocks", blocked.text, "Error: blocked by hook: no force pushes");
  const ran = await bash(s, "echo git push");
  expect("the hook lets the rest through", ran.text, "git push\n");
  const failing = await bash(s, "exit 4");
  expect("a PostToolUse note follows the result", failing.text, "(no output)\n[exit code: 4]\n[hook] exit code 4 seen");
  await s.client.close();
  clearTimeout(watchdog);
  process.exit(failed ? 1 : 0);
}

const marker = (name) => join(workdir, name);

// The config (both transports): default ask; allow `echo *`; ask
// `git push *`; deny `rm -rf *`.
const accept = () => ({ action: "accept", content: {} });

// 1. allow and deny.
{
  const s = await connect(accept);
  const ok = await bash(s, "echo allowed");
  expect("an allowed command runs", ok.text, "allowed\n");
  expect("an allowed command asks nothing", s.asked.length, 0);
  const denied = await bash(s, "touch deny-marker && rm -rf /nonexistent/x");
  expect("a denied command gets the exact text", denied.text, 'Error: denied by policy: `rm -rf /nonexistent/x` matches deny rule "rm -rf *"');
  expect("a denied command never spawns", existsSync(marker("deny-marker")), false);
  await s.client.close();
}

// 2. ask: accept, decline, cancel.
for (const [action, want, runs] of [
  ["accept", "", true],
  ["decline", "Error: the user declined to run this command", false],
  ["cancel", "Error: the user dismissed the approval request; the command did not run", false],
]) {
  const s = await connect(() => (action === "accept" ? accept() : { action }));
  const name = `ask-${action}`;
  const res = await bash(s, `touch ${name}`);
  const q = s.asked[0];
  expect(`an ask reaches the client (${action})`, s.asked.length, 1);
  expect(`the question (${action})`, q?.message, `Run this command?\n\ntouch ${name}\n\nin ${workdir}\n\nno rule allows \`touch ${name}\``);
  if (runs) expect("accepted: it runs", res.text, "(no output)");
  else expect(`${action}: the exact text`, res.text, want);
  expect(`${action}: the marker`, existsSync(marker(name)), runs);
  await s.client.close();
}

// 3. remember: for the rest of this session, not another.
{
  const s = await connect(() => ({ action: "accept", content: { remember: true } }));
  await bash(s, "touch remember one");
  const title = s.asked[0]?.requestedSchema?.properties?.remember?.title;
  expect("remember is offered with the suggested rule", title, "Allow `touch remember *` for the rest of this session");
  const again = await bash(s, "touch remember two");
  expect("remembered: the next touch runs", again.text, "(no output)");
  expect("remembered: no second question", s.asked.length, 1);
  const push = await bash(s, "git push origin main");
  expect("an ask rule is not remembered away", s.asked.length, 2);
  expect("an ask rule offers no remember", s.asked[1]?.requestedSchema?.properties?.remember, undefined);
  void push;
  await s.client.close();

  const other = await connect(() => ({ action: "decline" }));
  const res = await bash(other, "touch remember three");
  expect("another session is asked again", other.asked.length, 1);
  expect("another session: declined", res.text, "Error: the user declined to run this command");
  await other.client.close();
}

// 4. no elicitation: the fallback.
{
  const s = await connect(null);
  const res = await bash(s, "touch fallback");
  expect("no elicitation: the fallback text", res.text,
    "Error: this command needs the user's approval (no rule allows `touch fallback`), and this client cannot ask for it. Ask the user to run it, or to allow it in dsh's permissions config.");
  expect("no elicitation: nothing ran", existsSync(marker("fallback")), false);
  await s.client.close();
}

clearTimeout(watchdog);
process.exit(failed ? 1 : 0);
