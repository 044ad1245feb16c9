// Review comments sent to a real agent: a claude turn (against the scripted model server) writes a file; in the Changes
// tab the test selects lines of its diff (a click and a Shift+click, then a single line), writes two comments, sends
// them with "Send to agent (2)", and reads what the model server recorded: the next request carries both comments, their
// files and lines, and the quoted code. After that turn, which changed none of those lines, both are open again.
// Runs in a loopback-only network namespace, as agent.test.mjs does.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import {
  ARTIFACTS,
  TEST_TIMEOUT,
  cleanUp,
  copyExample,
  createSessionInPage,
  newPage,
  startServer,
  stopServer,
  tempDir,
} from "./harness.mjs";
import { CLI_DIR, MODEL_SERVER, api, prepare, recordedRequests, startModelServer } from "./agents.mjs";

const FILE = "modules/catalog/src/client/wishlist.js";
const CONTENT = [
  "export const wishlist = new Set();",
  "",
  "export function addToWishlist(id) {",
  "  wishlist.add(id);",
  "  return wishlist.size;",
  "}",
  "",
].join("\n");
const FIRST = "Keep the wishlist per shopper, not global";
const SECOND = "Return whether it was new instead of the size";
const TURN_ONE = "Added a wishlist module to the catalog client.";
const REVIEW_REPLY = "I read both comments and will follow up.";

describe("review comments go to the agent", { timeout: TEST_TIMEOUT * 2 }, () => {
  before(prepare({ clis: ["claude"], binaries: [MODEL_SERVER] }));
  after(cleanUp);

  test("select lines, comment twice, send: the next prompt carries both with the quoted code", { timeout: TEST_TIMEOUT * 2 }, async (t) => {
    const record = path.join(tempDir("kiln-model-record-"), "requests.jsonl");
    const model = await startModelServer(
      [
        // The brief's turn writes the file the comments are on.
        { tool: "Write", arguments: { file_path: FILE, content: CONTENT } },
        { text: `${TURN_ONE}\n\nHANDOFF: none - the wishlist module is there` },
        // Its read-only auto-review.
        { text: "Checked the change.\n\nREVIEW: pass - fine" },
        // The turn the comments are sent with: it answers and changes nothing.
        { text: `${REVIEW_REPLY}\n\nHANDOFF: none - answered` },
      ],
      { record },
    );
    t.after(() => stopServer(model.child));
    const workspace = copyExample();
    const home = tempDir("kiln-comments-home-");
    const { url, child } = await startServer({
      workspace,
      env: { HOME: home, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "sk-ant-test" },
    });
    t.after(() => stopServer(child));
    await api(url, "update_settings", {
      defaultDriver: "claude",
      claudePath: path.join(CLI_DIR, "node_modules/.bin/claude"),
      plannerAgent: false,
    });

    const { page, errors } = await newPage(t);
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(url);
    await createSessionInPage(page, "Add a wishlist to @shop/catalog");
    const transcript = page.locator("[data-testid=transcript]");
    await transcript.getByText(TURN_ONE).waitFor({ timeout: 120_000 });
    await page.locator("[data-testid=running]").waitFor({ state: "detached", timeout: 120_000 });

    // The Changes tab: the new file's diff.
    await page.locator("[data-testid=tab-changes]").click();
    await page.locator(`[data-testid=diff-file][data-path="${FILE}"]`).click();
    const diff = page.locator(`[data-testid=file-diff][data-path="${FILE}"]`);
    const line = (n) => diff.locator(`[data-testid=diff-line-pick][data-line="${n}"]`);
    await line(1).waitFor({ timeout: 30_000 });

    // Lines 3–5 by a click and a Shift+click; the comment goes under line 5.
    await line(3).click();
    await line(5).click({ modifiers: ["Shift"] });
    assert.equal(await diff.locator('[data-testid=diff-line-pick][aria-pressed="true"]').count(), 3);
    const form = diff.locator("[data-testid=comment-form]");
    assert.match(await form.innerText(), /lines 3–5/);
    await form.locator("[data-testid=comment-input]").fill(FIRST);
    await form.locator("[data-testid=comment-save]").click();
    await diff.locator("[data-testid=review-comment-body]", { hasText: FIRST }).waitFor();

    // Line 1 alone, from the keyboard: focus its number, Enter, write, Ctrl+Enter.
    await line(1).focus();
    await page.keyboard.press("Enter");
    await form.locator("[data-testid=comment-input]").fill(SECOND);
    await page.keyboard.press("Control+Enter");
    await diff.locator("[data-testid=review-comment-body]", { hasText: SECOND }).waitFor();

    const list = page.locator("[data-testid=review-comments]");
    assert.equal(await list.locator("[data-testid=review-comment]").count(), 2);
    const send = page.locator("[data-testid=send-review]");
    assert.equal((await send.innerText()).trim(), "Send to agent (2)");
    await page.screenshot({ path: path.join(ARTIFACTS, "comments-before-send.png") });
    const before = recordedRequests(record).length;
    await send.click();

    // The next request to the model carries both comments, their files and lines, and the code they quote.
    const deadline = Date.now() + 120_000;
    let prompt = null;
    while (!prompt && Date.now() < deadline) {
      const later = recordedRequests(record).slice(before).filter((r) => r.path === "/v1/messages");
      prompt = later.map((r) => JSON.stringify(r.body)).find((b) => b.includes("Review comments (2)")) ?? null;
      if (!prompt) await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(prompt, "no model request carried the review");
    const quoted = (lines) => JSON.stringify(lines.join("\n")).slice(1, -1);
    for (const needle of [
      `\`${FILE}\` lines 3-5:`,
      quoted(["```js", "export function addToWishlist(id) {", "  wishlist.add(id);", "  return wishlist.size;", "```", FIRST]),
      `\`${FILE}\` line 1:`,
      quoted(["```js", "export const wishlist = new Set();", "```", SECOND]),
    ]) {
      assert.ok(prompt.includes(needle), `the prompt lacks ${needle}`);
    }

    // The turn changed none of those lines: both are open again, saying so.
    await transcript.getByText(REVIEW_REPLY).waitFor({ state: "attached", timeout: 120_000 });
    await page.locator("[data-testid=running]").waitFor({ state: "detached", timeout: 120_000 });
    await page.waitForFunction(
      () => [...document.querySelectorAll("[data-testid=review-comments] [data-testid=review-comment-note]")].length === 2,
      null,
      { timeout: 30_000 },
    );
    const states = await list.locator("[data-testid=review-comment-state]").allInnerTexts();
    assert.deepEqual(states, ["open", "open"]);
    await page.screenshot({ path: path.join(ARTIFACTS, "comments-after-turn.png") });
    assert.deepEqual(errors, []);
  });
});
