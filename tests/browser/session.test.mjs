// End-to-end test of `kiln serve` in Debian's Chromium (playwright-core): create a session
// from the dashboard, see its transcript, archive it and show it again; and the error shown
// for a workspace path that does not exist. Builds nothing: it needs target/debug/kiln and
// ui/dist (./scripts/test builds both first).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import {
  ARTIFACTS,
  TEST_TIMEOUT,
  cleanUp,
  copyExample,
  launchBrowser,
  newPage,
  startServer,
  tempDir,
  stopServer,
} from "./harness.mjs";

const BRIEF = "Add a wishlist to @shop/catalog";

describe("kiln serve in Chromium", { timeout: TEST_TIMEOUT * 3 }, () => {
  before(launchBrowser);
  after(cleanUp);

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
    // Said in words; the code waits behind "details".
    assert.equal(await error.getAttribute("data-code"), "WORKSPACE_NOT_FOUND");
    assert.doesNotMatch(await error.innerText(), /WORKSPACE_NOT_FOUND/);
    await error.locator("summary", { hasText: "details" }).click();
    assert.match(await error.innerText(), /WORKSPACE_NOT_FOUND/);
    assert.equal(await page.locator("[data-testid=new-session]").count(), 0, "no dashboard without a workspace");

    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });
});
