// MCP servers in Settings (issue 35, item 4), in Chromium against `kiln serve` on a copy of the
// example whose kiln.toml declares the test MCP server (tests/fixtures/mcp/notes-server.mjs):
// the shared server is listed by name, a server of the user's is added with a value that is never
// shown again, Check servers starts both as an agent would and shows the shared one's tool and why
// the user's (asked to fail) did not answer, and the user's is removed. Screenshots at three sizes.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ARTIFACTS, ROOT, TEST_TIMEOUT, cleanUp, copyExample, newPage, startServer, stopServer } from "./harness.mjs";
import { prepare } from "./agents.mjs";

const NOTES = path.join(ROOT, "tests/fixtures/mcp/notes-server.mjs");
const SECRET = "mcp-SECRET-4411";

describe("MCP servers in Settings", { timeout: TEST_TIMEOUT }, () => {
  before(prepare());
  after(cleanUp);

  test("listed once, added with a sealed value, checked, removed", { timeout: TEST_TIMEOUT }, async (t) => {
    const shop = copyExample();
    fs.appendFileSync(
      path.join(shop, "kiln.toml"),
      `\n[mcp.notes]\ncommand = "node"\nargs = [${JSON.stringify(NOTES)}]\n`,
    );
    const server = await startServer({ workspace: shop });
    t.after(() => stopServer(server.child));
    const { page, errors } = await newPage(t);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(new URL("#/settings", server.url).href);

    const section = page.locator("[data-testid=mcp-servers]");
    const notes = section.locator("li[data-mcp=notes]");
    await notes.waitFor();
    assert.equal(await notes.locator("[data-testid=mcp-source]").textContent(), "kiln.toml");

    await section.locator("[data-testid=mcp-name]").fill("broken");
    await section.locator("[data-testid=mcp-command]").fill("node");
    await section.locator("[data-testid=mcp-args]").fill(`${NOTES}\n--fail`);
    await section.locator("[data-testid=mcp-values]").fill(`NOTES_TOKEN=${SECRET}`);
    await section.locator("[data-testid=mcp-save]").click();
    const broken = section.locator("li[data-mcp=broken]");
    await broken.waitFor();
    assert.equal(await broken.locator("[data-testid=mcp-source]").textContent(), "yours");
    assert.match(await broken.textContent(), /with NOTES_TOKEN/);
    assert.ok(!(await page.content()).includes(SECRET), "the value is never shown again");

    await section.locator("[data-testid=mcp-check-all]").click();
    await notes.locator("[data-testid=mcp-check]").waitFor();
    assert.match(await notes.locator("[data-testid=mcp-check]").textContent(), /answered · 2 tools.*note, hang/);
    const failed = broken.locator("[data-testid=mcp-check]");
    await failed.waitFor();
    assert.match(await failed.textContent(), /failed.*asked to fail/);

    for (const [width, height] of [
      [1440, 900],
      [900, 700],
      [390, 844],
    ]) {
      await page.setViewportSize({ width, height });
      await section.scrollIntoViewIfNeeded();
      await page.screenshot({ path: path.join(ARTIFACTS, `mcp-settings-${width}.png`), fullPage: false });
      // The section fits its width (the page's header at 390 px is issue 36's).
      const sideways = await section.evaluate((el) => el.scrollWidth - el.clientWidth);
      assert.ok(sideways <= 0, `the MCP servers do not scroll sideways at ${width} px (${sideways} px)`);
    }

    await broken.getByRole("button", { name: "Remove" }).click();
    await broken.waitFor({ state: "detached" });
    assert.equal(await section.locator("li").count(), 1);
    assert.deepEqual(errors, []);
  });
});
