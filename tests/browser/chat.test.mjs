// The chat with real claude turns against the scripted model server: it follows to the end after
// Send and shows the reply without manual scrolling; scrolled up, new activity (a turn started
// elsewhere) shows the "New activity" pill instead of moving the reader; the transcript is folded
// (one row per tool call, no HANDOFF: lines). With the engine's `live` events: the provider's
// trouble is one updating status line (overloaded — retry N of M), and refused credentials show
// in words. Runs in a loopback-only network namespace, as agent.test.mjs does.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { ARTIFACTS, TEST_TIMEOUT, cleanUp, copyExample, newPage, startServer, stopServer, tempDir } from "./harness.mjs";
import { CLI_DIR, MODEL_SERVER, api, prepare, startModelServer } from "./agents.mjs";

const BRIEF = "Look through @shop/catalog's client code";
const TURN_ONE = "I looked through every client file of the catalog.";
const REPLY_TWO = "The product card renders in card.js.";
const REPLY_THREE = "The wishlist would sit beside the price.";

/** A shell command the claude CLI runs in the session's working copy (Kiln's loopback serve allows agent commands). */
const ls = (dir) => ({ tool: "Bash", arguments: { command: `ls ${dir}`, description: `List ${dir}` } });

/** A workspace on examples/shop served with claude against `steps`; the planner agent off, so the brief starts the first turn. */
async function serveWithClaude(t, steps) {
  const model = await startModelServer(steps);
  t.after(() => stopServer(model.child));
  const workspace = copyExample();
  const home = tempDir("kiln-chat-home-");
  const { url, child } = await startServer({
    workspace,
    env: { HOME: home, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "sk-ant-test" },
  });
  t.after(() => stopServer(child));
  await api(url, "update_settings", { defaultDriver: "claude", claudePath: path.join(CLI_DIR, "node_modules/.bin/claude"), plannerAgent: false });
  return url;
}

