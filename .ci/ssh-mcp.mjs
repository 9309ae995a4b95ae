// Drives `dsh mcp` with `executor: ssh` (issue 17) over stdio with the
// official TypeScript MCP SDK's client, from .ci/node: the whole pipeline,
// from the MCP client through dsh to a real sshd on a loopback port that
// .ci/ssh-mcp.sh started. It checks:
//   1. the bash tool's exact texts: output, stderr, an exit code, a timeout;
//   2. that the command ran on the remote side (as the test user, in its
//      home, with the config's env.set);
//   3. a background task read with task_output;
//   4. that dsh exits 0 once the client closes.
// Usage: node .ci/ssh-mcp.mjs PATH/TO/dsh CONFIG REMOTE_USER REMOTE_HOME
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

// The SDK lives in .ci/node, not next to this script: import it by path.
const sdkDir = join(dirname(fileURLToPath(import.meta.url)), "node", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm");
const { Client } = await import(pathToFileURL(join(sdkDir, "client", "index.js")).href);
const { StdioClientTransport } = await import(pathToFileURL(join(sdkDir, "client", "stdio.js")).href);

if (process.argv.length !== 6) {
  console.error("usage: node .ci/ssh-mcp.mjs PATH/TO/dsh CONFIG REMOTE_USER REMOTE_HOME");
  process.exit(2);
}
const [dshBin, config, remoteUser, remoteHome] = process.argv.slice(2);

// A CI step must never hang.
const watchdog = setTimeout(() => {
  console.log("FAIL  watchdog: no result within 120s");
  process.exit(1);
}, 120_000);

let failed = false;
const pass = (msg) => console.log(`PASS  ${msg}`);
const fail = (msg) => {
  console.log(`FAIL  ${msg}`);
  failed = true;
};

const transport = new StdioClientTransport({ command: dshBin, args: ["mcp", "--config", config], stderr: "pipe" });
let stderr = "";
transport.stderr?.on("data", (d) => (stderr += d));
const client = new Client({ name: "dsh-ci-ssh", version: "1.0.0" });
await client.connect(transport);

const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
async function expect(name, args, want, label) {
  const res = await client.callTool({ name, arguments: args });
  const got = text(res);
  if (got === want) pass(`${label}: ${JSON.stringify(got)}`);
  else fail(`${label}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  return res;
}

const bash = (command, extra = {}) => ({ command, description: "run over ssh", ...extra });
await expect("bash", bash("echo hello"), "hello\n", "echo");
await expect("bash", bash("echo out; echo err >&2"), "out\n[stderr]\nerr\n", "stderr");
const failing = await expect("bash", bash("echo failing; exit 3"), "failing\n[exit code: 3]", "exit code");
if (failing.structuredContent?.exitCode !== 3) fail(`structuredContent.exitCode: ${JSON.stringify(failing.structuredContent)}`);
await expect("bash", bash("sleep 60", { timeoutMs: 100 }), "(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]", "timeout");
await expect("bash", bash('echo "$(id -un) $PWD $DSH_CI_MARK"'), `${remoteUser} ${remoteHome} over-ssh\n`, "remote user, home and env.set");
await expect("bash", bash("echo bg; sleep 0.2; echo done", { run_in_background: true }), "started background task bash-1", "background start");
await expect("task_output", { task_id: "bash-1", wait: true, timeout_ms: 10000 }, "bg\ndone\n[status: completed, exit code: 0]", "task_output");

const exited = new Promise((resolve) => transport._process?.once("exit", (code, signal) => resolve({ code, signal })));
await client.close();
const { code, signal } = await Promise.race([exited, new Promise((r) => setTimeout(() => r({ code: "none", signal: "timeout" }), 10_000))]);
if (code === 0 || (code === null && signal === null)) pass("dsh mcp exited cleanly when the client closed");
else fail(`dsh mcp exit: code ${code}, signal ${signal}`);

clearTimeout(watchdog);
if (failed) {
  console.log("dsh's stderr:\n" + stderr.replace(/^/gm, "      "));
  process.exit(1);
}
