// Honest states in `kiln serve` (issue 15, item 5), in Debian's Chromium: Settings never says
// a missing agent binary was "found on PATH", and saving an unavailable driver as the default
// asks first with the reason; Cancel saves nothing. Runs inside `unshare -n`, where no agent
// CLI is on PATH unless KILN_AGENT_CLI_DIR puts one there: codex is never there.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { ARTIFACTS, TEST_TIMEOUT, cleanUp, copyExample, launchBrowser, newPage, startServer, stopServer } from "./harness.mjs";

describe("honest settings", { timeout: TEST_TIMEOUT * 2 }, () => {
  before(launchBrowser);
  after(cleanUp);

  test("an unavailable driver is never found on PATH, and saving it as the default asks first", { timeout: TEST_TIMEOUT }, async (t) => {
    const { url, child } = await startServer({ workspace: copyExample() });
    t.after(() => stopServer(child));
    const { page, errors } = await newPage(t);
    await page.goto(new URL("#/settings", url).href);
    const codex = page.locator("[data-testid=driver-list] [data-driver=codex]");
    await codex.waitFor();
    assert.equal(await codex.getAttribute("data-available"), "false", "no codex binary in this test's PATH");
    assert.equal(await page.locator("[data-testid=codex-path]").getAttribute("placeholder"), "not found on PATH");
    assert.doesNotMatch(await page.locator("[data-testid=settings-form]").innerText(), /found on PATH/);

    await page.locator("[data-testid=default-driver]").selectOption("codex");
    assert.match(await page.locator("[data-testid=default-driver-unavailable]").innerText(), /codex is unavailable: .*npm install -g @openai\/codex/);
    await page.locator("[data-testid=save-settings]").click();
    const dialog = page.locator("[role=dialog]");
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /Make codex the default while it is unavailable\?/);
    assert.match(await dialog.innerText(), /npm install -g @openai\/codex/);
    await page.screenshot({ path: path.join(ARTIFACTS, "settings-unavailable-default.png") });

    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    // Nothing was saved: a reload shows the default as it was.
    await page.reload();
    await page.locator("[data-testid=default-driver]").waitFor();
    assert.notEqual(await page.locator("[data-testid=default-driver]").inputValue(), "codex");
    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });
});
