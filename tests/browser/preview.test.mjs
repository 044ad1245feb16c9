// End-to-end test of the live preview in `kiln serve` (Chromium, playwright-core): a session of
// examples/shop opened in the preview card shows the shop's shell with the session's module
// screen; an edit in the session's working copy shows after Reload; the gateway answers 401
// without its cookie; killing the application's process leads to Restarting… then Ready;
// deleting the session leaves no process behind. And tests/fixtures/ws-app: a message pushed
// over a WebSocket reaches the page inside the frame through the gateway.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ARTIFACTS, ROOT, TEST_TIMEOUT, cleanUp, copyExample, launchBrowser, newPage, startServer, stopServer, tempDir } from "./harness.mjs";

const READY_TIMEOUT = 90_000;

/** Pids of processes whose working directory or command line is inside `dir`. */
function processesIn(dir) {
  const pids = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ");
      let cwd = "";
      try {
        cwd = fs.readlinkSync(`/proc/${name}/cwd`);
      } catch {
        // A process that just ended, or one we may not look into.
      }
      if (cmdline.includes(dir) || cwd === dir || cwd.startsWith(`${dir}/`)) pids.push({ pid: Number(name), cmdline });
    } catch {
      // It ended while we looked.
    }
  }
  return pids;
}

async function until(what, check, timeout = 20_000) {
  const end = Date.now() + timeout;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Creates a session from the dashboard and opens it; resolves with its id once its setup is done. */
async function createSession(page, url, brief) {
  await page.goto(url);
  await page.locator("[data-testid=new-session]").first().click();
  await page.locator("[data-testid=brief]").fill(brief);
  await page.locator("[data-testid=create-session]").click();
  await page.waitForURL(/#\/session\/[^/?]+$/);
  const id = decodeURIComponent(/#\/session\/([^/?]+)/.exec(page.url())[1]);
  // The setup (`npm ci --offline` for the shop) must be done: it rewrites node_modules.
  await page.waitForFunction(() => !/running/i.test(document.querySelector("[data-testid=setup-badge]")?.textContent ?? "running"), null, {
    timeout: 120_000,
  });
  const setup = await page.locator("[data-testid=setup-badge]").innerText().catch(() => "none");
  assert.doesNotMatch(setup, /failed/i, "the session's setup failed");
  return id;
}

/** Records every state the preview card goes through (the restart may be brief). */
async function recordStates(page) {
  await page.evaluate(() => {
    window.__previewStates = [];
    const seen = () => {
      const state = document.querySelector("[data-testid=preview-card]")?.getAttribute("data-state");
      if (state && window.__previewStates.at(-1) !== state) window.__previewStates.push(state);
    };
    new MutationObserver(seen).observe(document.body, { subtree: true, attributes: true, childList: true });
    seen();
  });
}

async function openPreview(page) {
  await page.locator("[data-testid=preview-button]").click();
  await page.locator("[data-testid=preview-card]").waitFor();
  await page.locator('[data-testid=preview-state][data-state="ready"]').waitFor({ timeout: READY_TIMEOUT });
  return page.frameLocator("[data-testid=preview-frame]");
}

describe("the live preview in kiln serve", { timeout: TEST_TIMEOUT * 4 }, () => {
  before(launchBrowser);
  after(cleanUp);

  test("shop: the session's module in the shell, edit and reload, 401 without the cookie, restart after a kill, nothing left after delete", { timeout: TEST_TIMEOUT * 2 }, async (t) => {
    const workspace = copyExample();
    const { url, child } = await startServer({ workspace });
    t.after(() => stopServer(child));
    const { page, errors } = await newPage(t);

    const id = await createSession(page, url, "Add a wishlist to @shop/catalog");
    const workcopy = path.join(workspace, ".kiln/sessions", id, "workspace");
    assert.ok(fs.existsSync(workcopy), `no working copy at ${workcopy}`);

    // The shell, with the session's module screen and every module's navigation entry.
    const frame = await openPreview(page);
    const heading = frame.locator('#screen[data-module="catalog"] h1');
    await heading.waitFor();
    assert.equal(await heading.innerText(), "Catalog");
    assert.equal(await frame.locator("#brand").innerText(), "Kiln Shop");
    assert.ok((await frame.locator("#nav a").count()) >= 3, "the shell lists the modules");
    await frame.locator("#screen .grid > *").first().waitFor();
    assert.equal(await page.locator("[data-testid=preview-module]").inputValue(), "@shop/catalog");
    await page.screenshot({ path: path.join(ARTIFACTS, "preview-ready.png") });

    // An edit in the session's working copy shows after Reload; the workspace is untouched.
    const screenJs = path.join(workcopy, "modules/catalog/src/client/screen.js");
    const source = fs.readFileSync(screenJs, "utf8");
    assert.ok(source.includes("h('h1', {}, 'Catalog')"), "the catalog screen's heading is where the test expects it");
    fs.writeFileSync(screenJs, source.replace("h('h1', {}, 'Catalog')", "h('h1', {}, 'Catalog, edited in the session')"));
    await page.locator("[data-testid=preview-reload]").click();
    await frame.locator('#screen[data-module="catalog"] h1', { hasText: "Catalog, edited in the session" }).waitFor();
    assert.match(fs.readFileSync(path.join(workspace, "modules/catalog/src/client/screen.js"), "utf8"), /h\('h1', \{\}, 'Catalog'\)/);
    await page.screenshot({ path: path.join(ARTIFACTS, "preview-edited.png") });

    // The gateway admits only Kiln's view: no cookie, or a wrong secret, gets 401.
    const src = await page.locator("[data-testid=preview-frame]").getAttribute("src");
    const origin = new URL(src).origin;
    assert.match(origin, /^http:\/\/127\.0\.0\.1:\d+$/);
    for (const target of ["/", "/modules.json", "/api/catalog/products", "/health"]) {
      const res = await fetch(new URL(target, origin), { redirect: "manual" });
      assert.equal(res.status, 401, `${target} without the cookie`);
    }
    const wrong = await fetch(new URL("/__kiln/enter?secret=not-the-secret&to=%2F", origin), { redirect: "manual" });
    assert.equal(wrong.status, 401, "a wrong secret");
    assert.equal(wrong.headers.get("set-cookie"), null);

    // Killing the application's process: Restarting…, then Ready, and the shop again.
    const app = processesIn(workcopy).filter((p) => /\bnode\b.*shell\/server\.js/.test(p.cmdline));
    assert.ok(app.length > 0, `no shop server runs from ${workcopy}: ${JSON.stringify(processesIn(workcopy))}`);
    await recordStates(page);
    for (const { pid } of app) process.kill(pid, "SIGKILL");
    await page.locator('[data-testid=preview-state][data-state="restarting"]').waitFor({ timeout: 20_000 }).catch(() => {});
    await page.waitForFunction(() => window.__previewStates.includes("restarting") && window.__previewStates.at(-1) === "ready", null, {
      timeout: READY_TIMEOUT,
    });
    const states = await page.evaluate(() => window.__previewStates);
    const afterKill = states.slice(states.indexOf("restarting"));
    assert.ok(
      afterKill.every((s) => ["restarting", "starting", "ready"].includes(s)) && afterKill.at(-1) === "ready",
      `from the kill to Ready, only restarting/starting: ${states}`,
    );
    await frame.locator('#screen[data-module="catalog"] h1', { hasText: "Catalog, edited in the session" }).waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, "preview-restarted.png") });

    // Deleting the session stops the preview: no process of its working copy remains.
    await page.locator("[data-testid=delete]").click();
    await page.locator("[role=dialog] [data-testid=confirm]").click();
    // The transcript is kept: the session stays, as a tombstone that can be removed.
    await page.locator("[data-testid=delete]", { hasText: "Remove" }).waitFor();
    const left = await until("the session's processes to end", () => (processesIn(workcopy).length === 0 ? [] : null), 20_000).catch(
      () => processesIn(workcopy),
    );
    assert.deepEqual(left, [], "processes of the deleted session");
    assert.ok(!fs.existsSync(workcopy), "the working copy is removed");
    const gone = await fetch(new URL("/health", origin)).then(
      (r) => r.status,
      () => "refused",
    );
    assert.equal(gone, "refused", "the gateway is closed");

    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });

  test("ws-app: a message pushed over a WebSocket reaches the page in the frame", { timeout: TEST_TIMEOUT }, async (t) => {
    const workspace = path.join(tempDir("kiln-browser-ws-"), "ws-app");
    fs.cpSync(path.join(ROOT, "tests/fixtures/ws-app"), workspace, { recursive: true });
    const { url, child } = await startServer({ workspace });
    t.after(() => stopServer(child));
    const { page, errors } = await newPage(t);

    await createSession(page, url, "Change the status line of ws-app");
    const frame = await openPreview(page);
    const status = frame.locator("#status");
    await status.waitFor();
    await frame.locator("body[data-socket=open]").waitFor();
    await frame.locator("#status", { hasText: /"type":"reload"/ }).waitFor({ timeout: 20_000 });
    const first = await status.innerText();
    assert.notEqual(first, "waiting");
    assert.match(first, /"type":"reload"/);
    // Pushed every 2 s: the next message arrives over the same socket.
    await frame.locator("#status").filter({ hasNotText: first }).waitFor({ timeout: 10_000 });
    await page.screenshot({ path: path.join(ARTIFACTS, "preview-websocket.png") });
    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });
});
