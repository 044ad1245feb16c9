// The desktop tests' shared harness for driving the real app: temp dirs and child processes
// cleaned up whatever happens, a virtual X display (Xvfb), tauri-driver in front of
// WebKitWebDriver, screenshots of the display, the processes a workspace left running, the
// scripted model server, and the UI steps the tests share (the claude CLI in Settings, a new
// session).
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { waitFor } from "./webdriver.mjs";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const ARTIFACTS = path.join(ROOT, "tests/artifacts");
export const KILN = process.env.KILN_BIN ?? path.join(ROOT, "target/debug/kiln");
export const MODEL_SERVER = path.join(ROOT, "target/debug/kiln-model-server");
const CLI_DIR = process.env.KILN_AGENT_CLI_DIR ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "kiln/agent-cli");
export const CLAUDE = path.join(CLI_DIR, "node_modules/.bin/claude");
export const WEBKIT_DRIVER = process.env.WEBKIT_WEBDRIVER ?? "/usr/bin/WebKitWebDriver";
// scripts/deps installs tauri-driver with cargo: on PATH, or in cargo's bin directory.
export const TAURI_DRIVER =
  process.env.TAURI_DRIVER ??
  [...(process.env.PATH ?? "").split(":"), path.join(process.env.CARGO_HOME ?? path.join(os.homedir(), ".cargo"), "bin")]
    .map((dir) => path.join(dir, "tauri-driver"))
    .find((file) => fs.existsSync(file)) ??
  "tauri-driver";

/** Fails unless this process's network namespace has only loopback (scripts/test: unshare -n). */
export function assertLoopbackOnly() {
  const devices = fs.readFileSync("/proc/self/net/dev", "utf8").split("\n").slice(2).map((l) => l.split(":")[0].trim()).filter(Boolean);
  assert.deepEqual(devices, ["lo"], "run this test in a loopback-only network namespace (scripts/test does: unshare -n)");
}

/** Fails naming how to get each of `files` ([path, how]) and each tool on PATH that is missing. */
export function assertPresent(files, tools = []) {
  for (const [file, how] of files) assert.ok(fs.existsSync(file), `no ${file}: ${how}`);
  for (const tool of tools) {
    try {
      execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" });
    } catch {
      throw new Error(`${tool} is missing: run ./scripts/deps`);
    }
  }
}

/** What a test of the app with a real claude turn needs built or installed ([path, how]), and the
 * tools its virtual display and screenshots need: for `assertPresent`. */
export const CLAUDE_APP_PARTS = [
  [KILN, "cargo build first"],
  [MODEL_SERVER, "cargo build --workspace first"],
  [CLAUDE, "run ./scripts/deps (it installs the pinned claude CLI)"],
  [WEBKIT_DRIVER, "run ./scripts/deps (webkit2gtk-driver)"],
  [TAURI_DRIVER, "run ./scripts/deps (cargo install tauri-driver)"],
];
export const DISPLAY_TOOLS = ["Xvfb", "import", "convert"];

// --- processes and temp files, cleaned up whatever happens ------------------------------------
const children = [];
const temps = [];
const closers = [];
/** Runs `close` at stopAll, e.g. to close a server this test started: an open one keeps node alive. */
export function closeAtEnd(close) {
  closers.push(close);
}
export function temp(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(dir);
  return dir;
}
export function start(cmd, args, opts = {}) {
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], ...opts });
  child.output = "";
  child.stdout?.on("data", (d) => (child.output += d));
  child.stderr?.on("data", (d) => (child.output += d));
  children.push(child);
  return child;
}
export async function stopAll() {
  for (const child of children.reverse()) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  }
  await new Promise((r) => setTimeout(r, 1000));
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  for (const close of closers) close();
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
}

/** Resolves with the first match of `re` in the child's output. */
export function outputMatch(child, re, what, timeout = 60_000) {
  return waitFor(what, () => {
    if (child.exitCode !== null) throw new Error(`${what}: the process exited (${child.exitCode}): ${child.output.slice(-2000)}`);
    return re.exec(child.output);
  }, timeout, 100);
}

/** A screenshot of the whole X display (the window as a user sees it) as tests/artifacts/<name>.png, checked not blank. */
export function shot(display, name) {
  const file = path.join(ARTIFACTS, `${name}.png`);
  execFileSync("import", ["-window", "root", file], { env: { ...process.env, DISPLAY: display } });
  const colours = Number(execFileSync("convert", [file, "-format", "%k", "info:"]).toString().trim());
  assert.ok(colours > 20, `${file} looks blank: ${colours} colours`);
  return file;
}

