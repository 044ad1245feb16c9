// End-to-end test of a running command's output in `kiln serve` (issue 33, item 4): Kiln's own agent
// (the OpenAI-compatible driver against the scripted model server on 127.0.0.1) runs a command that
// prints a line a second in a generated one-package repository with no kiln.toml. While it runs, its
// chat row shows what it printed so far and how long it has run; when it ends, the row shows its
// result. The repository has one module, so the screen never speaks of modules.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ARTIFACTS, TEST_TIMEOUT, cleanUp, launchBrowser, newPage, startServer, stopServer, tempDir } from "./harness.mjs";
import { api, startModelServer, useScriptedModel } from "./agents.mjs";
import { git } from "./repositories.mjs";

const COUNT = "for i in 1 2 3 4 5 6; do echo tick $i; sleep 1; done";

/** A one-package repository as a user has it: a package.json, a file, one commit. */
function repository() {
  const dir = path.join(tempDir("kiln-output-"), "ticker");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "ticker", version: "1.0.0" }, null, 2));
  fs.writeFileSync(path.join(dir, "ticker.js"), "export const tick = (n) => `tick ${n}`;\n");
  git(dir, "init", "-q", "-b", "main");
  git(dir, "add", "-A");
  git(dir, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-qm", "a ticker");
  return dir;
}

describe("a running command's output in kiln serve", { timeout: TEST_TIMEOUT }, () => {
  before(launchBrowser);
  after(cleanUp);

  test("streams into its row while it runs, at 1440×900 and 900×700", { timeout: TEST_TIMEOUT }, async (t) => {
    const model = await startModelServer([
      { tool: "run_command", arguments: { command: COUNT } },
      { text: "Counted to six.\nHANDOFF: none - done" },
    ]);
    t.after(() => stopServer(model.child));
    const { url, child } = await startServer({ workspace: repository() });
    t.after(() => stopServer(child));
    await useScriptedModel(url, model);

    const { id } = await api(url, "create_session", { brief: "Count to six" });
    const { page, errors } = await newPage(t);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${url}#/session/${encodeURIComponent(id)}`);
    await page.locator("[data-testid=message]").fill("Count to six, a tick a second");
    await page.locator("[data-testid=send]").click();

    // The command's row, still running, shows what it printed so far and for how long it has run.
    const live = page.locator("[data-testid=tool-live-output]");
    await live.filter({ hasText: "tick 2" }).waitFor({ timeout: 60_000 });
    const row = page.locator('[data-testid=entry][data-row=tool][data-status=running]');
    assert.equal(await row.count(), 1);
    assert.doesNotMatch(await live.innerText(), /tick 6/, "shown while it runs, before its end");
    await page.locator("[data-testid=tool-running]").filter({ hasText: /running · \d+ s/ }).waitFor({ timeout: 10_000 });
    await page.screenshot({ path: path.join(ARTIFACTS, "output-running-1440.png") });
    await page.setViewportSize({ width: 900, height: 700 });
    await live.filter({ hasText: "tick 3" }).waitFor({ timeout: 10_000 });
    await page.screenshot({ path: path.join(ARTIFACTS, "output-running-900.png") });

    // It ends: the live output goes, the row holds the result.
    await page.locator('[data-testid=entry][data-row=tool][data-status=done]').waitFor({ timeout: 30_000 });
    assert.equal(await live.count(), 0);
    await page.locator("[data-testid=entry][data-kind=handoff]").filter({ hasText: /→ you/ }).waitFor({ timeout: 30_000 });
    await page.locator("[data-testid=tool-toggle]").first().click();
    assert.match(await page.locator("[data-testid=tool-body]").innerText(), /tick 1[\s\S]*tick 6/);

    // One package: no module words on the screen.
    assert.equal(await page.locator("[data-testid=module-picker]").count(), 0);
    assert.equal(await page.locator(".module-id").count(), 0);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.screenshot({ path: path.join(ARTIFACTS, "output-done-1440.png") });
    assert.deepEqual(errors, []);
  });
});
