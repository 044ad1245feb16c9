// The first brief in `kiln serve` (issue 15, item 6), in Debian's Chromium: "@" in the brief
// offers the workspace's modules and the keyboard picks one; `module @shop/catalog` names a
// module by its id; an id that names no module asks "Create new module …?" before anything is
// created, Cancel creates nothing and Create makes the session with the new module. The form
// shows the agent that will run with its health. No agent turn runs ("Start the first turn
// now" is off). Needs target/debug/kiln (or KILN_BIN) and ui/dist; the `module <id>` and
// MODULE_UNKNOWN tests need the engine of issue 15 (fad8eed or later).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { ARTIFACTS, TEST_TIMEOUT, cleanUp, copyExample, launchBrowser, newPage, startServer, stopServer } from "./harness.mjs";

/** The new-session form of a fresh copy of examples/shop. */
async function openForm(t) {
  const { url, child } = await startServer({ workspace: copyExample() });
  t.after(() => stopServer(child));
  const { page, errors } = await newPage(t);
  await page.goto(new URL("#/new", url).href);
  await page.locator("[data-testid=brief]").waitFor();
  // No agent turn: the session is created and the brief waits in its composer.
  await page.locator("[data-testid=start-now]").uncheck();
  return { page, errors, url };
}

/** The dashboard row of the session made from `brief`, once it is listed. */
async function sessionRow(page, url, brief) {
  await page.goto(new URL("#/", url).href);
  const row = page.locator("[data-testid=session-row]", { hasText: brief });
  await row.waitFor();
  return row;
}

describe("the first brief", { timeout: TEST_TIMEOUT * 4 }, () => {
  before(launchBrowser);
  after(cleanUp);

  test("@ offers the workspace's modules; arrows and Enter pick one; the agent's health shows", { timeout: TEST_TIMEOUT }, async (t) => {
    const { page, errors } = await openForm(t);
    const brief = page.locator("[data-testid=brief]");
    await brief.click();
    await brief.pressSequentially("Add a wishlist to @");
    const list = page.locator("[data-testid=module-autocomplete]");
    await list.waitFor();
    const all = await list.locator("[data-testid=module-option]").evaluateAll((els) => els.map((e) => e.getAttribute("data-module")));
    assert.deepEqual(all, ["@shop/cart", "@shop/catalog", "@shop/orders"], "every module of the shop, by id");
    assert.match(await list.innerText(), /modules\/catalog/, "each with its directory");

    await brief.pressSequentially("ca");
    await page.locator("[data-testid=module-option][data-module='@shop/catalog']").waitFor();
    await page.locator("[data-testid=agent-health]").waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, "brief-autocomplete.png") });
    await page.keyboard.press("ArrowDown");
    assert.equal(await page.locator("[data-testid=module-option][aria-selected=true]").getAttribute("data-module"), "@shop/catalog");
    await page.keyboard.press("Enter");
    await list.waitFor({ state: "detached" });
    assert.equal(await brief.inputValue(), "Add a wishlist to @shop/catalog ");
    assert.match(page.url(), /#\/new$/, "Enter picked the module and did not create the session");

    // The agent that will run and its health, with "unknown" where the CLI cannot tell.
    const health = page.locator("[data-testid=agent-health]");
    assert.match(await health.innerText(), /installed|not installed|configured/);
    assert.match(await page.locator("[data-testid=agent-choice]").innerText(), /\(default\)/);
    await page.screenshot({ path: path.join(ARTIFACTS, "brief-new-session.png") });
    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });

  test("a new session is honest: no changes yet, Eject not primary, gates not run, its checkpoint current", { timeout: TEST_TIMEOUT }, async (t) => {
    const { page, errors } = await openForm(t);
    await page.locator("[data-testid=brief]").fill("Add a wishlist to @shop/catalog");
    await page.locator("[data-testid=create-session]").click();
    await page.waitForURL(/#\/session\/[^/]+$/);
    const nothing = page.locator("[data-testid=nothing-changed]");
    await nothing.waitFor();
    assert.equal(await nothing.innerText(), "No changes yet");
    const eject = page.locator("[data-testid=eject]");
    assert.equal(await eject.getAttribute("data-primary"), "false", "Eject is not the primary action with nothing to deliver");
    assert.doesNotMatch((await eject.getAttribute("class")) ?? "", /btn-primary/);
    const badge = page.locator("[data-testid=tab-gates-summary]");
    await badge.waitFor();
    assert.equal(await badge.getAttribute("data-state"), "not-run", "the Gates tab claims no pass");
    await page.screenshot({ path: path.join(ARTIFACTS, "brief-session-honest.png") });
    await page.locator("[data-testid=tab-gates]").click();
    await page.locator("[data-testid=gates-not-run]").waitFor();
    assert.match(await page.locator("[data-testid=gates-panel]").innerText(), /Not run yet/);
    await page.screenshot({ path: path.join(ARTIFACTS, "brief-gates-not-run.png") });
    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });

  test("a brief naming `module @shop/catalog` creates a session with that module", { timeout: TEST_TIMEOUT }, async (t) => {
    const { page, errors, url } = await openForm(t);
    const text = "Add a wishlist to module @shop/catalog";
    await page.locator("[data-testid=brief]").fill(text);
    await page.locator("[data-testid=create-session]").click();
    await page.waitForURL(/#\/session\/[^/]+$/);
    const row = await sessionRow(page, url, text);
    assert.match(await row.innerText(), /@shop\/catalog/);
    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });

  test("an unknown id asks before it becomes a new module; Cancel creates nothing, Create does", { timeout: TEST_TIMEOUT }, async (t) => {
    const { page, errors, url } = await openForm(t);
    const text = "Add a wishlist in @shop/wishlist";
    await page.locator("[data-testid=brief]").fill(text);
    await page.locator("[data-testid=create-session]").click();
    const dialog = page.locator("[role=dialog]");
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /Create new module @shop\/wishlist\?/);
    assert.match(page.url(), /#\/new$/, "nothing was created while it asks");
    await page.screenshot({ path: path.join(ARTIFACTS, "brief-unknown-module.png") });

    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    assert.equal(await page.locator("[data-testid=brief]").inputValue(), text, "the brief stays to be edited");

    await page.locator("[data-testid=create-session]").click();
    await dialog.waitFor();
    await dialog.locator("[data-testid=confirm]").click();
    await page.waitForURL(/#\/session\/[^/]+$/);
    const row = await sessionRow(page, url, text);
    assert.match(await row.innerText(), /@shop\/wishlist/);
    // Cancel created nothing: this is the only session.
    assert.equal(await page.locator("[data-testid=session-row]").count(), 1);
    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });
});
