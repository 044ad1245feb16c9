// The bench part `turn`, run by tests/bench/turn.sh inside a loopback-only network namespace: one turn
// of the real claude CLI against the scripted model server (tests/model-server), bare and through Kiln.
//
// - bare: `claude -p --verbose --output-format stream-json --include-partial-messages --permission-mode
//   acceptEdits --allowedTools Bash -- PROMPT` (the command line Kiln's claude driver builds, without
//   Kiln's instructions) in a copy of examples/shop, timed from the spawn to its `result` line on stdout
//   (the turn's answer is complete; Kiln's turn ends on that line too, while the CLI process is still
//   exiting), and to the process's exit (logged).
// - through Kiln: `kiln serve` on the same kind of copy, a session created through the API (its setup
//   finished, untimed), then `send_message` with the claude driver, timed from the call to the API's
//   settled state: `get_session` says nothing runs and the state left `running` (polled every POLL_MS,
//   so Kiln's figure includes up to that much of polling), i.e. after the turn's snapshots, the check of
//   its writes and the chain's decision of what follows.
// The script is the same for both: one Bash tool call (`ls`) and a reply ending `HANDOFF: none`, so the
// turn changes no file and no gate runs. Runs alternate (one warm-up each, not counted); medians of RUNS.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { BUILD, ROOT, median, row as benchRow } from "./common.mjs";

const CLI_DIR =
  process.env.KILN_AGENT_CLI_DIR ||
  path.join(process.env.XDG_CACHE_HOME || path.join(process.env.HOME, ".cache"), "kiln/agent-cli");
const CLAUDE = path.join(CLI_DIR, "node_modules/.bin/claude");

const RUNS = Number(process.env.KILN_BENCH_TURN_RUNS ?? 5);
const POLL_MS = 10;
const REPLY = "The catalog keeps its client code in src/client.";
const PROMPT = "Where does the catalog keep its client code?";
const MEASURE = "Kiln's overhead on one turn (real claude CLI, scripted model)";
const GOAL = "≤ 1.1× the bare CLI + 150 ms";

/** The model servers started: children the harness's cleanUp does not know. */
const models = [];

const row = (kiln, anchor, verdict) => benchRow(MEASURE, kiln, anchor, GOAL, verdict);

function missing() {
  if (!fs.existsSync(process.env.KILN_BIN)) return `no ${process.env.KILN_BIN} (cargo build first)`;
  if (!fs.existsSync(process.env.KILN_MODEL_SERVER_BIN))
    return `no ${process.env.KILN_MODEL_SERVER_BIN} (cargo build --workspace first)`;
  if (!fs.existsSync(CLAUDE)) return `no claude CLI in ${CLI_DIR} (scripts/deps)`;
  if (!fs.existsSync(path.join(ROOT, "tests/browser/node_modules"))) return "no tests/browser/node_modules (scripts/deps)";
  return null;
}

/** One turn's steps: the model lists a directory, then answers. */
const turnSteps = () => [
  { tool: "Bash", arguments: { command: "ls modules/catalog/src", description: "List the catalog's sources" } },
  { text: `${REPLY}\n\nHANDOFF: none - answered` },
];

/** The variables Kiln's driver gives the CLI (drivers/claude.rs cli_env), and the model server's address. */
function cliEnv(home, modelUrl) {
  return {
    ...process.env,
    HOME: home,
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: "sk-ant-test",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
  };
}

/** Whether a stream-json line is the turn's `result` (its answer is complete). */
function isResult(line) {
  if (!line.includes('"result"')) return false;
  try {
    return JSON.parse(line).type === "result";
  } catch {
    return false;
  }
}

/** The bare CLI's turn in `workdir`: milliseconds from spawn to its result line, and to its exit. */
function bareTurn(workdir, env) {
  const args = [
    "-p",
    "--verbose",
    "--output-format",
    "stream-json",
    "--include-partial-messages",
    "--permission-mode",
    "acceptEdits",
    "--allowedTools",
    "Bash",
    "--",
    PROMPT,
  ];
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(CLAUDE, args, { cwd: workdir, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let result = null;
    child.stdout.on("data", (d) => {
      out += d;
      if (result === null && out.split("\n").slice(0, -1).some(isResult)) result = performance.now() - started;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      const ms = performance.now() - started;
      if (code !== 0 || result === null || !out.includes(REPLY))
        reject(new Error(`the bare CLI's turn failed (${code}): ${err}${out.slice(-2000)}`));
      else resolve({ result, exit: ms });
    });
  });
}

