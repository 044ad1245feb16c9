// A session driven by an ACP agent (kiln-acp-double, the scripted agent speaking the real JSON-RPC
// framing, as the custom ACP command) asks permission to fetch a URL: Kiln's policy leaves it to
// the operator, so the page shows a card at the end of the chat with the agent's options, the tab
// says the session needs the operator, and the turn waits. Clicking "Allow once" sends the option
// back: the card goes, the transcript says the answer, the agent reports the option it got and the
// turn finishes. Runs in a loopback-only network namespace, as the other browser tests do.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import {
  ARTIFACTS,
  ROOT,
  TEST_TIMEOUT,
  cleanUp,
  copyExample,
  createSessionInPage,
  newPage,
  startServer,
  stopServer,
  tempDir,
} from "./harness.mjs";
import { api, prepare } from "./agents.mjs";

const ACP_DOUBLE = process.env.KILN_ACP_DOUBLE_BIN ?? path.join(ROOT, "target/debug/kiln-acp-double");
const BRIEF = "Read the docs for @shop/catalog";
const TITLE = "Fetch https://example.com/docs";

/** The agent's one turn: it says what it will do, asks permission to fetch, then reports what it got. */
const SCRIPT = {
  turns: [
    [
      { message: "I need the docs first." },
      {
        permission: {
          title: TITLE,
          kind: "fetch",
          options: [
            { optionId: "allow-once", name: "Allow once", kind: "allow_once" },
            { optionId: "reject-once", name: "Reject", kind: "reject_once" },
          ],
        },
      },
      { message: " Read them." },
    ],
  ],
};

describe("a permission card answered in the page", { timeout: TEST_TIMEOUT }, () => {
  before(prepare({ loopbackOnly: true, binaries: [ACP_DOUBLE] }));
  after(cleanUp);

  test("the ACP agent's request waits as a card; Allow once lets the turn finish", { timeout: TEST_TIMEOUT }, async (t) => {
    const script = path.join(tempDir("kiln-acp-script-"), "script.json");
    fs.writeFileSync(script, JSON.stringify(SCRIPT));
    const workspace = copyExample();
    // The double keeps its sessions under $HOME/.cache: a home of the test's own.
    const home = tempDir("kiln-permission-home-");
    const { url, child } = await startServer({ workspace, env: { HOME: home } });
    t.after(() => stopServer(child));
    await api(url, "update_settings", {
      defaultDriver: "acp:custom",
      acpCustomCommand: `${ACP_DOUBLE} --script ${script}`,
      plannerAgent: false,
    });

    const { page, errors } = await newPage(t);
    await page.goto(url);
    const sessionId = await createSessionInPage(page, BRIEF);

    // The card: at the end of the chat, with the agent's title, kind, Kiln's why and its options.
    const card = page.locator("[data-testid=transcript] [data-testid=permission-card]");
    await card.waitFor({ timeout: 60_000 });
    assert.match(await card.locator("[data-testid=permission-title]").innerText(), /Fetch https:\/\/example\.com\/docs/);
    assert.equal((await card.locator("[data-testid=permission-kind]").innerText()).trim(), "fetch");
    assert.ok((await card.locator(".permission-why").innerText()).trim().length > 0, "Kiln says why it asks");
    const options = card.locator("[data-testid=permission-option]");
    assert.deepEqual(
      await options.evaluateAll((els) => els.map((e) => [e.getAttribute("data-option-id"), e.textContent.trim()])),
      [
        ["allow-once", "Allow once"],
        ["reject-once", "Reject"],
      ],
    );
    const transcript = page.locator("[data-testid=transcript]");
    await transcript.getByText(/The agent asks permission for/).waitFor();
    // The turn waits on the operator: the session still runs, and the tab says it needs them.
    const waiting = await api(url, "get_session", { sessionId });
    assert.equal(waiting.running, true);
    assert.equal(waiting.permissions?.length, 1, JSON.stringify(waiting.permissions));
    await page.waitForFunction(() => document.title.startsWith("◆ Needs you"), null, { timeout: 10_000 });
    await page.locator("[data-testid=permission-badge]").first().waitFor();
    assert.match(await page.locator("[data-testid=running]").innerText(), /waits for your answer/);
    await card.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(ARTIFACTS, "permission-card.png") });

    // Keyboard reachable: the first option takes the focus, and Enter answers it.
    await card.locator("[data-option-id=allow-once]").focus();
    await page.keyboard.press("Enter");
    await card.waitFor({ state: "detached", timeout: 15_000 });
    await transcript.getByText(/You allowed it once/).waitFor({ timeout: 15_000 });
    // The agent got the option and finished its turn.
    await transcript.getByText(/permission: allow-once/).waitFor({ timeout: 30_000 });
    await page.locator("[data-testid=running]").waitFor({ state: "detached", timeout: 60_000 });
    const done = await api(url, "get_session", { sessionId });
    assert.equal(done.running, false);
    assert.equal(done.permissions, undefined, "no card is left");
    assert.deepEqual(errors, []);
  });
});
