// Browser test of what tells the user a session needs them, and of the keyboard, with a real claude turn
// (the pinned CLI against the scripted model server, as agent.test.mjs): with the notification
// permission granted and the header's bell on, a turn that ends while the user is on the dashboard
// makes a browser notification, and the tab title shows the session running, then clears. Then, on
// the session: `?` opens the shortcuts sheet, 1–3 switch tabs, `/` focuses the composer, Shift+Enter
// makes a newline and Enter sends; a failed turn notifies and its session offers Retry;
// Ctrl+. stops a session while it plans. Must run in a loopback-only network namespace (`unshare -n`).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ARTIFACTS, TEST_TIMEOUT, cleanUp, copyExample, newPage, startServer, stopServer, tempDir } from "./harness.mjs";
import { CLI_DIR, MODEL_SERVER, api, prepare, startModelServer } from "./agents.mjs";

const BRIEF = "Add a wishlist to @shop/catalog";
const TITLE = "Wishlist for the catalog";

/** Records every `new Notification(...)` in window.__notifications instead of showing it. */
function recordNotifications() {
  const Real = window.Notification;
  window.__notifications = [];
  class Recorded {
    constructor(title, options = {}) {
      window.__notifications.push({ title, body: options.body ?? "", tag: options.tag ?? "", at: Date.now() });
      this.onclick = null;
    }
    close() {}
    static get permission() {
      return Real ? Real.permission : "default";
    }
    static requestPermission() {
      return Real ? Real.requestPermission() : Promise.resolve("denied");
    }
  }
  window.Notification = Recorded;
}