async function createSession(page, url, brief) {
  await page.goto(url);
  await page.locator("[data-testid=new-session]").first().click();
  await page.locator("[data-testid=brief]").fill(brief);
  await page.locator("[data-testid=create-session]").click();
  await page.waitForURL(/#\/session\/[^/]+$/);
  return page.url().split("/").pop();
}

/** In the page: the chat's scroll position, and whether an element with `text` is inside the chat's visible area. */
function chatState(text) {
  const el = document.querySelector("[data-testid=transcript]");
  if (!el) return null;
  const box = el.getBoundingClientRect();
  const hit = [...el.querySelectorAll("[data-testid=entry]")].find((e) => e.textContent.includes(text ?? "\u0000"));
  const r = hit?.getBoundingClientRect();
  return {
    atBottom: el.scrollHeight - el.scrollTop - el.clientHeight < 48,
    scrollable: el.scrollHeight > el.clientHeight + 100,
    scrollTop: el.scrollTop,
    inView: Boolean(r && r.bottom <= box.bottom + 1 && r.top >= box.top - 1),
  };
}

/** In the page: the chat is at its end and the entry with `text` is inside its visible area (self-contained: it runs in the page). */
function followedTo(text) {
  const el = document.querySelector("[data-testid=transcript]");
  if (!el) return false;
  const box = el.getBoundingClientRect();
  const hit = [...el.querySelectorAll("[data-testid=entry]")].find((e) => e.textContent.includes(text));
  const r = hit?.getBoundingClientRect();
  return el.scrollHeight - el.scrollTop - el.clientHeight < 48 && Boolean(r && r.bottom <= box.bottom + 1 && r.top >= box.top - 1);
}

describe("the chat follows, folds and streams", { timeout: TEST_TIMEOUT * 2 }, () => {
  before(prepare({ clis: ["claude"], binaries: [MODEL_SERVER] }));
  after(cleanUp);

  test("follows to the end after Send, shows 'New activity' when scrolled up, folds tool calls", { timeout: TEST_TIMEOUT * 2 }, async (t) => {
    const url = await serveWithClaude(t, [
      // Turn one (the brief): nine searches fill the chat past its height.
      ...["", "src", "src/client", "src/server", "test", "..", "../..", "../cart", "../orders"].map((p) => ls(`modules/catalog/${p}`)),
      { text: `${TURN_ONE}\n\nHANDOFF: none - read the catalog` },
      // Turn two (sent from the composer).
      ls("modules/catalog/src/client"),
      { text: `${REPLY_TWO}\n\nHANDOFF: none - answered` },
      // Turn three (sent from elsewhere while the reader is scrolled up).
      ls("modules/catalog/src"),
      ls("modules/catalog/test"),
      { text: `${REPLY_THREE}\n\nHANDOFF: none - answered` },
    ]);
    const { page, errors } = await newPage(t);
    await page.setViewportSize({ width: 900, height: 700 });
    const sessionId = await createSession(page, url, BRIEF);
    const transcript = page.locator("[data-testid=transcript]");

    // Turn one ends: one row per tool call, its HANDOFF: line only in the chip.
    await transcript.getByText(TURN_ONE).waitFor({ timeout: 120_000 });
    await page.locator("[data-testid=running]").waitFor({ state: "detached", timeout: 60_000 });
    const tools = transcript.locator("[data-testid=entry][data-row=tool]");
    assert.ok((await tools.count()) >= 9, `one row per tool call, got ${await tools.count()}`);
    assert.equal(await tools.first().getAttribute("data-tool-kind"), "execute");
    assert.equal(await tools.first().getAttribute("data-status"), "done");
    assert.doesNotMatch(await transcript.innerText(), /HANDOFF:/);
    // The first turn streamed in at the end, and the chat followed it there.
    await page.waitForFunction(followedTo, "read the catalog", { timeout: 10_000 });
    await page.screenshot({ path: path.join(ARTIFACTS, "chat-turn-one.png") });
    // A row opens to its output (clicking scrolls the chat up to it: Send must bring the end back).
    await tools.first().locator("[data-testid=tool-toggle]").click();
    const output = tools.first().locator("[data-testid=tool-body]");
    await output.waitFor();
    assert.match(await output.innerText(), /src/);
    await tools.first().locator("[data-testid=tool-toggle]").click();

    // Send: the chat follows to the end and shows the reply, with no scrolling by the test.
    await page.locator("[data-testid=message]").fill("Where does the product card render?");
    await page.locator("[data-testid=send]").click();
    await page.waitForFunction(followedTo, REPLY_TWO, { timeout: 120_000 }).catch(async (e) => {
      // Say which half failed: the reply never came, or the chat did not follow it.
      await page.screenshot({ path: path.join(ARTIFACTS, "chat-not-followed.png") });
      throw new Error(`${e.message}; the chat then: ${JSON.stringify(await page.evaluate(chatState, REPLY_TWO))}`);
    });
    const state = await page.evaluate(chatState, REPLY_TWO);
    assert.ok(state.scrollable, "the chat is longer than its box, so following was needed");
    await page.locator("[data-testid=running]").waitFor({ state: "detached", timeout: 60_000 });
    await page.screenshot({ path: path.join(ARTIFACTS, "chat-followed.png") });

    // Scrolled up, a turn started elsewhere: the reader stays where they are and the pill says so.
    await transcript.hover();
    await page.mouse.wheel(0, -3000);
    await page.waitForFunction(() => {
      const el = document.querySelector("[data-testid=transcript]");
      return el && el.scrollTop < el.scrollHeight - el.clientHeight - 200;
    });
    const before = await page.evaluate(chatState, REPLY_THREE);
    await api(url, "send_message", { sessionId, text: "Where would the wishlist heart go?" });
    const pill = page.locator("[data-testid=new-activity]");
    await pill.waitFor({ timeout: 60_000 });
    const during = await page.evaluate(chatState, REPLY_THREE);
    assert.ok(Math.abs(during.scrollTop - before.scrollTop) < 5, `the chat stayed put (${before.scrollTop} → ${during.scrollTop})`);
    await transcript.getByText(REPLY_THREE).waitFor({ state: "attached", timeout: 120_000 });
    assert.equal((await page.evaluate(chatState, REPLY_THREE)).inView, false, "the reply arrived out of view");
    await page.screenshot({ path: path.join(ARTIFACTS, "chat-new-activity.png") });
    await pill.click();
    await page.waitForFunction(followedTo, REPLY_THREE, { timeout: 10_000 });
    await pill.waitFor({ state: "detached" });
    assert.deepEqual(errors, []);
  });

  // Needs the engine's `live` events (issue 15): against a binary without them no status line ever shows.
  test("provider trouble is one updating line; refused credentials are said in words", { timeout: TEST_TIMEOUT * 2 }, async (t) => {
    const overloaded = { error: { status: 529, message: "Overloaded", type: "overloaded_error", retry_after: 0 } };
    const url = await serveWithClaude(t, [
      overloaded,
      overloaded,
      overloaded,
      { text: "Done after the overload.\n\nHANDOFF: none - done" },
      { error: { status: 401, message: "invalid x-api-key", type: "authentication_error" } },
    ]);
    const { page, errors } = await newPage(t);
    // Record every live status line the page shows, and how many at once.
    await page.addInitScript(() => {
      window.__live = { lines: [], most: 0 };
      new MutationObserver(() => {
        const shown = document.querySelectorAll("[data-testid=live-status]");
        window.__live.most = Math.max(window.__live.most, shown.length);
        for (const s of shown) {
          const line = `${s.getAttribute("data-reason")}|${s.className}|${s.textContent}`;
          if (window.__live.lines.at(-1) !== line) window.__live.lines.push(line);
        }
      }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
    });
    const sessionId = await createSession(page, url, "Look through @shop/catalog");
    const transcript = page.locator("[data-testid=transcript]");
    await transcript.getByText("Done after the overload.").waitFor({ timeout: 120_000 });
    const live = await page.evaluate(() => window.__live);
    assert.equal(live.most, 1, "one status line at a time");
    assert.ok(
      live.lines.some((l) => /^overloaded\|.*The model provider is overloaded.*retry \d+/.test(l)),
      `an updating 'overloaded — retry N' line: ${JSON.stringify(live.lines)}`,
    );
    // No transcript line per attempt.
    assert.doesNotMatch(await transcript.innerText(), /overloaded_error|Overloaded.*\n.*Overloaded/s);
    await page.locator("[data-testid=running]").waitFor({ state: "detached", timeout: 60_000 });

    // A 401: said in words, in red, once.
    await page.evaluate(() => (window.__live.lines = []));
    await api(url, "send_message", { sessionId, text: "Once more" });
    const blocked = transcript.locator("[data-testid=entry][data-row=error]").filter({ hasText: /refused the credentials/ });
    await blocked.waitFor({ timeout: 120_000 });
    assert.equal(await blocked.count(), 1);
    assert.doesNotMatch(await blocked.innerText(), /invalid x-api-key/, "the raw message stays behind details");
    const lines = await page.evaluate(() => window.__live.lines);
    assert.ok(lines.every((l) => !l.startsWith("auth|") || /live-status-danger/.test(l)), `auth lines are red: ${JSON.stringify(lines)}`);
    await page.screenshot({ path: path.join(ARTIFACTS, "chat-provider-trouble.png") });
    assert.deepEqual(errors, []);
  });
});
