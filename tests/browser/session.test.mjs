// End-to-end test of `kiln serve` in Debian's Chromium (playwright-core): create a session
// from the dashboard, see its transcript, archive it and show it again; and the error shown
// for a workspace path that does not exist. Builds nothing: it needs target/debug/kiln and
// ui/dist (./scripts/test builds both first).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const KILN = process.env.KILN_BIN ?? path.join(ROOT, "target/debug/kiln");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARTIFACTS = path.join(ROOT, "tests/artifacts");
const EXAMPLE = path.join(ROOT, "examples/shop");

// CI is a 2-core machine: be generous.
const STEP_TIMEOUT = 30_000;
const TEST_TIMEOUT = 180_000;

const BRIEF = "Add a wishlist to @shop/catalog";

/** Everything to clean up, whatever happens. */
const servers = [];
const tempDirs = [];
let browser;

function tempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** A copy of examples/shop without node_modules or .kiln, in a folder named `shop`. */
function copyExample() {
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

/** Starts `kiln serve --port 0` and resolves with its URL, read from "Kiln is serving <url>". */
function startServer({ workspace } = {}) {
  const configDir = tempDir("kiln-browser-config-");
  const args = ["serve", "--port", "0"];
  if (workspace) args.push("--workspace", workspace);
  const child = spawn(KILN, args, {
    env: { ...process.env, KILN_CONFIG_DIR: configDir },
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
      const m = /Kiln is serving (http:\/\/127\.0\.0\.1:(\d+)\/)/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        if (Number(m[2]) === 0) reject(new Error(`kiln serve printed port 0, not the port it bound: ${m[0]}`));
        else resolve({ url: m[1], child });
      }
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

function stopServer(child) {
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
}

/** A fresh page that fails the test on uncaught page errors and logs the console on failure. */
async function newPage(t) {
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

describe("kiln serve in Chromium", { timeout: TEST_TIMEOUT * 3 }, () => {
  before(async () => {
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
  });

  after(async () => {
    await browser?.close().catch(() => {});
    for (const child of servers) stopServer(child);
    for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  test("create a session, see its transcript, archive it and show it again", { timeout: TEST_TIMEOUT }, async (t) => {
    const workspace = copyExample();
    const { url, child } = await startServer({ workspace });
    t.after(() => stopServer(child));
    const { page, errors } = await newPage(t);

    // The dashboard: the workspace is already open.
    await page.goto(url);
    await page.locator("[data-testid=new-session]").first().waitFor();
    assert.match(await page.locator("main").innerText(), /@shop\/catalog/, "the dashboard lists the workspace's modules");

    // A new session from a brief.
    await page.locator("[data-testid=new-session]").first().click();
    await page.locator("[data-testid=brief]").fill(BRIEF);
    await page.locator("[data-testid=create-session]").click();

    // The session view: the transcript opens with a system entry naming the module.
    await page.waitForURL(/#\/session\/[^/]+$/);
    const first = page.locator("[data-testid=transcript] [data-testid=entry]").first();
    await first.waitFor();
    assert.equal(await first.getAttribute("data-kind"), "system");
    assert.match(await first.innerText(), /@shop\/catalog/);

    // Back on the dashboard, the session is listed by its title.
    await page.goto(new URL("#/", url).href);
    const row = page.locator("[data-testid=session-row]", { hasText: BRIEF });
    await row.waitFor();
    assert.equal(await page.locator("[data-testid=session-row]").count(), 1);
    await page.screenshot({ path: path.join(ARTIFACTS, "dashboard.png"), fullPage: true });

    // Archived, it leaves the list (a session whose agent or setup is still running asks
    // to confirm stopping it first)...
    await row.locator("[data-testid=archive]").click();
    const confirm = page.locator("[role=dialog] [data-testid=confirm]");
    const gone = row.waitFor({ state: "detached" });
    const asked = confirm.waitFor();
    gone.catch(() => {});
    asked.catch(() => {});
    await Promise.race([gone, asked]);
    if (await confirm.isVisible()) await confirm.click();
    await gone;
    assert.equal(await page.locator("[data-testid=session-row]").count(), 0);

    // ...and "Show archived" brings it back, marked archived.
    await page.locator("[data-testid=show-archived]").check();
    await row.waitFor();
    assert.match(await row.innerText(), /archived/i);
    assert.equal(await row.locator("[data-testid=archive]").count(), 0, "an archived session offers no Archive button");

    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });

  test("opening a path that does not exist shows WORKSPACE_NOT_FOUND", { timeout: TEST_TIMEOUT }, async (t) => {
    // No --workspace and a fresh config dir: the UI starts on the open-workspace screen.
    const { url, child } = await startServer();
    t.after(() => stopServer(child));
    const { page, errors } = await newPage(t);

    await page.goto(url);
    const missing = path.join(tempDir("kiln-browser-missing-"), "no-such-folder");
    await page.locator("[data-testid=workspace-path]").fill(missing);
    await page.locator("[data-testid=open-workspace]").click();
    const error = page.locator("[data-testid=error]");
    await error.waitFor();
    assert.match(await error.innerText(), /WORKSPACE_NOT_FOUND/);
    assert.equal(await page.locator("[data-testid=new-session]").count(), 0, "no dashboard without a workspace");

    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });
});
