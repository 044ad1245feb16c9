// Helpers for browser tests that run turns: the scripted model server and the GitHub double
// on free ports, and calls to the engine's API the way Kiln's own page makes them.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ROOT, launchBrowser, tempDir } from "./harness.mjs";

/** Where scripts/deps installed the real agent CLIs (scripts/test sets it). */
export const CLI_DIR = process.env.KILN_AGENT_CLI_DIR;

export const MODEL_SERVER = process.env.KILN_MODEL_SERVER_BIN ?? path.join(ROOT, "target/debug/kiln-model-server");

/**
 * Starts the scripted model server on a free port with `steps`; resolves with its base URL. With `record` (a file path),
 * it appends every request it gets to that file (`recordedRequests` reads them). `options` may also be an array of
 * extra arguments for the server (e.g. `["--record", file]`).
 */
export function startModelServer(steps, options = {}) {
  const { record, args: extra = [] } = Array.isArray(options) ? { args: options } : options;
  const script = path.join(tempDir("kiln-model-script-"), "script.json");
  fs.writeFileSync(script, JSON.stringify(steps));
  const args = ["--port", "0", "--script", script, ...(record ? ["--record", record] : []), ...extra];
  return startListening(MODEL_SERVER, args, "the model server");
}

/** Kiln's own agent against the scripted model server `model` (its only model, "scripted"), with no planner agent;
 * `extra` adds settings (an `openaiKey`). */
export function useScriptedModel(url, model, extra = {}) {
  return api(url, "update_settings", {
    defaultDriver: "openai-compatible",
    openaiBaseUrl: `${model.url}/v1`,
    openaiModel: "scripted",
    plannerAgent: false,
    ...extra,
  });
}

export const GITHUB_DOUBLE = process.env.KILN_GITHUB_DOUBLE_BIN ?? path.join(ROOT, "target/debug/kiln-github-double");

/** Starts the GitHub double with `args` (`--token`, `--repo`, `--issues`) on a free port; resolves with its URL. */
export function startGithub(args) {
  return startListening(GITHUB_DOUBLE, ["--port", "0", ...args], "the GitHub double");
}

/** Starts `program` and resolves with `{url, child}` once it prints `listening on <url>`. */
function startListening(program, args, what) {
  const child = spawn(program, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${out}`)), 30_000);
    child.stdout.on("data", (d) => {
      out += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child });
      }
    });
    child.on("exit", (code) => reject(new Error(`${what} exited (${code}): ${out}`)));
  });
}

/** The requests a model server started with `record` has got so far: {method, path, headers, body}, oldest first. */
export function recordedRequests(record) {
  if (!fs.existsSync(record)) return [];
  return fs
    .readFileSync(record, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** Connection cookies by server origin: every API call but the state needs one. */
const cookies = new Map();

/** A connection cookie for the server at `url`, connected with the token of its link (`?token=…`). */
async function cookieFor(url) {
  const origin = new URL(url).origin;
  if (!cookies.has(origin)) {
    const token = new URL(url).searchParams.get("token");
    assert.ok(token, `no server token in ${url}: use the link startServer answers`);
    const response = await fetch(new URL("/api/connect", url), {
      method: "POST",
      headers: { "content-type": "application/json", "x-kiln": "1" },
      body: JSON.stringify({ token }),
    });
    assert.equal(response.status, 200, `connect: ${await response.text()}`);
    cookies.set(origin, response.headers.get("set-cookie").split(";")[0]);
  }
  return cookies.get(origin);
}

/** Calls the engine's API as Kiln's own page does. */
export async function api(url, command, args) {
  const response = await fetch(new URL(`/api/${command}`, url), {
    method: "POST",
    headers: { "content-type": "application/json", "x-kiln": "1", cookie: await cookieFor(url) },
    body: JSON.stringify(args),
  });
  const body = await response.json();
  assert.ok(response.ok, `${command}: ${JSON.stringify(body)}`);
  return body;
}

/** Only `lo` in this process's network namespace: the CLI can reach nothing else. */
export function assertLoopbackOnly() {
  const devices = fs
    .readFileSync("/proc/self/net/dev", "utf8")
    .split("\n")
    .slice(2)
    .map((l) => l.split(":")[0].trim())
    .filter(Boolean);
  assert.deepEqual(devices, ["lo"], "run this test in a loopback-only network namespace (scripts/test does)");
}

/**
 * The `before` of a test file: what it needs is there, then the browser is started. `clis`: the
 * real agent CLIs it runs (which only run in a loopback-only namespace); `binaries`: the doubles
 * it starts (the model server, the GitHub and ACP doubles), built by `cargo build --workspace`.
 */
export function prepare({ clis = [], binaries = [], loopbackOnly = clis.length > 0 } = {}) {
  return async () => {
    if (loopbackOnly) assertLoopbackOnly();
    if (clis.length)
      assert.ok(CLI_DIR, "KILN_AGENT_CLI_DIR is not set: scripts/test sets it after scripts/deps installs the CLIs");
    for (const cli of clis) {
      assert.ok(
        fs.existsSync(path.join(CLI_DIR, "node_modules/.bin", cli)),
        `no ${cli} in ${CLI_DIR}: run scripts/deps`,
      );
    }
    for (const binary of binaries) assert.ok(fs.existsSync(binary), `no ${binary}: cargo build --workspace first`);
    await launchBrowser();
  };
}
