// The browser tests' shared harness: a copy of examples/shop, `kiln serve` on a free port,
// Debian's Chromium through playwright-core, pages that log their console on failure, and
// cleanup of everything whatever happens.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const KILN = process.env.KILN_BIN ?? path.join(ROOT, "target/debug/kiln");
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const ARTIFACTS = path.join(ROOT, "tests/artifacts");
const EXAMPLE = path.join(ROOT, "examples/shop");

// CI is a 2-core machine: be generous.
export const STEP_TIMEOUT = 30_000;
export const TEST_TIMEOUT = 180_000;

/** Everything to clean up, whatever happens. */
const servers = [];
const tempDirs = [];
let browser;

export function tempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** A copy of examples/shop without node_modules or .kiln, in a folder named `shop`. */
export function copyExample() {
  const dest = path.join(tempDir("kiln-browser-ws-"), "shop");
  fs.cpSync(EXAMPLE, dest, {
    recursive: true,
    filter: (src) => {
      const rel = path.relative(EXAMPLE, src);
      return !rel.split(path.sep).some((part) => part === "node_modules" || part === ".kiln");
    },
  });
  return dest;
}

/** Starts `kiln serve --port 0 [...args]` and resolves with its URL and its config dir (where
 * `kiln token` keeps the tokens it admits). A loopback server's URL is the link it prints, with
 * its token (`/?token=…`): a page opened on it connects, as the user's browser does. */
export function startServer({ workspace, env = {}, args: extra = [] } = {}) {
  const configDir = tempDir("kiln-browser-config-");
  const args = ["serve", "--port", "0", ...extra];
  if (workspace) args.push("--workspace", workspace);
  const child = spawn(KILN, args, {
    env: { ...process.env, ...env, KILN_CONFIG_DIR: configDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  servers.push(child);
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`kiln serve printed no URL within 60 s.\nstdout: ${stdout}\nstderr: ${stderr}`)),
      60_000,
    );
    child.stdout.on("data", (d) => {
      stdout += d;
      const m = /Kiln is serving (http:\/\/127\.0\.0\.1:(\d+)\/) \((loopback|self-hosted)\)/.exec(stdout);
      if (!m) return;
      const link = /^(http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)$/m.exec(stdout);
      if (m[3] === "loopback" && !link) return;
      clearTimeout(timer);
      if (Number(m[2]) === 0) reject(new Error(`kiln serve printed port 0, not the port it bound: ${m[0]}`));
      else resolve({ url: link ? link[1] : m[1], child, configDir });
    });
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`kiln serve exited early (code ${code}, signal ${signal}).\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}

/**
 * Stops a server and resolves once it has exited: `kiln serve` records what its shutdown
 * stopped, so its files are not removed while it still writes them. SIGKILL after 20 s.
 */
export async function stopServer(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  await exited;
  clearTimeout(timer);
}

/** A fresh page that fails the test on uncaught page errors and logs the console on failure. */
export async function newPage(t) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT);
  const errors = [];
  const consoleLines = [];
  page.on("pageerror", (e) => errors.push(e));
  page.on("console", (m) => consoleLines.push(`[${m.type()}] ${m.text()}`));
  t.after(async () => {
    for (const line of consoleLines) t.diagnostic(`browser console: ${line}`);
    await context.close().catch(() => {});
  });
  return { page, errors };
}


/** Starts a session from `brief` through the page's New session form, waits for its screen and
 * answers its id. */
export async function createSessionInPage(page, brief) {
  await page.locator("[data-testid=new-session]").first().click();
  await page.locator("[data-testid=brief]").fill(brief);
  await page.locator("[data-testid=create-session]").click();
  await page.waitForURL(/#\/session\/[^/?]+$/);
  return decodeURIComponent(new URL(page.url()).hash.split("/").pop());
}

/** Checks the binary, the UI build and Chromium, then launches Chromium with no outside traffic. */
export async function launchBrowser() {
  assert.ok(fs.existsSync(KILN), `no binary at ${KILN}: run cargo build first (./scripts/test does)`);
  assert.ok(
    fs.existsSync(path.join(ROOT, "ui/dist/index.html")),
    "no ui/dist/index.html: run npm run build in ui/ first (./scripts/test does)",
  );
  assert.ok(fs.existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}: run ./scripts/deps`);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    timeout: 120_000,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-quic",
    ],
  });
  return browser;
}

/** Closes the browser, stops every server and removes every temp dir. */
export async function cleanUp() {
  await browser?.close().catch(() => {});
  await Promise.all([...servers].map(stopServer));
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
}
