// Drives the example ACP agent of package acp (a test binary built with
// `go test -c ./acp`) over stdio with the official TypeScript ACP client SDK
// (issue 6), from .ci/node. Two agent processes, one prompt each:
//   1. a client advertising clientCapabilities._meta.terminal_output gets a
//      tool_call with a terminal block and _meta.terminal_info, then a
//      tool_call_update with _meta.terminal_output and _meta.terminal_exit;
//   2. a client without it gets no terminal block and no _meta, and the
//      update's content is the output as one console text block;
//   3. the command policy's ask (issue 12) reaches the client as
//      session/request_permission: allow_once runs the command, reject_once
//      and a cancelled outcome return their exact texts and run nothing;
//   4. a command no rule allows offers allow_always too: chosen, the same
//      kind of command runs unasked in the rest of the session.
// Each agent must exit 0 within 10s once its stdin closes.
// Usage: node .ci/acp-client.mjs PATH/TO/acp-agent
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Readable, Writable } from "node:stream";
import { isDeepStrictEqual, inspect } from "node:util";
import { fileURLToPath, pathToFileURL } from "node:url";

// The SDK lives in .ci/node, not next to this script: import it by path.
const sdkDir = join(dirname(fileURLToPath(import.meta.url)), "node", "node_modules", "@agentclientprotocol", "sdk");
const acp = await import(pathToFileURL(join(sdkDir, "dist", "v1", "stable", "acp.js")).href);
const { client, methods, ndJsonStream, PROTOCOL_VERSION, RequestError } = acp;

const COMMAND = "echo hello-acp; exit 3";
const OUTPUT = "hello-acp\n[exit code: 3]";

if (process.argv.length !== 3) {
  console.error("usage: node .ci/acp-client.mjs PATH/TO/acp-agent");
  process.exit(2);
}
const agentBin = process.argv[2];

// A CI step must never hang.
const watchdog = setTimeout(() => {
  console.log("FAIL  watchdog: no result within 60s");
  process.exit(1);
}, 60_000);

let failed = false;
const pass = (msg) => console.log(`PASS  ${msg}`);
const fail = (msg, received) => {
  failed = true;
  console.log(`FAIL  ${msg}`);
  if (received !== undefined) {
    console.log(inspect(received, { depth: null, breakLength: 100 }).replace(/^/gm, "      "));
  }
};
// check passes when every [what, ok] holds; else shows what was received.
const check = (label, checks, received) => {
  const bad = checks.filter(([, ok]) => !ok).map(([what]) => what);
  if (bad.length === 0) pass(label);
  else fail(`${label}: ${bad.join("; ")}`, received);
};
const has = (obj, key) => obj != null && Object.hasOwn(obj, key);

// run starts one agent process, initializes it with clientCapabilities,
// opens a session in cwd and prompts COMMAND (or each of an array of
// commands, in turn). It returns the session/update
// notifications received, the prompt's response and the agent's exit status
// after its stdin closed.
async function run(clientCapabilities, cwd, command = COMMAND, permission = null) {
  const child = spawn(agentBin, [], {
    env: { ...process.env, DSH_ACP_EXAMPLE_AGENT: "1" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (s) => (stderr += s));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const spawned = new Promise((resolve, reject) => {
    child.on("spawn", resolve);
    child.on("error", reject);
  });
  await spawned;

  const notifications = [];
  const permissions = [];
  const unsupported = (ctx) => {
    throw RequestError.methodNotFound(ctx.method);
  };
  const answerPermission = (ctx) => {
    permissions.push(ctx.params);
    // "cancelled": the client cancelled the prompt turn while asked.
    if (permission === "cancelled") return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: permission } };
  };
  const app = client({ name: "dsh-ci" })
    .onNotification(methods.client.session.update, (ctx) => {
      notifications.push(ctx.params);
    })
    .onRequest(methods.client.session.requestPermission, permission ? answerPermission : unsupported)
    .onRequest(methods.client.fs.readTextFile, unsupported)
    .onRequest(methods.client.fs.writeTextFile, unsupported)
    .onRequest(methods.client.terminal.create, unsupported)
    .onRequest(methods.client.terminal.output, unsupported)
    .onRequest(methods.client.terminal.release, unsupported)
    .onRequest(methods.client.terminal.waitForExit, unsupported)
    .onRequest(methods.client.terminal.kill, unsupported);

  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  let result;
  try {
    result = await app.connectWith(stream, async (ctx) => {
      const init = await ctx.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities,
        clientInfo: { name: "dsh-ci", version: "0" },
      });
      const session = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
      // One prompt per command, in order, in this one session.
      const responses = [];
      for (const text of Array.isArray(command) ? command : [command]) {
        responses.push(await ctx.request(methods.agent.session.prompt, {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text }],
        }));
      }
      return { init, session, response: responses[0], responses };
    });
  } catch (err) {
    // Show what the agent said, if anything, with the SDK's error.
    child.kill("SIGKILL");
    throw Object.assign(new Error(`${err?.message ?? err}`, { cause: err }), { agentStderr: stderr });
  } finally {
    // connectWith closes the connection; make sure the agent's stdin is closed.
    child.stdin.end();
  }

  const timeout = new Promise((resolve) => setTimeout(() => resolve(null), 10_000).unref());
  const exit = await Promise.race([exited, timeout]);
  if (exit === null) child.kill("SIGKILL");
  return { ...result, notifications, permissions, exit, stderr };
}

