// Update from the workspace in `kiln serve` (issue 33, item 2), in Chromium, on a repository written
// here (no kiln.toml): two sessions change the same line; one is delivered first; the other's eject
// screen shows the conflict with "Update from workspace", which merges the workspace in and leaves the
// conflict marked; the session page lists it and hands it to the agent (Kiln's own loop against the
// scripted model server), whose resolution is delivered too: the workspace ends with both changes. And a
// file with two conflicts, each resolved in the Changes tab by the side the user keeps, then delivered.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { MODEL_SERVER, api, prepare, startModelServer, useScriptedModel } from "./agents.mjs";
import { ARTIFACTS, TEST_TIMEOUT, cleanUp, newPage, startServer, stopServer, tempDir } from "./harness.mjs";
import { explain, git, until } from "./repositories.mjs";

const START = 'export const hello = "hello";\nexport const bye = "bye";\nexport const name = "world";\n';
const A = 'export const hello = "hi";\nexport const bye = "bye";\nexport const name = "world";\n';
const B = 'export const hello = "hey";\nexport const bye = "bye";\nexport const name = "kiln";\n';
const RESOLVED = 'export const hello = "hi";\nexport const bye = "bye";\nexport const name = "kiln";\n';
// Two places seven lines apart: two conflicts (git joins changes closer than that into one).
const MIDDLE = ["b", "c", "d", "f", "g", "h", "i"].map((x, i) => `const ${x} = ${i + 2};\n`).join("");
const NUMBERS = `const a = 1;\n${MIDDLE}const e = 5;\n`;
const TENS = `const a = 10;\n${MIDDLE}const e = 50;\n`;
const HUNDREDS = `const a = 100;\n${MIDDLE}const e = 500;\n`;
const PICKED = `const a = 10;\n${MIDDLE}const e = 50;\nconst e = 500;\n`;

function repository(start = START) {
  const dir = path.join(tempDir("kiln-update-"), "greet");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "greet", version: "1.0.0" }, null, 2));
  fs.writeFileSync(path.join(dir, "greet.js"), start);
  git(dir, "init", "-q", "-b", "main");
  git(dir, "add", "-A");
  git(dir, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-qm", "greet");
  return dir;
}

/** A session's view, its working copy's file, its change made as an agent would, and its delivery. */
function steps(url, workspace, file = "greet.js") {
  const session = (id) => api(url, "get_session", { sessionId: id });
  const copy = (id) => path.join(workspace, ".kiln/sessions", id, "workspace", file);
  /** The session's change as an agent would make it, its gates run and its review passed. */
  const change = async (id, content) => {
    fs.writeFileSync(copy(id), content);
    await api(url, "check_modules", { sessionId: id });
    const { modules } = await session(id);
    await api(url, "review_module", { sessionId: id, moduleId: modules[0]?.id ?? "(repository)" });
    await until("a passing review", async () => {
      const s = await session(id);
      return !s.running && s.reviews.some((r) => r.passed && !r.stale);
    }, 60_000, () => explain(url, id));
  };
  const deliver = async (id) => {
    const plan = await api(url, "plan_delivery", { sessionId: id, target: "workspace" });
    assert.deepEqual(plan.blockers, [], "nothing blocks");
    await api(url, "deliver", { sessionId: id, target: plan.target, planId: plan.planId });
    await until("the delivery", async () => (await api(url, "get_delivery", { sessionId: id }))?.state === "delivered", 60_000, () => explain(url, id));
  };
  return { session, copy, change, deliver };
}

/** `kiln serve` on `workspace` with Kiln's own agent against `model`, and two sessions of `briefs` past their setup. */
async function twoSessions(t, model, workspace, briefs) {
  t.after(() => stopServer(model.child));
  const { url, child } = await startServer({ workspace });
  t.after(() => stopServer(child));
  await useScriptedModel(url, model, { openaiKey: "sk-test-key" });
  const helpers = steps(url, workspace);
  const ids = [];
  for (const brief of briefs) ids.push((await api(url, "create_session", { brief })).id);
  const why = () => explain(url, ids[0]);
  for (const id of ids) await until("the setup", async () => (await helpers.session(id)).setup !== "running", 120_000, why);
  return { url, workspace, a: ids[0], b: ids[1], why, ...helpers };
}

