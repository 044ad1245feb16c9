// End-to-end test of disk use in Debian's Chromium (playwright-core) against `kiln serve`: the
// dashboard shows a new session's size and the store's; archived, the session's working copy
// is listed by Clean up…, removed once confirmed, and its row then says so. Builds nothing: it
// needs target/debug/kiln and ui/dist (./scripts/test builds both first).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import {
  ARTIFACTS,
  TEST_TIMEOUT,
  cleanUp,
  copyExample,
  createSessionInPage,
  launchBrowser,
  newPage,
  startServer,
  stopServer,
} from "./harness.mjs";

const BRIEF = "Add a wishlist to @shop/catalog";
const SIZE = /\d+(\.\d)? (B|KB|MB|GB)/;

describe("disk use in Chromium", { timeout: TEST_TIMEOUT * 2 }, () => {
  before(launchBrowser);
  after(cleanUp);

  test("a session's size shows, and Clean up… removes an archived session's working copy", { timeout: TEST_TIMEOUT }, async (t) => {
    const workspace = copyExample();
    const { url, child } = await startServer({ workspace });
    t.after(() => stopServer(child));
    const { page, errors } = await newPage(t);

    await page.goto(url);
    const sessionId = await createSessionInPage(page, BRIEF);
    const copy = path.join(workspace, ".kiln/sessions", sessionId, "workspace");
    assert.ok(fs.existsSync(copy), "the session has a working copy");

    // The dashboard: the session's size in its row, the store's and the total in the header.
    await page.goto(new URL("#/", url).href);
    const row = page.locator("[data-testid=session-row]", { hasText: BRIEF });
    const disk = row.locator("[data-testid=row-disk]");
    await disk.waitFor();
    assert.match(await disk.innerText(), new RegExp(`^${SIZE.source} on disk$`));
    assert.match(await page.locator("[data-testid=disk-total]").innerText(), SIZE);
    assert.match(await page.locator("[data-testid=disk-store]").innerText(), SIZE);

    // Archived (stopping its setup if it still runs), and shown again with the archived ones.
    await row.locator("[data-testid=archive]").click();
    const confirm = page.locator("[role=dialog] [data-testid=confirm]");
    const gone = row.waitFor({ state: "detached" });
    const asked = confirm.waitFor();
    gone.catch(() => {});
    asked.catch(() => {});
    await Promise.race([gone, asked]);
    if (await confirm.isVisible()) await confirm.click();
    await gone;
    await page.locator("[data-testid=show-archived]").check();
    await row.waitFor();

    // Clean up… lists the archived session's working copy (a dry run: nothing goes yet).
    await page.locator("[data-testid=clean-up]").click();
    const dialog = page.locator("[role=dialog]");
    const item = dialog.locator("[data-testid=clean-up-item]", { hasText: BRIEF });
    await item.waitFor();
    assert.match(await item.innerText(), SIZE);
    assert.match(await dialog.locator("[data-testid=clean-up-total]").innerText(), SIZE);
    assert.ok(fs.existsSync(copy), "the dry run removed nothing");
    await page.screenshot({ path: path.join(ARTIFACTS, "disk-clean-up.png"), fullPage: true });

    // Confirmed, the copy goes and the row says so; its checkpoints and record stay.
    await dialog.locator("[data-testid=confirm]").click();
    await dialog.waitFor({ state: "detached" });
    await row.locator("[data-testid=row-disk][data-removed]").waitFor();
    assert.match(await disk.innerText(), /^Working copy removed/);
    assert.ok(!fs.existsSync(copy), "the working copy is gone");
    assert.ok(fs.existsSync(path.dirname(copy)), "the session's directory (attachments, records) stays");
    await page.screenshot({ path: path.join(ARTIFACTS, "disk-removed.png"), fullPage: true });

    // The transcript says where it comes back from.
    await row.locator(".session-title").click();
    await page.locator("[data-testid=transcript] [data-testid=entry]", { hasText: "Working copy removed by clean-up" }).waitFor();

    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });
});
