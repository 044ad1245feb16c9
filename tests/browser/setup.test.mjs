// The workspace set-up in Chromium against `kiln serve`: a repository without kiln.toml (a small
// npm package whose tests run with node's runner, one commit) opens on the set-up screen, which
// shows the module and its detected tests command with where it came from; an edited command is
// saved as kiln.toml (direct workflow), and a fresh browser then stays on the dashboard; a session's
// gates then run the saved command and show a gate without one as "not configured". Builds
// nothing: it needs target/debug/kiln and ui/dist (./scripts/test builds both first).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { api } from "./agents.mjs";
import { ARTIFACTS, TEST_TIMEOUT, cleanUp, launchBrowser, newPage, startServer, stopServer, tempDir } from "./harness.mjs";

const EDITED = "node --test --test-reporter=spec";

/** A git repository holding an npm package `notes` with a `test` script, and no kiln.toml. */
function fixtureRepository() {
  const root = path.join(tempDir("kiln-browser-setup-"), "notes");
  fs.mkdirSync(path.join(root, "test"), { recursive: true });
  const files = {
    "package.json": `${JSON.stringify(
      { name: "notes", version: "1.0.0", private: true, type: "module", scripts: { test: "node --test" } },
      null,
      2,
    )}\n`,
    "index.js": "export function title(note) {\n  return note.split('\\n')[0].trim();\n}\n",
    "test/index.test.js":
      "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { title } from '../index.js';\n\n" +
      "test('the first line is the title', () => {\n  assert.equal(title('Groceries\\nmilk'), 'Groceries');\n});\n",
    ".gitignore": "node_modules/\n.kiln/\n",
  };
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(root, name), text);
  const git = (...args) =>
    execFileSync("git", ["-c", "user.name=Kiln Test", "-c", "user.email=test@kiln.invalid", "-c", "commit.gpgsign=false", ...args], {
      cwd: root,
      stdio: "pipe",
    });
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-q", "-m", "notes: first commit");
  return root;
}