/** Each child's last output, for a failure report. */
function childOutputs() {
  return children.filter((c) => c.output).map((c) => `--- last output of ${c.spawnfile} ---\n${c.output.slice(-2500)}`);
}

/** Pass/fail reporting for the test `name`, in the form scripts/test counts ("desktop: N passed,
 * M failed"): `ok` for each check that held; `run(main, artifacts)` runs the test, reports it
 * (with the children's last output on a failure, and the exit code), and cleans up whatever happens. */
export function reporter(name) {
  let passed = 0;
  return {
    ok(what) {
      passed += 1;
      console.log(`desktop ${name}: ok: ${what}`);
    },
    async run(main, artifacts) {
      const started = Date.now();
      try {
        await main();
        console.log(`desktop ${name}: passed in ${Math.round((Date.now() - started) / 1000)} s; screenshots in ${ARTIFACTS}/${artifacts}`);
        console.log(`desktop: ${passed} passed, 0 failed`);
      } catch (e) {
        console.error(`desktop ${name}: FAILED: ${e.stack ?? e}`);
        for (const output of childOutputs()) console.error(output);
        console.log(`desktop: ${passed} passed, 1 failed`);
        process.exitCode = 1;
      } finally {
        await stopAll();
      }
    },
  };
}

// --- the display and the driver ---------------------------------------------------------------
export async function startDisplay() {
  const xvfb = spawn("Xvfb", ["-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp"], { stdio: ["ignore", "ignore", "pipe", "pipe"] });
  children.push(xvfb);
  let number = "";
  xvfb.stdio[3].on("data", (d) => (number += d));
  await waitFor("Xvfb's display number", () => /\d+\n/.test(number), 15_000, 50);
  return `:${number.trim()}`;
}

export async function startDriver(env) {
  // A free port for tauri-driver, and the next one for WebKitWebDriver behind it.
  const port = await new Promise((resolve) => {
    const probe = http.createServer().listen(0, "127.0.0.1", () => {
      const p = probe.address().port;
      probe.close(() => resolve(p));
    });
  });
  const driver = start(TAURI_DRIVER, ["--port", String(port), "--native-port", String(port + 1), "--native-driver", WEBKIT_DRIVER], { env });
  const url = `http://127.0.0.1:${port}`;
  await waitFor("tauri-driver's /status", async () => {
    if (driver.exitCode !== null) throw new Error(`tauri-driver exited (${driver.exitCode}): ${driver.output}`);
    return (await fetch(`${url}/status`).catch(() => null))?.ok;
  }, 30_000, 200);
  return url;
}

/** Pids whose working directory or command line is inside `dir`. */
export function sessionPids(dir) {
  const pids = [];
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cwd.startsWith(dir) || cmd.includes(`${dir}/.kiln/sessions`)) pids.push(pid);
    } catch {}
  }
  return pids;
}


// --- the scripted model and the shared UI steps -------------------------------------------------
/** Starts the scripted model server answering `steps` in order; resolves with its base URL. */
export async function startModelServer(steps) {
  const dir = temp("kiln-desktop-model-");
  fs.writeFileSync(path.join(dir, "script.json"), JSON.stringify(steps));
  const child = start(MODEL_SERVER, ["--port", "0", "--script", path.join(dir, "script.json")]);
  const m = await outputMatch(child, /listening on (http:\/\/127\.0\.0\.1:\d+)/, "the model server");
  return m[1];
}

/** Settings: the claude CLI at `claude` as the default driver, saved and available. */
export async function useClaude(s, claude) {
  await s.click(await s.waitFor("[data-testid=settings]"));
  const claudePath = await s.waitFor("#claude-path");
  await s.type(claudePath, claude);
  await s.script("const el = arguments[0]; el.value = 'claude'; el.dispatchEvent(new Event('change', { bubbles: true }));", [s.ref(await s.waitFor("[data-testid=default-driver]"))]);
  await s.click(await s.waitFor("[data-testid=save-settings]"));
  await s.waitFor("[data-testid=saved]", { timeout: 30_000 });
  await s.waitFor('[data-testid=driver-list] [data-driver=claude][data-available=true]', { timeout: 30_000 });
}

/** A new session with `brief`, from the dashboard; resolves once the page shows it (its id in the route). */
export async function createSession(s, brief) {
  await s.script("location.hash = '#/'");
  await s.click(await s.waitFor("[data-testid=new-session]"));
  await s.type(await s.waitFor("[data-testid=brief]"), brief);
  await s.click(await s.waitFor("[data-testid=create-session]"));
  const hash = await waitFor("the session's page", async () => (await s.script("return location.hash")).match(/#\/session\/([^/?]+)/), 60_000);
  return decodeURIComponent(hash[1]);
}