// checkExit checks the agent exited 0 within 10s of its stdin closing.
function checkExit(label, r) {
  if (r.exit === null) fail(`${label}: agent still running 10s after its stdin closed (killed)`, r.stderr);
  else if (r.exit.code !== 0) fail(`${label}: agent exited ${r.exit.code ?? r.exit.signal} after its stdin closed (want 0)`, r.stderr);
  else pass(`${label}: agent exited 0 after its stdin closed`);
}

// checkCommon checks what both clients get alike and returns the tool call
// and its update (or undefined).
function checkCommon(label, r) {
  const updates = r.notifications.map((n) => n.update);
  const calls = updates.filter((u) => u.sessionUpdate === "tool_call");
  const results = updates.filter((u) => u.sessionUpdate === "tool_call_update");
  check(
    `${label}: session/prompt stopReason end_turn, one tool_call and one tool_call_update for ${r.session.sessionId}`,
    [
      [`stopReason ${r.response.stopReason} (want end_turn)`, r.response.stopReason === "end_turn"],
      [`${calls.length} tool_call updates (want 1)`, calls.length === 1],
      [`${results.length} tool_call_update updates (want 1)`, results.length === 1],
      [`${updates.length} updates in all (want 2)`, updates.length === 2],
      ["an update for another session", r.notifications.every((n) => n.sessionId === r.session.sessionId)],
    ],
    r.notifications,
  );
  const call = calls[0];
  const update = results[0];
  if (call) {
    check(
      `${label}: tool_call call-1 "${COMMAND}" (kind execute, in_progress)`,
      [
        [`toolCallId ${call.toolCallId} (want call-1)`, call.toolCallId === "call-1"],
        [`title ${JSON.stringify(call.title)}`, call.title === COMMAND],
        [`rawInput ${JSON.stringify(call.rawInput)}`, call.rawInput === COMMAND],
        [`kind ${call.kind} (want execute)`, call.kind === "execute"],
        [`status ${call.status} (want in_progress)`, call.status === "in_progress"],
      ],
      call,
    );
  }
  if (update) {
    check(
      `${label}: tool_call_update call-1 completed`,
      [
        [`toolCallId ${update.toolCallId} (want call-1)`, update.toolCallId === "call-1"],
        [`status ${update.status} (want completed)`, update.status === "completed"],
      ],
      update,
    );
  }
  return { call, update };
}

