// End-to-end test of a session's terminal in `kiln serve` (Chromium, playwright-core): the
// Terminal tab opens a shell in the session's working copy; keys typed on the keyboard reach
// it (and none of the app's shortcuts), its output shows in xterm's rows, drawn in a monospace
// font under the page's Content-Security-Policy; its size follows the pane; leaving the tab and
// coming back replays the screen; Stop ends it and its output stays readable. Several terminals
// each keep their own screen; past the limit the refusal shows in words. A self-hosted server
// started without --allow-terminals says so; with it, it offers shells but not the agents' CLIs.
import { execFileSync } from "node:child_process";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { api } from "./agents.mjs";
import { ARTIFACTS, KILN, TEST_TIMEOUT, cleanUp, copyExample, createSessionInPage, launchBrowser, newPage, startServer, stopServer } from "./harness.mjs";

async function until(what, check, timeout = 30_000) {
  const end = Date.now() + timeout;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The text of the terminal on screen, read from xterm's rendered rows (rows joined without breaks). */
const screenText = (page) =>
  page.evaluate(() => (document.querySelector("[data-testid=terminal-screen] .xterm-rows")?.textContent ?? "").replaceAll("\u00a0", " "));

/** Waits until the terminal on screen shows `text`. */
function waitForScreen(page, text, timeout = 30_000) {
  return page.waitForFunction(
    (t) => (document.querySelector("[data-testid=terminal-screen] .xterm-rows")?.textContent ?? "").replaceAll("\u00a0", " ").includes(t),
    text,
    { timeout },
  );
}

/** A loopback server on a copy of the shop with one session; resolves with its URL and the session's id. */
async function serverWithSession(t) {
  const workspace = copyExample();
  const { url, child } = await startServer({ workspace });
  t.after(() => stopServer(child));
  await api(url, "update_settings", { plannerAgent: false });
  const created = await api(url, "create_session", { brief: "Look around @shop/catalog by hand" });
  return { url, id: created.id, workspace };
}

async function openTerminalTab(page, url, id) {
  await page.goto(new URL(`#/session/${encodeURIComponent(id)}`, url).href);
  await page.locator("[data-testid=tab-terminal]").click();
  await page.locator("[data-testid=terminal-panel]").waitFor();
}

describe("terminals in kiln serve", { timeout: TEST_TIMEOUT * 3 }, () => {
  before(launchBrowser);
  after(cleanUp);

  test("open a shell, type into it, leave and come back to the replay, stop it", { timeout: TEST_TIMEOUT }, async (t) => {
    const { url, id, workspace } = await serverWithSession(t);
    const workcopy = path.join(workspace, ".kiln/sessions", id, "workspace");
    assert.ok(fs.existsSync(workcopy), `no working copy at ${workcopy}`);

    const { page, errors } = await newPage(t);
    await openTerminalTab(page, url, id);
    // The engine offers terminals in loopback mode.
    await page.locator("[data-testid=new-terminal]").click();
    await page.locator("[data-testid=terminal-screen] .xterm-rows").waitFor();
    assert.equal(await page.locator("[data-testid=terminal-item]").count(), 1);

    // Drawn as xterm means it despite the policy's `style-src 'self'`: monospace rows, the dark theme.
    const look = await page.evaluate(() => {
      const rows = document.querySelector("[data-testid=terminal-screen] .xterm-rows");
      return { font: getComputedStyle(rows).fontFamily, color: getComputedStyle(rows).color };
    });
    assert.match(look.font, /monospace/, `xterm's rows are not in a monospace font: ${look.font}`);
    assert.equal(look.color, "rgb(228, 231, 236)", "xterm's theme applies");

    // Typed with the keyboard: the keys go to the shell, not to the app's shortcuts (?, /, j, k).
    await page.keyboard.type("echo kiln-$((6*7)) '?/jk'");
    await page.keyboard.press("Enter");
    await waitForScreen(page, "kiln-42");
    assert.equal(await page.locator("[data-testid=shortcut-sheet]").count(), 0, "? in the terminal opened the shortcut sheet");
    assert.equal(await page.locator("[data-testid=tab-terminal]").getAttribute("aria-selected"), "true");
    // In the session's working copy.
    await page.keyboard.type("pwd");
    await page.keyboard.press("Enter");
    await waitForScreen(page, fs.realpathSync(workcopy));

    // The pane's size went to the engine (the last resize wins), wider than the default 80 columns.
    const [opened] = await api(url, "list_terminals", { sessionId: id });
    const cols = await until("the resize", async () => {
      const [view] = await api(url, "list_terminals", { sessionId: id });
      return view.cols !== 80 && view.cols;
    });
    assert.ok(cols > 80, `the terminal has ${cols} columns`);
    await page.screenshot({ path: path.join(ARTIFACTS, "terminal.png") });

    // Leaving the tab detaches (the xterm goes) but the terminal runs on; coming back replays its screen.
    await page.locator("[data-testid=tab-chat]").click();
    await page.locator("[data-testid=terminal-screen]").waitFor({ state: "detached" });
    const [away] = await api(url, "list_terminals", { sessionId: id });
    assert.equal(away.state, "running");
    await page.locator("[data-testid=tab-terminal]").click();
    await waitForScreen(page, "kiln-42");
    assert.match(await screenText(page), /kiln-42/);

    // Stop: the process ends, the list says so, and its output stays on screen.
    await page.locator("[data-testid=terminal-stop]").click();
    await page.locator("[data-testid=terminal-exit]").waitFor();
    await page.locator('[data-testid=terminal-item][data-state="exited"]').waitFor();
    assert.equal(await page.locator("[data-testid=terminal-stop]").count(), 0);
    assert.match(await screenText(page), /kiln-42/);
    const [stopped] = await api(url, "list_terminals", { sessionId: id });
    assert.equal(stopped.id, opened.id);
    assert.equal(stopped.state, "exited");
    await page.screenshot({ path: path.join(ARTIFACTS, "terminal-stopped.png") });

    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });

  test("several terminals keep their own screens; past the limit the refusal shows", { timeout: TEST_TIMEOUT }, async (t) => {
    const { url, id } = await serverWithSession(t);
    const { page, errors } = await newPage(t);
    await openTerminalTab(page, url, id);

    await page.locator("[data-testid=new-terminal]").click();
    await page.locator("[data-testid=terminal-screen] .xterm-rows").waitFor();
    await page.keyboard.type("echo first-$((1+0))");
    await page.keyboard.press("Enter");
    await waitForScreen(page, "first-1");
    const first = await page.locator("[data-testid=terminal-screen]").getAttribute("data-terminal-id");

    // The new one takes the screen.
    await page.locator("[data-testid=new-terminal]").click();
    await page.waitForFunction((old) => {
      const id = document.querySelector("[data-testid=terminal-screen]")?.getAttribute("data-terminal-id");
      return id && id !== old;
    }, first);
    await page.locator("[data-testid=terminal-screen] .xterm-rows").waitFor();
    await page.keyboard.type("echo second-$((1+1))");
    await page.keyboard.press("Enter");
    await waitForScreen(page, "second-2");
    assert.doesNotMatch(await screenText(page), /first-1/);
    assert.equal(await page.locator("[data-testid=terminal-item]").count(), 2);

    // Back to the first: its own screen, replayed.
    await page.locator("[data-testid=terminal-pick]").first().click();
    await waitForScreen(page, "first-1");
    assert.equal(await page.locator("[data-testid=terminal-screen]").getAttribute("data-terminal-id"), first);
    assert.doesNotMatch(await screenText(page), /second-2/);

    // Eight running in a session is the limit: the ninth is refused, in words, the code behind details.
    for (let i = 2; i < 8; i++) await api(url, "open_terminal", { sessionId: id, kind: "shell" });
    await page.locator("[data-testid=terminal-item]").nth(7).waitFor();
    await page.locator("[data-testid=new-terminal]").click();
    const error = page.locator("[data-testid=terminal-panel] [data-testid=error]");
    await error.waitFor();
    assert.equal(await error.getAttribute("data-code"), "TERMINAL_LIMIT");
    assert.doesNotMatch(await error.locator(".error-message").innerText(), /TERMINAL_LIMIT/);
    assert.equal(await page.locator("[data-testid=terminal-item]").count(), 8);
    await page.screenshot({ path: path.join(ARTIFACTS, "terminal-limit.png") });

    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });

  test("a self-hosted server offers terminals only with --allow-terminals, and never the agents' CLIs", { timeout: TEST_TIMEOUT }, async (t) => {
    for (const allow of [false, true]) {
      const { url, child, configDir } = await startServer({
        workspace: copyExample(),
        args: ["--mode", "self-hosted", ...(allow ? ["--allow-terminals"] : [])],
      });
      t.after(() => stopServer(child));
      const token = execFileSync(KILN, ["token", "create", "--name", "browser"], {
        env: { ...process.env, KILN_CONFIG_DIR: configDir },
        encoding: "utf8",
      }).trim();
      const { page, errors } = await newPage(t);
      await page.goto(url);
      await page.locator("[data-testid=connect-token]").fill(token);
      await page.locator("[data-testid=connect-submit]").click();
      await createSessionInPage(page, "Look around @shop/catalog by hand");
      await page.locator("[data-testid=tab-terminal]").click();
      await page.locator("[data-testid=terminal-panel]").waitFor();
      if (allow) {
        await page.locator("[data-testid=new-terminal]").waitFor();
        assert.equal(await page.locator("[data-testid=open-claude], [data-testid=open-codex]").count(), 0);
      } else {
        assert.match(await page.locator("[data-testid=terminal-panel]").innerText(), /started without --allow-terminals/);
        assert.equal(await page.locator("[data-testid=new-terminal]").count(), 0);
      }
      assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
    }
  });
});