describe("workspace set-up in Chromium", { timeout: TEST_TIMEOUT * 2 }, () => {
  before(launchBrowser);
  after(cleanUp);

  test("a repository without kiln.toml opens on its set-up; an edited command is saved as kiln.toml", { timeout: TEST_TIMEOUT }, async (t) => {
    const workspace = fixtureRepository();
    const config = path.join(workspace, "kiln.toml");
    assert.ok(!fs.existsSync(config), "the fixture starts without kiln.toml");
    const { url, child } = await startServer({ workspace });
    t.after(() => stopServer(child));
    const { page, errors } = await newPage(t);

    // First open: the app goes to the set-up screen by itself.
    await page.goto(url);
    const screen = page.locator("[data-testid=setup-screen]");
    await screen.waitFor();
    assert.match(page.url(), /#\/workspace\/setup$/);

    // The module and its detected tests gate: the package's own script, with its source.
    const module = page.locator("[data-testid=setup-module]");
    await module.first().waitFor();
    assert.equal(await module.count(), 1, "one module: the package");
    const id = await module.getAttribute("data-module");
    assert.ok(id, "the module has an id");
    const tests = page.locator(`[data-testid="gate-command-${id}-tests"]`);
    assert.match(await tests.inputValue(), /\b(npm test|node --test)\b/, "the tests gate runs the package's test script");
    assert.match(await page.locator(`[data-testid="gate-source-${id}-tests"]`).innerText(), /package\.json/, "its source names package.json");
    assert.equal(
      await page.locator("[data-testid=workflow-direct] input").isChecked(),
      true,
      "the direct workflow is chosen by default",
    );
    assert.match(await page.locator("[data-testid=setup-toml]").innerText(), /\[workflow\]/);
    const toolchains = await page.locator("[data-testid=toolchain]").allInnerTexts();
    assert.ok(toolchains.some((text) => /node/.test(text)), `node is among the toolchains: ${toolchains.join(" | ")}`);

    // Edit the tests command; the edit is marked.
    await tests.fill(EDITED);
    await page.locator(`[data-testid="gate-source-${id}-tests"]`, { hasText: "edited" }).waitFor();
    // The whole screen (it scrolls inside the app), for review.
    await page.setViewportSize({ width: 1280, height: 1500 });
    await page.locator("main").evaluate((main) => main.scrollTo(0, 0));
    await page.screenshot({ path: path.join(ARTIFACTS, "setup-screen.png") });
    await page.setViewportSize({ width: 1280, height: 800 });

    // Save as kiln.toml: the file exists, with the edited command and the direct workflow.
    await page.locator("[data-testid=save-config]").click();
    await page.locator("[data-testid=setup-saved]").waitFor();
    assert.ok(fs.existsSync(config), "kiln.toml was written at the workspace root");
    const text = fs.readFileSync(config, "utf8");
    assert.ok(text.includes(EDITED), `kiln.toml has the edited command:\n${text}`);
    assert.match(text, /mode\s*=\s*"direct"/, `kiln.toml chooses the direct workflow:\n${text}`);
    // The screen now reads the saved file.
    assert.equal(await tests.inputValue(), EDITED);
    assert.match(await page.locator(`[data-testid="gate-source-${id}-tests"]`).innerText(), /kiln\.toml/);
    await page.screenshot({ path: path.join(ARTIFACTS, "setup-saved.png") });

    // A fresh browser (nothing remembered) now stays on the dashboard: the workspace has its kiln.toml.
    const fresh = await newPage(t);
    await fresh.page.goto(url);
    await fresh.page.locator("[data-testid=new-session]").first().waitFor();
    await fresh.page.locator("[data-testid=setup-link]").waitFor();
    assert.equal(await fresh.page.locator("[data-testid=setup-banner]").count(), 0, "no review banner once kiln.toml exists");
    // Give a redirect the time it would take, then check it did not happen.
    await fresh.page.waitForTimeout(500);
    assert.doesNotMatch(fresh.page.url(), /setup/, "the dashboard no longer goes to the set-up");
    assert.equal(await fresh.page.locator("[data-testid=setup-screen]").count(), 0);
    // And the same page reloaded.
    await page.goto(url);
    await page.reload();
    await page.locator("[data-testid=new-session]").first().waitFor();
    assert.doesNotMatch(page.url(), /setup/);

    // A session's gates with the saved set-up: the edited tests command passes, and a gate with
    // no command is "not configured" with its hint, never a failure. (No turn: create_session only.)
    const session = await api(url, "create_session", { brief: "Trim tabs from note titles in notes" });
    await page.goto(new URL(`#/session/${encodeURIComponent(session.id)}`, url).href);
    await page.locator("[data-testid=tab-gates]").click();
    const check = page.locator("[data-testid=check-modules]");
    await check.waitFor();
    // The working copy's install step may still run: Run gates (check_modules) waits for it.
    await page.waitForFunction(() => !document.querySelector("[data-testid=check-modules]")?.disabled, null, { timeout: 60_000 });
    await check.click();
    await page.locator("[data-testid=check-modules][data-state=idle]").waitFor({ timeout: 90_000 });
    const passed = page.locator("[data-testid=gate-row][data-gate=tests][data-status=passed]");
    await passed.waitFor();
    assert.match(await passed.locator("[data-testid=gate-command]").innerText(), /node --test --test-reporter=spec/);
    assert.match(await passed.locator("[data-testid=gate-source]").innerText(), /kiln\.toml/);
    const notConfigured = page.locator("[data-testid=gate-row][data-status=not-configured]");
    assert.ok((await notConfigured.count()) > 0, "a gate without a command is shown as not configured");
    assert.match(await notConfigured.first().locator("[data-testid=gate-status]").innerText(), /not configured/i);
    assert.ok((await notConfigured.first().locator("[data-testid=gate-hint]").innerText()).trim().length > 0, "with its hint");
    assert.equal(await page.locator("[data-testid=gate-row][data-status=failed]").count(), 0, "nothing failed");
    assert.doesNotMatch(await page.locator("[data-testid=gates-summary]").innerText(), /failed/);
    await page.screenshot({ path: path.join(ARTIFACTS, "setup-gates.png") });

    assert.deepEqual([...errors, ...fresh.errors].map(String), [], "no uncaught errors in the pages");
  });
});