const cwd = mkdtempSync(join(tmpdir(), "acp-client-"));
try {
  // ---- 1. a client advertising terminal_output ------------------------------
  let label = "terminal_output client";
  let r = await run({ _meta: { terminal_output: true } }, cwd);
  let { call, update } = checkCommon(label, r);
  if (call) {
    const terminal = (call.content ?? []).filter((c) => c.type === "terminal");
    check(
      `${label}: tool_call shows terminal call-1 and _meta.terminal_info {terminal_id: call-1, cwd}`,
      [
        ["no terminal block {type: terminal, terminalId: call-1}", terminal.length === 1 && terminal[0].terminalId === "call-1"],
        [
          "_meta.terminal_info differs",
          isDeepStrictEqual(call._meta?.terminal_info, { terminal_id: "call-1", cwd }),
        ],
      ],
      call,
    );
  }
  if (update) {
    check(
      `${label}: tool_call_update carries _meta.terminal_output and _meta.terminal_exit {exit_code: 3}, no content`,
      [
        ["has content", !has(update, "content") || update.content == null],
        [
          "_meta.terminal_output differs",
          isDeepStrictEqual(update._meta?.terminal_output, { terminal_id: "call-1", data: OUTPUT }),
        ],
        [
          "_meta.terminal_exit differs",
          isDeepStrictEqual(update._meta?.terminal_exit, { terminal_id: "call-1", exit_code: 3 }),
        ],
      ],
      update,
    );
  }
  checkExit(label, r);

  // ---- 2. a client without it ----------------------------------------------
  label = "plain client";
  r = await run({}, cwd);
  ({ call, update } = checkCommon(label, r));
  if (call) {
    check(
      `${label}: tool_call has no terminal block and no _meta`,
      [
        ["has a terminal block", !(call.content ?? []).some((c) => c.type === "terminal")],
        ["has _meta", !has(call, "_meta") || call._meta == null],
      ],
      call,
    );
  }
  if (update) {
    const want = [{ type: "content", content: { type: "text", text: "```console\n" + OUTPUT + "\n```" } }];
    check(
      `${label}: tool_call_update content is the output in one console text block, no _meta`,
      [
        ["content differs", isDeepStrictEqual(update.content, want)],
        ["has _meta", !has(update, "_meta") || update._meta == null],
      ],
      update,
    );
  }
  checkExit(label, r);

  // ---- 3. the command policy asks: allow once, reject, cancelled ---------------
  for (const [option, runs, text] of [
    ["allow_once", true, "(no output)"],
    ["reject_once", false, "Error: the user declined to run this command"],
    ["cancelled", false, "Error: the user dismissed the approval request; the command did not run"],
  ]) {
    label = `permission ${option}`;
    const file = `acp-${option}`;
    r = await run({}, cwd, `touch ${file}`, option);
    const asked = r.permissions[0];
    const update = r.notifications.map((n) => n.update).find((u) => u.sessionUpdate === "tool_call_update");
    const shown = update?.content?.[0]?.content?.text;
    check(
      `${label}: session/request_permission for call-1 with allow_once and reject_once; the command ${runs ? "ran" : "did not run"}`,
      [
        [`${r.permissions.length} permission requests (want 1)`, r.permissions.length === 1],
        [`toolCallId ${asked?.toolCall?.toolCallId}`, asked?.toolCall?.toolCallId === "call-1"],
        [
          `options ${JSON.stringify(asked?.options?.map((o) => o.optionId))}`,
          isDeepStrictEqual(asked?.options?.map((o) => o.optionId), ["allow_once", "reject_once"]),
        ],
        [`the question's text`, (asked?.toolCall?.content?.[0]?.content?.text ?? "").startsWith(`Run this command?\n\ntouch ${file}\n\nin ${cwd}`)],
        [`result ${JSON.stringify(shown)}`, shown === "```console\n" + text + "\n```"],
        [`the file ${file}`, existsSync(join(cwd, file)) === runs],
      ],
      { permissions: r.permissions, update },
    );
    checkExit(label, r);
  }

  // ---- 4. allow always: remembered for the rest of the session ------------------
  // No rule allows mkdir: remember is offered, as `mkdir *` (-p is an option).
  {
    label = "permission allow_always";
    const dirs = ["acp-always-1", "acp-always-2"];
    r = await run({}, cwd, dirs.map((d) => `mkdir -p ${d}`), "allow_always");
    const asked = r.permissions[0];
    const always = asked?.options?.find((o) => o.optionId === "allow_always");
    check(
      `${label}: offered as "Allow \`mkdir *\` for the rest of this session"; the session's next mkdir runs unasked`,
      [
        [`${r.permissions.length} permission requests (want 1, for the first prompt)`, r.permissions.length === 1],
        [
          `options ${JSON.stringify(asked?.options?.map((o) => o.optionId))}`,
          isDeepStrictEqual(asked?.options?.map((o) => o.optionId), ["allow_once", "allow_always", "reject_once"]),
        ],
        [`allow_always is named ${JSON.stringify(always?.name)}`, always?.name === "Allow `mkdir *` for the rest of this session"],
        [`stop reasons ${JSON.stringify(r.responses.map((x) => x.stopReason))}`, r.responses.every((x) => x.stopReason === "end_turn")],
        ...dirs.map((d) => [`${d} was not made`, existsSync(join(cwd, d))]),
      ],
      { permissions: r.permissions, notifications: r.notifications },
    );
    checkExit(label, r);
  }
} catch (err) {
  fail(`ACP exchange failed: ${err?.message ?? err}`, { error: err?.cause ?? err, agentStderr: err?.agentStderr });
} finally {
  rmSync(cwd, { recursive: true, force: true });
  clearTimeout(watchdog);
}
process.exit(failed ? 1 : 0);
