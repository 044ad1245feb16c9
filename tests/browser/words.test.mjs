// What a session says in `kiln serve` (issue 33, items 5, 6, 7 and 9), in Chromium, on a generated
// one-package repository with no kiln.toml, Kiln's own agent against the scripted model server:
// - the composer's model is a list of what the endpoint offers; the model picked is the one the turn
//   asks for, and one the endpoint does not offer is refused before anything runs (MODEL_UNKNOWN);
// - the agent's protocol line (HANDOFF:) never shows on the page, streamed or stored; the handoff
//   reads "→ you";
// - a restore stands as its own entry, never folded into notes;
// - a refused key (401) is said with the key Kiln sent (its fingerprint, never the key) and a link to
//   Settings;
// - the screen never speaks of modules, and the Gates tab runs gates by that name.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ARTIFACTS, TEST_TIMEOUT, cleanUp, newPage, startServer, stopServer, tempDir } from "./harness.mjs";
import { MODEL_SERVER, api, prepare, startModelServer, useScriptedModel } from "./agents.mjs";
import { explain, git, until } from "./repositories.mjs";

/** A one-package repository as a user has it: a package.json, a file, one commit. */
function repository() {
  const dir = path.join(tempDir("kiln-words-"), "hello");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "hello", version: "1.0.0" }, null, 2));
  fs.writeFileSync(path.join(dir, "index.js"), "export const hello = () => 'hello';\n");
  git(dir, "init", "-q", "-b", "main");
  git(dir, "add", "-A");
  git(dir, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-qm", "hello");
  return dir;
}

/** Marks the page when any text it ever shows holds `needle`, from now on (streamed text included). */
function watchFor(page, needle) {
  return page.evaluate((needle) => {
    window.__seen = [];
    const look = (node) => {
      const text = node.textContent ?? "";
      if (text.includes(needle)) window.__seen.push(text.slice(0, 200));
    };
    new MutationObserver((records) => {
      for (const r of records) {
        if (r.type === "characterData") look(r.target);
        for (const n of r.addedNodes) look(n);
      }
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  }, needle);
}

describe("words and errors in a session", { timeout: TEST_TIMEOUT * 2 }, () => {
  before(prepare({ binaries: [MODEL_SERVER] }));
  after(cleanUp);

  test("a model from the list, a clean handoff, a restore in view, a refusal with its fix, no module words", { timeout: TEST_TIMEOUT * 2 }, async (t) => {
    const record = path.join(tempDir("kiln-words-record-"), "requests.jsonl");
    const refused = { error: { status: 401, message: "invalid api key" } };
    const model = await startModelServer(
      [
        { tool: "write_file", arguments: { path: "greet.js", content: "export const greet = () => 'hi';\n" } },
        { text: "Added greet.js.\n\nHANDOFF: none - the greeting is in" },
        { text: "Checked.\n\nREVIEW: pass - fine" },
        refused,
        refused,
        refused,
      ],
      { record },
    );
    t.after(() => stopServer(model.child));
    const { url, child } = await startServer({ workspace: repository() });
    t.after(() => stopServer(child));
    const key = "sk-words-test-key-0042";
    await useScriptedModel(url, model, { openaiKey: key });
    const { id } = await api(url, "create_session", { brief: "Greet people" });
    const why = () => explain(url, id);
    await until("the setup", async () => (await api(url, "get_session", { sessionId: id })).setup !== "running", 120_000, why);

    // A model the endpoint does not offer is refused before anything is recorded.
    const before = (await api(url, "get_transcript", { sessionId: id })).length;
    await assert.rejects(api(url, "send_message", { sessionId: id, text: "Greet", model: "no-such-model" }), /MODEL_UNKNOWN/);
    assert.equal((await api(url, "get_transcript", { sessionId: id })).length, before, "nothing recorded");

    const { page, errors } = await newPage(t);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${url}#/session/${encodeURIComponent(id)}`);
    const picker = page.locator("[data-testid=model-picker]");
    await picker.waitFor();
    const options = await picker.locator("option").allInnerTexts();
    assert.ok(options.includes("scripted-large") && options.includes("scripted"), `the endpoint's models: ${options}`);
    assert.ok(!options.some((o) => /Other/.test(o)), "the endpoint's list is all it takes: no free text");
    await picker.selectOption("scripted-large");

    await watchFor(page, "HANDOFF:");
    await page.locator("[data-testid=message]").fill("Add a greeting");
    await page.locator("[data-testid=send]").click();
    await page.locator("[data-testid=entry][data-kind=handoff]").filter({ hasText: /→ you/ }).waitFor({ timeout: 60_000 });
    // The turn's review follows it; the session is settled once the review passed.
    await until("the review", async () => {
      const s = await api(url, "get_session", { sessionId: id });
      return !s.running && s.reviews.some((r) => r.passed);
    }, 60_000, why);
    assert.deepEqual(await page.evaluate(() => window.__seen), [], "HANDOFF: never showed, streamed or stored");
    assert.doesNotMatch(await page.locator("[data-testid=transcript]").innerText(), /HANDOFF:|REVIEW:/);
    const asked = fs.readFileSync(record, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const turns = asked.filter((r) => r.path.endsWith("/chat/completions") || r.path.endsWith("/responses"));
    assert.equal(turns[0]?.body?.model, "scripted-large", "the turn asks for the model picked");

    // A restore is its own entry, in view.
    await api(url, "restore_checkpoint", { sessionId: id, sequence: 0 });
    const restored = page.getByText(/Restored the session's working copy/);
    await restored.waitFor();
    assert.ok(await restored.isVisible(), "in view, not folded into notes");

    // The provider refuses the key: the chat says which key, never the key, and where to fix it.
    await page.locator("[data-testid=message]").fill("Add a farewell");
    await page.locator("[data-testid=send]").click();
    const fix = page.locator("[data-testid=error-fix]");
    await fix.waitFor({ timeout: 60_000 });
    const error = page.locator("[data-testid=entry][data-row=error]").last();
    const said = await error.innerText();
    assert.match(said, /refused the credentials/);
    assert.match(said, /fingerprint/);
    assert.ok(!said.includes(key), "the key itself is never shown");
    await page.screenshot({ path: path.join(ARTIFACTS, "words-refused-1440.png") });
    await page.setViewportSize({ width: 900, height: 700 });
    await page.screenshot({ path: path.join(ARTIFACTS, "words-refused-900.png") });
    await page.setViewportSize({ width: 1440, height: 900 });

    // One package: no module words; the Gates tab runs gates.
    assert.equal(await page.locator(".module-id").count(), 0);
    assert.equal(await page.locator("[data-testid=module-picker]").count(), 0);
    assert.doesNotMatch(await page.locator("[data-testid=transcript]").innerText(), /takes the turn in|Routed to|\bmodules?\b/i);
    await page.locator("[data-testid=tab-gates]").click();
    await page.locator("[data-testid=check-modules]").filter({ hasText: "Run gates" }).waitFor();

    await page.locator("[data-testid=tab-chat]").click();
    await fix.getByRole("link", { name: "Open Settings" }).click();
    await page.locator("[data-testid=settings-form]").waitFor();
    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });
});
