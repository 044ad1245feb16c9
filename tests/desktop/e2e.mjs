// End-to-end test of the real desktop app, driven through its webview with tauri-driver and
// WebKitWebDriver on a virtual X display (Xvfb). The debug binary opens a temp copy of
// examples/shop; the test answers the start-up update offer (a newer build signed with a key
// that is not Kiln's release key: refused, nothing installed), sets the claude CLI in Settings,
// creates a session, watches a real `claude` turn against the scripted model server write a
// file and hand off, sees it in the diff and the gates pass, opens the preview and finds the
// shop inside the window's iframe, and delivers the session into the workspace. A screenshot of
// the X display is saved for each step in tests/artifacts/e2e-*.png.
//
// It must run in a network namespace with only loopback (scripts/test runs it under
// `unshare -n`): the app, the CLI and everything they start can reach nothing else.
//   node tests/desktop/e2e.mjs
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import {
  ARTIFACTS,
  CLAUDE,
  CLAUDE_APP_PARTS,
  DISPLAY_TOOLS,
  KILN,
  ROOT,
  assertLoopbackOnly,
  assertPresent,
  closeAtEnd,
  createSession,
  reporter,
  sessionPids,
  shot,
  startDisplay,
  startDriver,
  startModelServer,
  temp,
  useClaude,
} from "./harness.mjs";
import { Session, waitFor } from "./webdriver.mjs";

const TAURI_CLI = path.join(ROOT, "ui/node_modules/.bin/tauri");

const BRIEF = "Add a wishlist to @shop/catalog";
const FILE = "modules/catalog/src/client/wishlist.js";
const CONTENT = "// The catalog's wishlist: product ids the shopper saved.\nexport const wishlist = new Set();\n";
const TURN_TEXT = "Added the wishlist store to the catalog screen.";
const UPDATE_VERSION = "9.9.9";
const UPDATE_NOTES = "Faster checkpoints and a wishlist in the demo shop.";
// CI has 2 cores and the app is a debug build: generous, and each wait names what it waits for.
const LONG = 180_000;

const { ok, run } = reporter("e2e");

// --- what must be in place --------------------------------------------------------------------
function preflight() {
  assertLoopbackOnly();
  assertPresent([...CLAUDE_APP_PARTS, [TAURI_CLI, "run ./scripts/deps (npm ci in ui/)"]], DISPLAY_TOOLS);
}

// --- the scripted model and the update server -------------------------------------------------
// The planner agent, the engineer's turn and its review, in the order claude asks.
const MODEL_STEPS = [
    // The planner agent (a read-only claude turn) answers JSON.
    { text: '{"modules": [], "title": "Wishlist for the catalog", "role": "frontend-engineer", "reason": "The wishlist starts on the product cards."}' },
    // The frontend engineer writes the file (a path relative to the session's working copy,
    // where the turn runs) and hands off; then its read-only review passes.
    { tool: "Write", arguments: { file_path: FILE, content: CONTENT } },
    { text: `${TURN_TEXT}\n\nHANDOFF: none - the wishlist store is in place` },
    { text: "Correctness, security, compatibility, lifecycle, tests and UI checked.\n\nREVIEW: pass - the wishlist store is sound" },
    // A spare review, in case the delivery asks for one again.
    { text: "Checked again.\n\nREVIEW: pass - unchanged" },
];

/** A loopback update server offering version 9.9.9: a bundle signed with a throwaway key, which
 * is not the release key built into the app, so the app must refuse it. */
async function startUpdateServer() {
  const dir = temp("kiln-e2e-update-");
  const bundle = path.join(dir, `Kiln_${UPDATE_VERSION}_amd64.deb`);
  fs.writeFileSync(bundle, crypto.randomBytes(256 * 1024));
  execFileSync(TAURI_CLI, ["signer", "generate", "--ci", "-p", "", "-w", path.join(dir, "other.key")], { stdio: "ignore" });
  execFileSync(TAURI_CLI, ["signer", "sign", "-p", "", "--app-version", UPDATE_VERSION, bundle], {
    env: { ...process.env, TAURI_SIGNING_PRIVATE_KEY: fs.readFileSync(path.join(dir, "other.key"), "utf8"), TAURI_SIGNING_PRIVATE_KEY_PASSWORD: "" },
    stdio: "ignore",
  });
  const signature = fs.readFileSync(`${bundle}.sig`, "utf8").trim();
  const requests = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url);
    if (req.url === "/stable/latest.json") {
      const url = `http://127.0.0.1:${server.address().port}/stable/${path.basename(bundle)}`;
      const entry = { signature, url };
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ version: UPDATE_VERSION, notes: UPDATE_NOTES, pub_date: "2026-11-30T00:00:00Z", platforms: { "linux-x86_64-deb": entry, "linux-x86_64": entry } }));
    } else if (req.url === `/stable/${path.basename(bundle)}`) {
      res.setHeader("content-type", "application/octet-stream");
      res.end(fs.readFileSync(bundle));
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  closeAtEnd(() => {
    server.closeAllConnections();
    server.close();
  });
  return { endpoint: `http://127.0.0.1:${server.address().port}/stable/latest.json`, requests, bundle };
}