async function main() {
  const why = missing();
  if (why) {
    row(`unmeasured: ${why}`, "—", "unmeasured");
    return;
  }
  const { startServer, stopServer, copyExample, tempDir, cleanUp } = await import("../browser/harness.mjs");
  const { api, assertLoopbackOnly, startModelServer } = await import("../browser/agents.mjs");
  try {
    try {
      assertLoopbackOnly();
    } catch {
      row("unmeasured: not in a loopback-only network namespace (run tests/bench/turn.sh)", "—", "unmeasured");
      return;
    }
    const turns = RUNS + 1;
    const steps = Array.from({ length: turns }, turnSteps).flat();

    // Bare: one model server for every bare turn (each turn takes its two steps), one copy of the shop.
    const bareModel = await startModelServer(steps);
    models.push(bareModel.child);
    const bareDir = copyExample();
    const bareEnv = cliEnv(tempDir("kiln-bench-bare-home-"), bareModel.url);

    // Through Kiln: the same, served; the claude driver is picked per message, the planner agent off.
    const kilnModel = await startModelServer(steps);
    models.push(kilnModel.child);
    const { url, child } = await startServer({
      workspace: copyExample(),
      env: { HOME: tempDir("kiln-bench-kiln-home-"), ANTHROPIC_BASE_URL: kilnModel.url, ANTHROPIC_API_KEY: "sk-ant-test" },
    });
    await api(url, "update_settings", { claudePath: CLAUDE, plannerAgent: false });

    const kilnTurn = async () => {
      const created = await api(url, "create_session", { brief: "Look through @shop/catalog's client code" });
      const settled = async (deadline) => {
        for (;;) {
          const view = await api(url, "get_session", { sessionId: created.id });
          // Settled: no turn, setup or gate runs, and the chain has decided what follows (the state moved on).
          if (!view.running && view.state !== "running") return view;
          if (performance.now() > deadline) throw new Error(`session ${created.id} still runs`);
          await new Promise((r) => setTimeout(r, POLL_MS));
        }
      };
      await settled(performance.now() + 120_000); // its setup (npm ci), untimed
      const started = performance.now();
      await api(url, "send_message", { sessionId: created.id, text: PROMPT, driver: "claude" });
      const view = await settled(started + 120_000);
      const ms = performance.now() - started;
      const entries = await api(url, "get_transcript", { sessionId: created.id });
      const said = entries.map((e) => e.text).join("\n");
      assert.ok(said.includes(REPLY), `the turn through Kiln did not answer: ${said.slice(-2000)}`);
      console.log(`kiln turn: ${Math.round(ms)} ms, state ${view.state}`);
      return ms;
    };

    const bare = [];
    const kiln = [];
    for (let i = 0; i < turns; i++) {
      const b = await bareTurn(bareDir, bareEnv);
      console.log(`bare turn: ${Math.round(b.result)} ms to its result, ${Math.round(b.exit)} ms to exit`);
      const k = await kilnTurn();
      // The first of each is a warm-up (the CLI's files into the page cache, Kiln's first session).
      if (i > 0) {
        bare.push(b);
        kiln.push(k);
      }
    }
    stopServer(child);
    const b = median(bare.map((x) => x.result));
    const exit = median(bare.map((x) => x.exit));
    const k = median(kiln);
    const limit = 1.1 * b + 150;
    console.log(
      `bare ${bare.map((x) => Math.round(x.result)).join(", ")} ms; kiln ${kiln.map(Math.round).join(", ")} ms; limit ${Math.round(limit)} ms`,
    );
    row(
      `${Math.round(k)} ms (median of ${kiln.length}; ${k >= b ? "+" : "−"}${Math.round(Math.abs(k - b))} ms; ${BUILD})`,
      `${Math.round(b)} ms (bare claude -p to its result; ${Math.round(exit)} ms to exit)`,
      k <= limit ? "met" : "MISSED",
    );
  } finally {
    await cleanUp();
  }
}

main()
  .catch((e) => {
    console.error(e);
    row(`unmeasured: failed: ${String(e.message ?? e).split("\n")[0].slice(0, 160)}`, "—", "unmeasured");
  })
  // The model servers are children the harness does not track: whatever happened, end with them.
  .finally(() => {
    for (const child of models) if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  });
