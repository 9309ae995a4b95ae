// The audit log (issue 20) through the official TypeScript MCP client SDK,
// from .ci/node, against `dsh serve` (already running at the URL given,
// with an audit log and a deny rule for `rm *`): a scripted session runs an
// allowed, a failing, a timed-out, a denied, a redacted, a background and a
// killed command; after the server ended, the audit file holds exactly the
// expected lines, field by field (time and durationMs checked by shape and
// range), each under the session's name, not its id.
// Usage: node .ci/mcp-audit.mjs URL WORKDIR AUDITFILE SERVERPID
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { inspect, isDeepStrictEqual } from "node:util";
import { fileURLToPath, pathToFileURL } from "node:url";

const sdkDir = join(dirname(fileURLToPath(import.meta.url)), "node", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm");
const load = (p) => import(pathToFileURL(join(sdkDir, p)).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

const [url, workdir, auditFile, serverPid] = process.argv.slice(2);
if (!serverPid) {
  console.error("usage: node .ci/mcp-audit.mjs URL WORKDIR AUDITFILE SERVERPID");
  process.exit(2);
}
const watchdog = setTimeout(() => {
  console.log("FAIL  audit: watchdog: not done within 60s");
  process.exit(1);
}, 60_000);

let failed = false;
const pass = (msg) => console.log(`PASS  audit: ${msg}`);
const fail = (msg, got) => {
  failed = true;
  console.log(`FAIL  audit: ${msg}`);
  if (got !== undefined) console.log(inspect(got, { depth: null }).replace(/^/gm, "      "));
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const client = new Client({ name: "dsh-ci-audit", version: "7.1" }, { capabilities: {} });
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
const sessionId = transport.sessionId;
const bash = (command, extra = {}) => client.callTool({ name: "bash", arguments: { command, description: "audit", ...extra } });

const secret = "ghp_" + "A".repeat(36);
await bash("echo hello");
await bash("echo oops >&2; exit 3");
await bash("sleep 5", { timeoutMs: 300 });
await bash("rm -rf ./nothing");
await bash(`echo ${secret} >/dev/null`);
const bg = await bash("sleep 0.3; echo done", { run_in_background: true });
const done = bg.structuredContent?.taskId;
await client.callTool({ name: "task_output", arguments: { task_id: done, wait: true, timeout_ms: 10000 } });
const long = await bash("sleep 30", { run_in_background: true });
const killed = long.structuredContent?.taskId;
await client.callTool({ name: "task_kill", arguments: { task_id: killed } });
await client.callTool({ name: "task_output", arguments: { task_id: killed, wait: true, timeout_ms: 10000 } });
await client.close();
// The server's end closes the log; the lines are all there then.
process.kill(Number(serverPid), "SIGTERM");
for (let i = 0; i < 100; i++) {
  try {
    process.kill(Number(serverPid), 0);
  } catch {
    break;
  }
  await sleep(100);
}

const raw = readFileSync(auditFile, "utf8");
const lines = raw.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
// A session is named by a keyed hash of its id, never by the id, which
// with the token lets one post in the session (issue 26).
const session = lines[0]?.session;
if (/^s-[0-9a-f]{16}$/.test(session ?? "") && !raw.includes(sessionId)) pass("session named, its id nowhere");
else fail(`session ${JSON.stringify(session)}: want s- and 16 hex digits, and the id ${sessionId} nowhere in the log`);
const timeRe = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
// check compares one line with want; time and durationMs by shape and
// range [min, max] ms.
function check(label, got, want, [min, max]) {
  if (!got) return fail(`${label}: no line`);
  const { time, durationMs, ...rest } = got;
  if (!timeRe.test(time)) fail(`${label}: time ${JSON.stringify(time)} is not RFC 3339 with ms in UTC`);
  if (!(durationMs >= min && durationMs <= max)) fail(`${label}: durationMs ${durationMs} not in [${min}, ${max}]`);
  if (isDeepStrictEqual(rest, want)) pass(label);
  else fail(`${label}: want ${JSON.stringify(want)}`, rest);
}

const common = { event: "call", session, client: "dsh-ci-audit/7.1" };
const calls = lines.filter((l) => l.event === "call");
const wantCalls = [
  ["allowed", { ...common, tool: "bash", command: "echo hello", workdir, decision: "allow", decidedBy: "read-only command", exitCode: 0, stdoutBytes: 6 }, [0, 5000]],
  ["failing", { ...common, tool: "bash", command: "echo oops >&2; exit 3", workdir, decision: "allow", decidedBy: "no rule (default: allow)", exitCode: 3, stderrBytes: 5 }, [0, 5000]],
  ["timed out", { ...common, tool: "bash", command: "sleep 5", workdir, decision: "allow", decidedBy: "read-only command", signal: "SIGTERM", timedOut: true }, [300, 5000]],
  ["denied", { ...common, tool: "bash", command: "rm -rf ./nothing", workdir, decision: "deny", decidedBy: 'deny rule "rm *" (dsh config)',
    error: 'denied by policy: `rm -rf ./nothing` matches deny rule "rm *"' }, [0, 5000]],
  ["redacted", { ...common, tool: "bash", command: "echo [REDACTED:github-pat] >/dev/null", workdir, decision: "allow", decidedBy: "read-only command", exitCode: 0 }, [0, 5000]],
  ["background start", { ...common, tool: "bash", command: "sleep 0.3; echo done", workdir, background: true, decision: "allow", decidedBy: "read-only command", taskId: done }, [0, 5000]],
  ["task_output", { ...common, tool: "task_output", decision: "allow", taskId: done }, [0, 10000]],
  ["killed start", { ...common, tool: "bash", command: "sleep 30", workdir, background: true, decision: "allow", decidedBy: "read-only command", taskId: killed }, [0, 5000]],
  ["task_kill", { ...common, tool: "task_kill", decision: "allow", taskId: killed }, [0, 5000]],
  ["task_output of the killed", { ...common, tool: "task_output", decision: "allow", taskId: killed }, [0, 10000]],
];
if (calls.length !== wantCalls.length) fail(`${calls.length} call lines, want ${wantCalls.length}`, calls);
wantCalls.forEach(([label, want, range], i) => check(`call line: ${label}`, calls[i], want, range));

const ends = lines.filter((l) => l.event === "task-end");
if (ends.length !== 2) fail(`${ends.length} task-end lines, want 2`, ends);
check("task-end: completed", ends.find((l) => l.taskId === done),
  { event: "task-end", session, taskId: done, status: "completed", exitCode: 0, stdoutBytes: 5 }, [300, 10000]);
check("task-end: killed", ends.find((l) => l.taskId === killed),
  { event: "task-end", session, taskId: killed, status: "killed", signal: "SIGTERM" }, [0, 10000]);
if (lines.length !== calls.length + ends.length) fail("lines of other events", lines);

clearTimeout(watchdog);
process.exit(failed ? 1 : 0);