describe("update from the workspace", { timeout: TEST_TIMEOUT * 3 }, () => {
  before(prepare({ binaries: [MODEL_SERVER] }));
  after(cleanUp);

  test("a conflict with a delivered sibling: update, see it marked, hand it to the agent, deliver both", { timeout: TEST_TIMEOUT * 3 }, async (t) => {
    const review = { text: "Correctness, security, compatibility, lifecycle, tests and UI checked.\n\nREVIEW: pass - ok" };
    const model = await startModelServer([
      review, // B
      review, // A
      { tool: "write_file", arguments: { path: "greet.js", content: RESOLVED } },
      { text: "Kept your greeting and the workspace's name.\n\nHANDOFF: none - the conflict is resolved" },
      review, // A's auto-review after the resolving turn
      review,
      review,
    ]);
    const { url, workspace, a, b, session, copy, change, deliver, why } = await twoSessions(t, model, repository(), ["Say hi", "Say hey to kiln"]);

    await change(b, B);
    await deliver(b);
    assert.equal(fs.readFileSync(path.join(workspace, "greet.js"), "utf8"), B);
    await change(a, A);

    // The eject screen: the conflict, and the way forward.
    const { page, errors } = await newPage(t);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(url);
    await page.goto(new URL(`#/session/${a}/deliver`, url).href);
    const conflict = page.locator('[data-testid=blocker][data-code="DELIVERY_CONFLICT"]');
    await conflict.waitFor();
    assert.match(await conflict.innerText(), /greet\.js/);
    await page.screenshot({ path: path.join(ARTIFACTS, "update-conflict-1440.png") });
    await conflict.locator("[data-testid=update-from-workspace]").click();
    const unresolved = page.locator('[data-testid=blocker][data-code="CONFLICTS_UNRESOLVED"]');
    await unresolved.waitFor();
    assert.equal(await conflict.count(), 0, "the workspace's change is taken in");
    const marked = fs.readFileSync(copy(a), "utf8");
    assert.match(marked, /<<<<<<< session\nexport const hello = "hi";/);
    assert.match(marked, /export const name = "kiln";/, "the workspace's other change merged cleanly");
    await page.screenshot({ path: path.join(ARTIFACTS, "update-unresolved-1440.png") });

    // The session page: the update stands in the chat, the conflicts bar names the file.
    await page.goto(new URL(`#/session/${a}`, url).href);
    const bar = page.locator("[data-testid=conflicts]");
    await bar.waitFor();
    assert.match(await bar.innerText(), /1 file has conflicts from the update: greet\.js/);
    await page.getByText(/Updated from the workspace: took in 1 file/).waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, "update-conflicts-1440.png") });
    await page.setViewportSize({ width: 900, height: 700 });
    await page.screenshot({ path: path.join(ARTIFACTS, "update-conflicts-900.png") });
    await page.setViewportSize({ width: 1440, height: 900 });

    // The agent resolves it; nothing is left marked, and A lands on top of B.
    await bar.locator("[data-testid=resolve-conflicts]").click();
    await until("the agent's resolution and its review", async () => {
      const s = await session(a);
      return !s.running && (s.conflicts ?? []).length === 0 && s.reviews.some((r) => r.passed && !r.stale);
    }, 120_000, why);
    await bar.waitFor({ state: "detached" });
    await page.screenshot({ path: path.join(ARTIFACTS, "update-resolved-1440.png") });
    await deliver(a);
    assert.equal(fs.readFileSync(path.join(workspace, "greet.js"), "utf8"), RESOLVED);
    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });

  test("two conflicts in one file, each resolved by the side the user keeps in the Changes tab", { timeout: TEST_TIMEOUT * 3 }, async (t) => {
    const review = { text: "Correctness, security, compatibility, lifecycle, tests and UI checked.\n\nREVIEW: pass - ok" };
    const model = await startModelServer([review, review, review, review]);
    const { url, workspace, a, b, session, copy, change, deliver, why } = await twoSessions(t, model, repository(NUMBERS), ["Tens", "Hundreds"]);
    await change(b, HUNDREDS);
    await deliver(b);
    await change(a, TENS);

    // The header's update, then the bar's way to the conflicts.
    const { page, errors } = await newPage(t);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(url);
    await page.goto(new URL(`#/session/${a}`, url).href);
    await page.locator("[data-testid=update-from-workspace]").click();
    const bar = page.locator("[data-testid=conflicts]");
    await bar.waitFor();
    await bar.locator("[data-testid=show-conflicts]").click();
    const cards = page.locator("[data-testid=conflict]");
    await until("both conflicts shown", async () => (await cards.count()) === 2, 30_000, why);
    assert.match(await cards.nth(0).innerText(), /Conflict 1 of 2/);
    assert.match(await cards.nth(0).locator("[data-testid=conflict-session]").innerText(), /const a = 10;/);
    assert.match(await cards.nth(0).locator("[data-testid=conflict-workspace]").innerText(), /const a = 100;/);
    assert.equal(await page.locator("[data-testid=diff-file-conflict]").count(), 1, "the file is marked in the list");
    await page.screenshot({ path: path.join(ARTIFACTS, "conflicts-1440.png") });
    await page.setViewportSize({ width: 900, height: 700 });
    await page.screenshot({ path: path.join(ARTIFACTS, "conflicts-900.png") });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(ARTIFACTS, "conflicts-390.png") });
    await page.setViewportSize({ width: 1440, height: 900 });

    // The session's tens first; the file still holds the other conflict.
    await cards.nth(0).locator("[data-testid=keep-session]").click();
    await until("one conflict left", async () => (await cards.count()) === 1, 30_000, why);
    assert.match(fs.readFileSync(copy(a), "utf8"), /^const a = 10;\nconst b = 2;/);
    assert.deepEqual((await session(a)).conflicts, ["greet.js"]);
    // Both of the last: nothing is left, the bar goes, the chat says so.
    await cards.nth(0).locator("[data-testid=keep-both]").click();
    await bar.waitFor({ state: "detached" });
    assert.equal(fs.readFileSync(copy(a), "utf8"), PICKED);
    assert.equal(await page.locator("[data-testid=conflict-list]").count(), 0);
    await page.screenshot({ path: path.join(ARTIFACTS, "conflicts-resolved-1440.png") });
    await page.keyboard.press("1");
    await page.getByText(/resolved\. No conflict is left\./).waitFor();

    await api(url, "review_module", { sessionId: a, moduleId: (await session(a)).modules[0]?.id ?? "(repository)" });
    await until("a passing review", async () => {
      const s = await session(a);
      return !s.running && s.reviews.some((r) => r.passed && !r.stale);
    }, 60_000, why);
    await api(url, "check_modules", { sessionId: a });
    await deliver(a);
    assert.equal(fs.readFileSync(path.join(workspace, "greet.js"), "utf8"), PICKED);
    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });
});
