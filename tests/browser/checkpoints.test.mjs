// End-to-end test of checkpoints in `kiln serve`: two turns of Kiln's own agent (the
// OpenAI-compatible driver against the scripted model server on 127.0.0.1) each change a
// file; the Changes tab shows both; "Restore to here" on the first turn's handoff puts
// the working copy back, and the Changes tab shows it; the Gates tab shows the gates
// that ran after the turns.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ARTIFACTS, TEST_TIMEOUT, cleanUp, copyExample, launchBrowser, newPage, startServer, stopServer } from "./harness.mjs";
import { startModelServer, useScriptedModel } from "./agents.mjs";

describe("checkpoints in kiln serve", { timeout: TEST_TIMEOUT * 2 }, () => {
  before(launchBrowser);
  after(cleanUp);

  test("restore to a turn from the chat and see the diff change", { timeout: TEST_TIMEOUT * 2 }, async (t) => {
    const model = await startModelServer([
      { tool: "write_file", arguments: { path: "modules/catalog/src/server/wishlist.js", content: "export const wishlist = [];\n" } },
      { text: "Added the wishlist store.\nHANDOFF: none - done" },
      // Each satisfied turn is followed by its read-only review.
      { text: "Checked.\nREVIEW: pass - ok" },
      { tool: "write_file", arguments: { path: "modules/catalog/src/server/favourites.js", content: "export const favourites = [];\n" } },
      { text: "Added favourites.\nHANDOFF: none - done" },
      { text: "Checked again.\nREVIEW: pass - ok" },
    ]);
    t.after(() => stopServer(model.child));
    // The catalog's format gate is turned off in this copy, so one gate shows as not configured.
    const workspace = copyExample();
    fs.appendFileSync(path.join(workspace, "kiln.toml"), '\n[modules.overrides."@shop/catalog".gates]\nformat = ""\n');
    const { url, child } = await startServer({ workspace });
    t.after(() => stopServer(child));
    await useScriptedModel(url, model);

    const { page, errors } = await newPage(t);
    await page.goto(url);
    await page.locator("[data-testid=new-session]").first().click();
    await page.locator("[data-testid=brief]").fill("Add a wishlist endpoint to @shop/catalog");
    await page.locator("[data-testid=create-session]").click();
    const handoffs = page.locator("[data-testid=entry][data-kind=handoff]");
    await handoffs.first().waitFor({ timeout: 60_000 });
    // The turn's handoff, then its review's.
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid=entry][data-kind=handoff]').length >= 2 && !document.querySelector("[data-testid=running]"),
      null,
      { timeout: 60_000 },
    );

    await page.locator("[data-testid=message]").fill("Now add favourites on the server");
    await page.locator("[data-testid=send]").click();
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid=entry][data-kind=handoff]').length >= 4 && !document.querySelector("[data-testid=running]"),
      null,
      { timeout: 60_000 },
    );

    // Both files in the Changes tab.
    await page.locator("[data-testid=tab-changes]").click();
    const files = page.locator("[data-testid=diff-file]");
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=diff-file]").length === 2, null, { timeout: 30_000 });
    assert.match(await files.nth(0).innerText(), /favourites\.js/);
    assert.match(await files.nth(1).innerText(), /wishlist\.js/);

    // Restore to the first turn from its handoff in the chat.
    await page.locator("[data-testid=tab-chat]").click();
    await page.locator("[data-testid=restore-here]").first().click();
    await page.locator("[data-testid=confirm-restore]").click();
    await page.getByText(/Restored the session's working copy to the state after/).waitFor();

    await page.locator("[data-testid=tab-changes]").click();
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=diff-file]").length === 1, null, { timeout: 30_000 });
    assert.match(await files.first().innerText(), /wishlist\.js/);
    await page.screenshot({ path: path.join(ARTIFACTS, "restored-diff.png"), fullPage: true });

    // The gates that ran after the turns: the module's real `node --test` suite passed,
    // and a gate with no command is shown as not configured, never as passed.
    await page.locator("[data-testid=tab-gates]").click();
    await page.locator("[data-testid=gate-row]").first().waitFor();
    const tests = page.locator('[data-testid=gate-row][data-status=passed]', { hasText: "tests" });
    await tests.first().waitFor();
    const off = page.locator('[data-testid=gate-row][data-status=not-configured]');
    assert.ok((await off.count()) > 0);
    assert.match(await off.first().innerText(), /not\s+configured/i);
    await page.screenshot({ path: path.join(ARTIFACTS, "gates.png"), fullPage: true });
    assert.deepEqual(errors, []);
  });
});