// --- the test ---------------------------------------------------------------------------------
async function main() {
  preflight();
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const workspace = path.join(temp("kiln-e2e-ws-"), "shop");
  const example = path.join(ROOT, "examples/shop");
  fs.cpSync(example, workspace, {
    recursive: true,
    filter: (src) => !path.relative(example, src).split(path.sep).some((p) => p === "node_modules" || p === ".kiln"),
  });
  const config = temp("kiln-e2e-config-");
  const home = temp("kiln-e2e-home-");
  const runtime = temp("kiln-e2e-run-");
  fs.chmodSync(runtime, 0o700);

  const model = await startModelServer(MODEL_STEPS);
  const updates = await startUpdateServer();
  const display = await startDisplay();
  // The app inherits the driver's environment (WebKitWebDriver launches it).
  const env = {
    ...process.env,
    DISPLAY: display,
    HOME: home,
    XDG_RUNTIME_DIR: runtime,
    KILN_CONFIG_DIR: config,
    // Plain http: a debug build takes it (with a warning); release builds need https.
    KILN_UPDATE_ENDPOINT: updates.endpoint,
    TAURI_WEBVIEW_AUTOMATION: "true",
    ANTHROPIC_BASE_URL: model,
    ANTHROPIC_API_KEY: "sk-ant-e2e",
    WEBKIT_DISABLE_COMPOSITING_MODE: "1",
    LIBGL_ALWAYS_SOFTWARE: "1",
    NO_AT_BRIDGE: "1",
  };
  delete env.KILN_NO_UPDATE_CHECK;
  const driverUrl = await startDriver(env);

  const s = await Session.create(driverUrl, { "tauri:options": { application: KILN, args: ["--workspace", workspace] } });
  try {
    await steps(s, { workspace, display, updates });
  } catch (e) {
    try {
      shot(display, "e2e-failed");
      console.error(`desktop e2e: the screen at the failure: ${path.join(ARTIFACTS, "e2e-failed.png")}`);
      console.error(`desktop e2e: the page said:\n${(await s.script("return document.body.innerText")).slice(0, 3000)}`);
    } catch {}
    throw e;
  } finally {
    await s.close();
  }
  // Closing the session quits the app: nothing of the session may be left running.
  await waitFor("no process running from the session's working copy", () => sessionPids(workspace).length === 0, 20_000, 500);
  ok("the app quit and left no process of the workspace behind");
}

