// End-to-end test of Eject in `kiln serve` (Chromium, playwright-core): a session of examples/shop
// with a new server file in @shop/cart, its gates run and its auto-review passed (the read-only
// review turn answered by the scripted model server), is delivered into the workspace from the
// eject screen: the plan names the file, Confirm runs the steps live, the done screen lists what
// landed, the dashboard says Delivered, and the file is in the host workspace.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { MODEL_SERVER, api, prepare, startModelServer, useScriptedModel } from "./agents.mjs";
import { ARTIFACTS, TEST_TIMEOUT, cleanUp, copyExample, newPage, startServer, stopServer } from "./harness.mjs";

const FILE = "modules/cart/src/server/coupon.js";
const CONTENT = "// Delivered by the eject browser test.\nexport const coupon = (code) => code === \"KILN10\" ? 0.1 : 0;\n";

async function until(what, check, timeout = 60_000) {
  const end = Date.now() + timeout;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

describe("Eject in kiln serve", () => {
  before(prepare({ binaries: [MODEL_SERVER] }));
  after(cleanUp);

  test("deliver a reviewed session into the workspace: plan, confirm, live steps, done", { timeout: TEST_TIMEOUT * 2 }, async (t) => {
    // Only the review turns talk to the model; a spare answer or two in case of a retry.
    const review = { text: "Correctness, security, compatibility, lifecycle, tests and UI checked.\n\nREVIEW: pass - ok" };
    const model = await startModelServer([review, review, review]);
    t.after(() => stopServer(model.child));

    // The shop gives every gate a command (a skipped gate would block delivery, ARCHITECTURE.md: Delivery).
    const workspace = copyExample();
    const { url, child } = await startServer({ workspace });
    t.after(() => stopServer(child));
    await useScriptedModel(url, model, { openaiKey: "sk-test-key" });

    const created = await api(url, "create_session", { brief: "Add a coupon helper to @shop/cart" });
    const id = created.id;
    assert.ok(created.modules.some((m) => m.id === "@shop/cart"), `modules: ${JSON.stringify(created.modules)}`);
    await until("the session's setup", async () => (await api(url, "get_session", { sessionId: id })).setup !== "running", 120_000);

    // The change, made in the session's working copy as an agent would.
    const workcopy = path.join(workspace, ".kiln/sessions", id, "workspace");
    fs.writeFileSync(path.join(workcopy, FILE), CONTENT);
    const gates = await api(url, "check_modules", { sessionId: id });
    const failed = gates.filter((g) => g.status === "failed");
    assert.equal(failed.length, 0, `gates failed: ${JSON.stringify(failed)}`);

    await api(url, "review_module", { sessionId: id, moduleId: "@shop/cart" });
    const reviewed = await until("a passing review", async () => {
      const s = await api(url, "get_session", { sessionId: id });
      const r = s.reviews.find((x) => x.moduleId === "@shop/cart");
      return !s.running && r && r.passed && !r.stale ? s : null;
    });
    assert.equal(reviewed.deliveredAt, null);

    const { page, errors } = await newPage(t);
    await page.goto(`${url}#/session/${encodeURIComponent(id)}`);
    await page.locator('[data-testid=review-state][data-review="passed"]').waitFor();
    await page.locator("[data-testid=eject]").click();
    await page.waitForURL(/\/deliver$/);

    // The plan: the new file lands in @shop/cart, no blockers, one target (the copy is no git repository).
    const cart = page.locator('[data-testid=plan-module][data-module="@shop/cart"]');
    await cart.locator("[data-testid=plan-added]", { hasText: FILE }).waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, "eject-plan.png"), fullPage: true });
    assert.equal(await page.locator("[data-testid=blocker]").count(), 0, await page.locator("[data-testid=delivery-blockers]").innerText().catch(() => ""));
    assert.equal(await page.locator("[data-testid=target-workspace]").count(), 0, "one usable target: no choice");
    assert.ok(!fs.existsSync(path.join(workspace, FILE)), "nothing landed before the confirmation");

    // Confirm: the steps show, then the done screen.
    await page.locator("[data-testid=confirm-delivery]").click();
    await page.locator("[data-testid=delivery-step]").first().waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, "eject-steps.png"), fullPage: true });
    const done = page.locator("[data-testid=delivery-done]");
    await Promise.race([
      done.waitFor({ timeout: 150_000 }),
      page.locator("[data-testid=delivery-failed]").waitFor({ timeout: 150_000 }).then(async () => {
        await page.screenshot({ path: path.join(ARTIFACTS, "eject-failed.png"), fullPage: true });
        throw new Error(`delivery failed: ${await page.locator(".eject-screen").innerText()}`);
      }),
    ]);
    const states = await page.locator("[data-testid=delivery-step]").evaluateAll((els) => els.map((e) => e.dataset.state));
    assert.ok(states.length >= 2 && states.every((s) => s === "passed" || s === "skipped"), `steps: ${states}`);
    assert.ok(states.includes("passed"));
    await done.locator("[data-testid=landed]", { hasText: FILE }).waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, "eject-done.png"), fullPage: true });

    // The file landed in the host workspace, and the session says it was delivered.
    assert.equal(fs.readFileSync(path.join(workspace, FILE), "utf8"), CONTENT);
    const delivered = await api(url, "get_session", { sessionId: id });
    assert.ok(delivered.deliveredAt, "deliveredAt is set");
    await page.goto(`${url}#/`);
    await page.locator(`[data-testid=session-row][data-session-id="${id}"] [data-testid=delivered]`, { hasText: /Delivered/ }).waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, "eject-dashboard.png") });
    assert.deepEqual(errors, []);
  });
});