describe("attention and keyboard in kiln serve", { timeout: TEST_TIMEOUT * 3 }, () => {
  before(prepare({ clis: ["claude"], binaries: [MODEL_SERVER] }));
  after(cleanUp);

  test("a turn ending while the user is on the dashboard notifies; the title shows running, then clears; the keyboard drives the session", { timeout: TEST_TIMEOUT * 3 }, async (t) => {
    const model = await startModelServer([
      // The planner agent answers JSON.
      { text: `{"modules": [], "title": "${TITLE}", "role": "frontend-engineer", "reason": "The wishlist starts on the product cards."}` },
      // The engineer's turn writes a file and hands off to no one; then its read-only auto-review.
      { tool: "Write", arguments: { file_path: "modules/catalog/src/client/wishlist.js", content: "export const wishlist = new Set();\n" } },
      { text: "Added a wishlist heart to each product card.\n\nHANDOFF: none - the wishlist is on the catalog screen" },
      { text: "Correctness, security, compatibility, lifecycle, tests and UI checked.\n\nREVIEW: pass - the wishlist works" },
    ]);
    t.after(() => stopServer(model.child));
    const workspace = copyExample();
    const home = tempDir("kiln-attention-home-");
    const { url, child } = await startServer({ workspace, env: { HOME: home, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "sk-ant-test" } });
    t.after(() => stopServer(child));
    await api(url, "update_settings", { defaultDriver: "claude", claudePath: path.join(CLI_DIR, "node_modules/.bin/claude") });

    const { page, errors } = await newPage(t);
    const refused = [];
    page.on("console", (m) => /Content Security Policy/.test(m.text()) && refused.push(m.text()));
    await page.context().grantPermissions(["notifications"], { origin: new URL(url).origin });
    await page.context().addInitScript(recordNotifications);
    await page.goto(url);

    // The bell turns notifications on (the permission is granted, so nothing is asked).
    const bell = page.locator("[data-testid=notify-toggle]");
    await bell.waitFor();
    assert.equal(await bell.getAttribute("data-status"), "off", "notifications start off: nothing is asked on load");
    await bell.click();
    await page.locator('[data-testid=notify-toggle][data-status="on"]').waitFor();
    assert.equal(await page.title(), "Kiln");

    // A session from a brief; the user goes back to the dashboard while it works.
    await page.locator("[data-testid=new-session]").first().click();
    await page.locator("[data-testid=brief]").fill(BRIEF);
    await page.locator("[data-testid=create-session]").click();
    await page.waitForURL(/#\/session\/[^/]+$/);
    const sessionUrl = page.url();
    await page.waitForFunction(() => document.title.startsWith("● Running — "), null, { timeout: 60_000 });
    await page.locator("[data-testid=running]").waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, "attention-running-session.png") });
    await page.goto(new URL("#/", url).href);
    await page.waitForFunction(() => /^● \d running — Kiln$/.test(document.title), null, { timeout: 30_000 });
    const icon = page.locator('link[rel="icon"]');
    assert.equal(await icon.getAttribute("data-attention"), "running", "the favicon has the running dot");
    const iconUrl = await icon.evaluate((l) => l.href);
    assert.match(iconUrl, /favicon-running\.svg$/);
    const iconResponse = await page.request.get(iconUrl);
    assert.equal(iconResponse.status(), 200, "the running favicon is served");
    assert.match(await iconResponse.text(), /<circle/);
    assert.deepEqual(await page.evaluate(() => window.__notifications), [], "nothing is notified while the session runs");
    await page.screenshot({ path: path.join(ARTIFACTS, "attention-dashboard-running.png") });

    // The turn (and its review) ends: a notification, and the title clears.
    await page.waitForFunction(() => window.__notifications.some((n) => n.title.startsWith("Turn finished")), null, { timeout: 180_000 });
    const notes = await page.evaluate(() => window.__notifications);
    const finished = notes.find((n) => n.title.startsWith("Turn finished"));
    assert.equal(finished.title, `Turn finished — ${TITLE}`);
    assert.match(finished.tag, /^kiln-/);
    await page.waitForFunction(() => document.title === "Kiln", null, { timeout: 120_000 });
    assert.equal(await icon.getAttribute("data-attention"), "");
    assert.match(await icon.evaluate((l) => l.href), /\/favicon\.svg$/);
    await page.screenshot({ path: path.join(ARTIFACTS, "attention-dashboard-done.png") });
    // The header's bell and `?` fit a narrow window.
    await page.setViewportSize({ width: 900, height: 700 });
    for (const id of ["notify-toggle", "shortcuts"]) {
      const box = await page.locator(`[data-testid=${id}]`).boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= 900, `${id} is inside the window at 900 px: ${JSON.stringify(box)}`);
    }
    await page.screenshot({ path: path.join(ARTIFACTS, "attention-header-900.png") });
    await page.setViewportSize({ width: 1280, height: 800 });

    // On the session: the title names it, with no mark.
    await page.goto(sessionUrl);
    await page.locator("[data-testid=transcript]").waitFor();
    await page.waitForFunction((title) => document.title === `${title} — Kiln`, TITLE);

    // `?` opens the sheet; Escape closes it.
    await page.locator("body").click({ position: { x: 5, y: 300 } });
    await page.keyboard.press("?");
    const sheet = page.locator("[data-testid=shortcut-sheet]");
    await sheet.waitFor();
    assert.match(await sheet.innerText(), /Next file/);
    await page.screenshot({ path: path.join(ARTIFACTS, "attention-shortcut-sheet.png") });
    await page.keyboard.press("Escape");
    await sheet.waitFor({ state: "detached" });

    // The number keys follow the tabs as they stand: 2 Changes, 3 Terminal, 4 Gates, 1 back to Chat.
    const order = await page.locator("[role=tab]").evaluateAll((tabs) => tabs.map((t) => t.getAttribute("data-testid")));
    assert.deepEqual(order.slice(0, 4), ["tab-chat", "tab-changes", "tab-terminal", "tab-gates"]);
    await page.keyboard.press("2");
    await page.locator('[data-testid=tab-changes][aria-selected="true"]').waitFor();
    await page.locator("[data-testid=diff-file]").first().waitFor();
    await page.keyboard.press("3");
    await page.locator('[data-testid=tab-terminal][aria-selected="true"]').waitFor();
    await page.keyboard.press("4");
    await page.locator('[data-testid=tab-gates][aria-selected="true"]').waitFor();
    await page.keyboard.press("1");
    await page.locator('[data-testid=tab-chat][aria-selected="true"]').waitFor();

    // `/` focuses the composer, where keys are text: Shift+Enter makes a newline, Enter sends.
    await page.keyboard.press("/");
    const box = page.locator("[data-testid=message]");
    await page.waitForFunction(() => document.activeElement?.getAttribute("data-testid") === "message");
    assert.match(await page.locator("[data-testid=send-hint]").innerText(), /Enter to send · Shift\+Enter for a new line/);
    await page.keyboard.type("Thanks 2");
    await page.keyboard.press("Shift+Enter");
    await page.keyboard.type("and j");
    assert.equal(await box.inputValue(), "Thanks 2\nand j", "keys typed in the composer are text, and Shift+Enter is a newline");
    assert.equal(await page.locator('[data-testid=tab-chat][aria-selected="true"]').count(), 1, "typing 2 did not switch tabs");
    await page.keyboard.press("Enter");
    await page.locator("[data-testid=entry][data-kind=user]").filter({ hasText: "and j" }).waitFor({ timeout: 60_000 });
    // The entry's event may come before send_message's answer, which is when the composer empties.
    await page.waitForFunction(() => document.querySelector("[data-testid=message]")?.value === "", null, { timeout: 30_000 });
    await page.screenshot({ path: path.join(ARTIFACTS, "attention-sent-with-enter.png") });

    // Settings' checkbox restores Ctrl+Enter: Enter then makes a newline.
    await page.goto(new URL("#/settings", url).href);
    await page.locator("[data-testid=send-with-mod-enter]").check();
    await page.locator("[data-testid=send-key-setting]").scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(ARTIFACTS, "attention-settings-send-key.png") });
    await page.goto(sessionUrl);
    await page.locator("[data-testid=send-hint]").filter({ hasText: "Ctrl+Enter to send · Enter for a new line" }).waitFor();
    await box.click();
    await page.keyboard.type("One more");
    await page.keyboard.press("Enter");
    await page.keyboard.type("line");
    assert.equal(await box.inputValue(), "One more\nline", "Enter made a newline");
    await page.keyboard.press("Control+Enter");
    await page.locator("[data-testid=entry][data-kind=user]").filter({ hasText: "One more" }).waitFor({ timeout: 60_000 });
    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
    assert.deepEqual(refused, [], "the page's Content Security Policy refused nothing (the favicons are its own files)");
  });

  test("a failed turn notifies and marks the tab; the blocked session offers Retry, which runs the turn again", { timeout: TEST_TIMEOUT * 2 }, async (t) => {
    // Only the retried turn reaches the model.
    const model = await startModelServer([
      { text: "Added the wishlist.\n\nHANDOFF: none - done" },
      { text: "Checked.\n\nREVIEW: pass - fine" },
    ]);
    t.after(() => stopServer(model.child));
    // A claude that crashes: the planner gives no answer (the rules decide) and the turn fails, blocking the session.
    const crashing = path.join(tempDir("kiln-attention-crash-"), "claude");
    fs.writeFileSync(crashing, '#!/bin/sh\nif [ "$1" = "--version" ]; then echo "2.1.332 (Claude Code)"; exit 0; fi\necho "the agent crashed" >&2\nexit 1\n', { mode: 0o755 });
    const workspace = copyExample();
    const home = tempDir("kiln-attention-home-");
    const { url, child } = await startServer({ workspace, env: { HOME: home, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "sk-ant-test" } });
    t.after(() => stopServer(child));
    await api(url, "update_settings", { defaultDriver: "claude", claudePath: crashing });

    const { page, errors } = await newPage(t);
    await page.context().grantPermissions(["notifications"], { origin: new URL(url).origin });
    await page.context().addInitScript(recordNotifications);
    await page.goto(url);
    await page.locator("[data-testid=notify-toggle]").click();
    await page.locator('[data-testid=notify-toggle][data-status="on"]').waitFor();

    await page.locator("[data-testid=new-session]").first().click();
    await page.locator("[data-testid=brief]").fill(BRIEF);
    await page.locator("[data-testid=create-session]").click();
    await page.waitForURL(/#\/session\/[^/]+$/);
    const sessionUrl = page.url();
    await page.goto(new URL("#/", url).href);

    // The failure is notified, and the tab says so.
    await page.waitForFunction(() => window.__notifications.some((n) => n.title.startsWith("Failed")), null, { timeout: 120_000 });
    const failed = (await page.evaluate(() => window.__notifications)).find((n) => n.title.startsWith("Failed"));
    assert.equal(failed.title, `Failed — ${BRIEF}`);
    assert.match(failed.body, /blocked/);
    await page.waitForFunction(() => document.title === "✕ 1 failed — Kiln");
    assert.equal(await page.locator('link[rel="icon"]').getAttribute("data-attention"), "failed");
    await page.screenshot({ path: path.join(ARTIFACTS, "attention-dashboard-failed.png") });

    // The session offers Retry; with a working claude again, Retry runs the turn again
    // (retry_turn: the engine's op from issue 15, missing in older builds).
    await page.goto(sessionUrl);
    const blocked = page.locator("[data-testid=blocked]");
    await blocked.waitFor();
    await page.waitForFunction((title) => document.title === `✕ Failed — ${title} — Kiln`, BRIEF);
    await page.screenshot({ path: path.join(ARTIFACTS, "attention-blocked-retry.png") });
    await api(url, "update_settings", { claudePath: path.join(CLI_DIR, "node_modules/.bin/claude") });
    await blocked.locator("[data-testid=retry-turn]").click();
    await page.locator("[data-testid=entry][data-kind=agent]").getByText("Added the wishlist.").waitFor({ timeout: 120_000 });
    await blocked.waitFor({ state: "detached" });
    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });

  // Needs the engine's stop_turn for planning and setup (issue 15): an older build answers INVALID_INPUT.
  test("Ctrl+. stops the session while it plans", { timeout: TEST_TIMEOUT }, async (t) => {
    // A claude that never answers: the planner agent would run until its timeout.
    const hanging = path.join(tempDir("kiln-attention-hang-"), "claude");
    fs.writeFileSync(hanging, '#!/bin/sh\nif [ "$1" = "--version" ]; then echo "2.1.332 (Claude Code)"; exit 0; fi\nexec sleep 300\n', { mode: 0o755 });
    const workspace = copyExample();
    const { url, child } = await startServer({ workspace, env: { HOME: tempDir("kiln-attention-home-"), ANTHROPIC_API_KEY: "sk-ant-test" } });
    t.after(() => stopServer(child));
    await api(url, "update_settings", { defaultDriver: "claude", claudePath: hanging });

    const { page, errors } = await newPage(t);
    await page.goto(url);
    await page.locator("[data-testid=new-session]").first().click();
    await page.locator("[data-testid=brief]").fill(BRIEF);
    await page.locator("[data-testid=create-session]").click();
    await page.waitForURL(/#\/session\/[^/]+$/);
    const sessionId = decodeURIComponent(page.url().split("/").pop());
    const bar = page.locator('[data-testid=running][data-phase="planning"]');
    await bar.waitFor({ timeout: 60_000 });
    assert.match(await bar.innerText(), /Planning/);
    await page.screenshot({ path: path.join(ARTIFACTS, "attention-stop-planning.png") });
    await page.locator("body").click({ position: { x: 5, y: 300 } });
    await page.keyboard.press("Control+.");
    await page.locator("[data-testid=running]").waitFor({ state: "detached", timeout: 30_000 });
    const session = await api(url, "get_session", { sessionId });
    assert.equal(session.running, false, "the planner was stopped");
    assert.equal(await page.locator("[data-testid=running] [data-testid=error]").count(), 0);
    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });
});
