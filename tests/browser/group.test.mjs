// Best-of-N in the page (issue 20): "New session" fans one brief out to three candidates (Kiln's own
// agent against the scripted model server on 127.0.0.1), the comparison screen shows a column per
// candidate with its agent, state, changes, usage and time, "Pick" keeps one and archives the others,
// and the dashboard shows the group as one row that links to its comparison.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ARTIFACTS, TEST_TIMEOUT, cleanUp, copyExample, launchBrowser, newPage, startServer, stopServer } from "./harness.mjs";
import { api, startModelServer, useScriptedModel } from "./agents.mjs";

describe("a group of candidates in kiln serve", { timeout: TEST_TIMEOUT * 2 }, () => {
  before(launchBrowser);
  after(cleanUp);

  test("fan a brief out to three candidates, compare them and pick one", { timeout: TEST_TIMEOUT * 2 }, async (t) => {
    // Each candidate's one turn reads and answers; which candidate takes which step does not matter.
    const done = { text: "The catalog's client code reads well.\nHANDOFF: none - nothing to change" };
    const model = await startModelServer([done, done, done]);
    t.after(() => stopServer(model.child));
    // The direct workflow and no install step: the candidates' turns start at once.
    const workspace = copyExample();
    const toml = path.join(workspace, "kiln.toml");
    fs.writeFileSync(
      toml,
      fs
        .readFileSync(toml, "utf8")
        .replace('mode = "specs"', 'mode = "direct"')
        .replace('setup = "npm ci --offline --no-audit --no-fund"', 'setup = ""'),
    );
    const { url, child } = await startServer({ workspace });
    t.after(() => stopServer(child));
    await useScriptedModel(url, model);

    const { page, errors } = await newPage(t);
    await page.goto(url);
    await page.locator("[data-testid=new-session]").first().click();
    await page.locator("[data-testid=brief]").fill("Look through @shop/catalog's client code");
    await page.locator("[data-testid=fan-out]").check();
    await page.locator("[data-testid=candidate-row]").nth(1).waitFor();
    await page.locator("[data-testid=candidate-add]").click();
    assert.equal(await page.locator("[data-testid=candidate-row]").count(), 3);
    assert.equal(await page.locator("[data-testid=create-session]").innerText(), "Create 3 candidates");
    await page.locator("[data-testid=create-session]").click();
    await page.waitForURL(/#\/group\/[^/]+$/);
    const groupId = decodeURIComponent(new URL(page.url()).hash.split("/").pop());

    // A column per candidate; each ran its turn, which changed nothing and had its tokens counted.
    const columns = page.locator("[data-testid=candidate]");
    await page.waitForFunction(
      () => {
        const cols = [...document.querySelectorAll("[data-testid=candidate]")];
        return (
          cols.length === 3 &&
          cols.every(
            (c) =>
              c.querySelector("[data-testid=candidate-state]")?.textContent === "Editing" &&
              /tok/.test(c.querySelector("[data-testid=candidate-usage]")?.textContent ?? ""),
          )
        );
      },
      null,
      { timeout: 60_000 },
    );
    for (let i = 0; i < 3; i++) {
      const column = columns.nth(i);
      assert.match(await column.locator("h2").innerText(), new RegExp(`Candidate ${i + 1}`));
      assert.equal(await column.locator("[data-testid=candidate-agent]").innerText(), "openai-compatible");
      assert.equal(await column.locator("[data-testid=candidate-changes]").innerText(), "no changes");
      // The scripted endpoint reports no cost: shown as unknown, never as free.
      assert.match(await column.locator("[data-testid=candidate-usage]").innerText(), /unknown/);
      assert.match(await column.locator("[data-testid=candidate-elapsed]").innerText(), /^\d+:\d\d$/);
      // The shop has a preview: the candidate's look before its turn, unless its capture failed
      // (then the column says there is none). Exactly one of the two.
      const shots = await column.locator("[data-testid=candidate-screenshot]").count();
      const none = await column.locator("[data-testid=candidate-screenshot-none]").count();
      assert.equal(shots + none, 1);
    }
    // Two candidates' trees compared: nothing differs.
    await page.locator("[data-testid=diff-empty]").waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, "group-compare.png"), fullPage: true });

    // Pick the second: it is kept, the others are archived.
    const second = columns.nth(1);
    const secondId = await second.getAttribute("data-session-id");
    await second.locator("[data-testid=candidate-pick]").click();
    await page.locator("[data-testid=pick-confirm]").waitFor();
    await page.locator("[data-testid=confirm]").click();
    await second.locator("[data-testid=candidate-picked]").waitFor();
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll("[data-testid=candidate-state]")].filter((s) => s.textContent === "Archived").length === 2,
      null,
      { timeout: 30_000 },
    );
    assert.equal(await second.locator("[data-testid=candidate-deliver]").count(), 1, "the winner is delivered from here");
    assert.equal(await page.locator("[data-testid=group-winner]").innerText(), "Candidate 2");
    const group = await api(url, "get_group", { groupId });
    assert.equal(group.pickedSessionId, secondId);
    assert.deepEqual(
      group.candidates.map((c) => c.archivedAt !== null),
      [true, false, true],
    );

    // The dashboard shows the group as one row holding its open candidate, linking to the comparison.
    await page.goto(url);
    const row = page.locator(`[data-testid=group-row][data-group-id="${groupId}"]`);
    await row.waitFor();
    await row.locator("[data-testid=group-picked]").waitFor();
    assert.equal(await row.locator("[data-testid=session-row]").count(), 1, "archived candidates are hidden");
    await page.screenshot({ path: path.join(ARTIFACTS, "group-dashboard.png"), fullPage: true });
    await row.locator("[data-testid=group-compare]").click();
    await page.waitForURL(new RegExp(`#/group/${groupId}$`));
    await page.locator("[data-testid=candidate]").first().waitFor();
    assert.deepEqual(errors, []);
  });
});