async function steps(s, { workspace, display, updates }) {
  // 1. The start-up update check finds 9.9.9 and shows what is new; downloading it is refused,
  //    since it is not signed with Kiln's release key, and nothing is installed.
  const offer = await s.waitFor("[data-testid=update-available]", { timeout: 90_000 });
  assert.match(await s.text(offer), new RegExp(`Kiln ${UPDATE_VERSION.replace(/\./g, "\\.")} is available \\(you have 0\\.1\\.0\\)`));
  await s.waitFor("[data-testid=update-notes]", { text: /Faster checkpoints and a wishlist/ });
  shot(display, "e2e-1-update-offered");
  await s.click(await s.waitFor(".modal button.btn-primary", { text: /Download and install/ }));
  const refused = await s.waitFor("[data-testid=update-failed]", { timeout: 60_000 });
  assert.match(await s.text(refused), /refused/i);
  assert.match(await s.text(refused), /release key|different key/i);
  assert.ok(updates.requests.includes(`/stable/${path.basename(updates.bundle)}`), `the bundle was downloaded: ${updates.requests}`);
  shot(display, "e2e-2-update-refused");
  await s.click(await s.waitFor(".modal button", { text: /^Close$/ }));
  await waitFor("the update dialog to close", async () => !(await s.find("[data-testid=update-failed]")));
  ok(`the start-up check offered ${UPDATE_VERSION} with its notes; its signature (another key) was refused after the download`);

  // 2. Settings: the claude CLI by path, as the default driver.
  await useClaude(s, CLAUDE);
  shot(display, "e2e-3-settings");
  ok("Settings saved the claude CLI's path; the claude driver is available");

  // 3. A new session: the planner agent answers, the engineer's claude turn writes the file and
  //    hands off, and its read-only review passes.
  const id = await createSession(s, BRIEF);
  await s.waitFor("[data-testid=transcript]", { text: /Planner agent/, timeout: LONG });
  await s.waitFor("[data-testid=entry][data-kind=agent]", { text: new RegExp(TURN_TEXT), timeout: LONG });
  await s.waitFor("[data-testid=entry][data-kind=handoff]", { text: /review\s*→\s*pass/i, timeout: LONG });
  const copy = path.join(workspace, ".kiln/sessions", id, "workspace");
  assert.equal(fs.readFileSync(path.join(copy, FILE), "utf8"), CONTENT, "claude wrote the file in the session's working copy");
  assert.ok(!fs.existsSync(path.join(workspace, FILE)), "the workspace is untouched until delivery");
  shot(display, "e2e-4-turn");
  ok(`session ${id}: the real claude turn wrote ${FILE}, handed off, and its review passed`);

  // 4. The diff shows the new file; the gates the turn ran all passed (a gate with no command,
  //    the shop's lint, is not configured, which is no failure).
  await s.click(await s.waitFor("[data-testid=tab-changes]"));
  const file = await s.waitFor("[data-testid=diff-file]", { text: /wishlist\.js/, timeout: 60_000 });
  await s.click(file);
  await s.waitFor("[data-testid=diff-panel]", { text: /export const wishlist = new Set\(\);/, timeout: 30_000 });
  shot(display, "e2e-5-diff");
  await s.click(await s.waitFor("[data-testid=tab-gates]"));
  await s.waitFor("[data-testid=gate-row]", { timeout: LONG });
  // Results arrive one by one: wait until the ones this test names are listed and none is still
  // going, rather than judging the first rows that show.
  const wanted = ["tests", "typecheck", "format"];
  const gates = await waitFor(`the ${wanted.join(", ")} gates to finish`, async () => {
    const rows = await s.script("return [...document.querySelectorAll('[data-testid=gate-row]')].map(r => [r.querySelector('[data-testid=gate-name]')?.textContent, r.dataset.status])");
    const finished = rows.length && rows.every(([, st]) => st !== "running" && st !== "queued");
    return finished && wanted.every((gate) => rows.some(([n]) => n?.includes(gate))) ? rows : null;
  }, LONG);
  const failed = gates.filter(([, st]) => st !== "passed" && st !== "not-configured");
  assert.deepEqual(failed, [], `every gate passed or is not configured: ${JSON.stringify(gates)}`);
  assert.ok(gates.some(([, st]) => st === "passed"), `some gate passed: ${JSON.stringify(gates)}`);
  shot(display, "e2e-6-gates");
  ok(`the diff shows ${FILE}; gates passed: ${gates.map(([n]) => n).join(", ")}`);

  // 5. The preview: the shop, served from the session's working copy, inside the window's iframe.
  await s.click(await s.waitFor("[data-testid=tab-chat]"));
  await s.click(await s.waitFor("[data-testid=preview-button]"));
  await s.waitFor('[data-testid=preview-state][data-state="ready"]', { timeout: LONG });
  const frame = await s.waitFor("[data-testid=preview-frame]");
  const src = await s.attribute(frame, "src");
  assert.match(src, /^http:\/\/127\.0\.0\.1:\d+\//, "the frame loads the session's gateway");
  await s.frame(frame);
  try {
    await s.waitFor("#brand", { text: /Kiln Shop/, timeout: 60_000 });
    await s.waitFor('#screen[data-module="catalog"] h1', { timeout: 60_000 });
  } finally {
    await s.frame(null);
  }
  await new Promise((r) => setTimeout(r, 1500)); // let the frame paint before the screenshot
  shot(display, "e2e-7-preview");
  ok(`the preview shows the shop's catalog inside the window (${src.replace(/\?.*/, "")})`);
  await s.click(await s.waitFor("[data-testid=preview-close]"));
  // Closing gives the details their column back, which moves the header's buttons: wait until
  // the card is gone before clicking Eject, or the click may land where Eject was.
  await waitFor("the preview to close", async () => (await s.script("return document.querySelectorAll('[data-testid=preview-card]').length === 0")) || null, 30_000, 200);

  // 6. Eject: the plan names the file; Confirm delivers it into the workspace.
  await s.click(await s.waitFor("[data-testid=eject]"));
  await s.waitFor('[data-testid=plan-module][data-module="@shop/catalog"] [data-testid=plan-added]', { text: /wishlist\.js/, timeout: 60_000 });
  assert.equal((await s.findAll("[data-testid=blocker]")).length, 0, "no blockers");
  shot(display, "e2e-8-eject-plan");
  await s.click(await s.waitFor("[data-testid=confirm-delivery]"));
  const outcome = await waitFor("the delivery to end", async () => (await s.find("[data-testid=delivery-done]")) ?? ((await s.find("[data-testid=delivery-failed]")) ? "failed" : null), LONG, 500);
  if (outcome === "failed") throw new Error(`the delivery failed: ${await s.text(await s.find("[data-testid=eject-screen]"))}`);
  await s.waitFor("[data-testid=delivery-done] [data-testid=landed]", { text: /wishlist\.js/ });
  assert.equal(fs.readFileSync(path.join(workspace, FILE), "utf8"), CONTENT, "the file landed in the workspace");
  shot(display, "e2e-9-delivered");
  await s.script("location.hash = '#/'");
  await s.waitFor(`[data-testid=session-row][data-session-id="${id}"] [data-testid=delivered]`, { text: /Delivered/ });
  shot(display, "e2e-10-dashboard");
  ok(`delivered into the workspace: ${FILE} landed, and the dashboard says Delivered`);
}

await run(main, "e2e-*.png");
