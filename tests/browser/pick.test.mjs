// End-to-end test of "Pick element" (issue 20): in `kiln serve` with examples/shop, the operator
// picks the catalog's heading in the preview (the picking script the gateway adds to the page),
// the composer shows it as a chip, and the message sent with it reaches the real `claude` CLI:
// the request the scripted model server recorded carries the selector and the heading's HTML,
// and the element's screenshot is a PNG of the heading's size. Nothing of the script is in the
// working copy. Like agent.test.mjs it must run in a loopback-only network namespace.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ARTIFACTS, TEST_TIMEOUT, cleanUp, copyExample, newPage, startServer, stopServer, tempDir } from "./harness.mjs";
import { CLI_DIR, MODEL_SERVER, api, prepare, startModelServer } from "./agents.mjs";

const REPLY = "I see the heading you picked.";
const MESSAGE = "Make this heading red";

async function until(what, check, timeout = 60_000) {
  const end = Date.now() + timeout;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The text of every message of a recorded Messages request, joined. */
function promptOf(body) {
  const texts = [];
  const walk = (v) => {
    if (typeof v === "string") texts.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") {
      if (typeof v.text === "string") texts.push(v.text);
      if (v.content !== undefined) walk(v.content);
    }
  };
  walk(body?.messages);
  return texts.join("\n");
}

function pngSize(bytes) {
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "not a PNG");
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

/** Files under `dir` (node_modules and .git left out) whose text holds `needle`. */
function filesHolding(dir, needle) {
  const found = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === ".git") continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesHolding(full, needle));
    else if (entry.isFile() && fs.readFileSync(full).includes(needle)) found.push(full);
  }
  return found;
}

describe("pick an element in the preview", { timeout: TEST_TIMEOUT * 3 }, () => {
  before(prepare({ clis: ["claude"], binaries: [MODEL_SERVER] }));
  after(cleanUp);

  test("the picked heading's selector and HTML reach claude's prompt, and its screenshot is its size", { timeout: TEST_TIMEOUT * 3 }, async (t) => {
    const record = path.join(tempDir("kiln-model-record-"), "requests.jsonl");
    const model = await startModelServer([{ text: `${REPLY}\n\nHANDOFF: none - the operator decides next` }], ["--record", record]);
    t.after(() => stopServer(model.child));
    const workspace = copyExample();
    const home = tempDir("kiln-pick-home-");
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
    // Created without a first message, so the only turn is the one that carries the pick.
    const session = await api(url, "create_session", { brief: "Restyle the heading of @shop/catalog" });
    const id = session.id;

    const { page, errors } = await newPage(t);
    await page.goto(`${url}#/session/${encodeURIComponent(id)}`);
    await page.waitForFunction(() => !/running/i.test(document.querySelector("[data-testid=setup-badge]")?.textContent ?? "running"), null, {
      timeout: 120_000,
    });
    await page.locator("[data-testid=preview-button]").click();
    await page.locator('[data-testid=preview-state][data-state="ready"]').waitFor({ timeout: 90_000 });
    const frame = page.frameLocator("[data-testid=preview-frame]");
    const heading = frame.locator('#screen[data-module="catalog"] h1');
    await heading.waitFor();

    // Pick: the card says so, the click picks the heading and never reaches the app.
    // Beside the chat the card is narrow: Pick sits in its More menu with the other actions.
    if (await page.locator("[data-testid=preview-pick]").isVisible()) {
      await page.locator("[data-testid=preview-pick]").click();
    } else {
      await page.locator("[data-testid=preview-more]").click();
      await page.locator("[data-testid=preview-menu-pick]").click();
    }
    await page.locator('[data-testid=pick-bar][data-mode="element"]').waitFor();
    await heading.hover();
    await page.screenshot({ path: path.join(ARTIFACTS, "pick-hover.png") });
    await heading.click();
    const chip = page.locator("[data-testid=composer] [data-testid=pointed-chip]");
    await chip.waitFor({ timeout: 60_000 });
    await page.locator('[data-testid=composer] [data-testid=pointed-thumb][data-drawn="true"]').waitFor();
    const selector = (await chip.locator(".pointed-label").innerText()).trim();
    assert.equal(await frame.locator(selector).count(), 1, `the selector ${selector} finds the heading alone`);
    assert.equal(await frame.locator(selector).innerText(), "Catalog");
    await page.screenshot({ path: path.join(ARTIFACTS, "pick-chip.png") });

    // The element's screenshot: a PNG of the heading's box, taken in the frame's viewport.
    const view = await api(url, "get_session", { sessionId: id });
    const shot = view.screenshots.at(-1);
    assert.equal(shot.kind, "element");
    const image = await api(url, "get_screenshot", { sessionId: id, screenshotId: shot.id });
    const size = pngSize(Buffer.from(image.pngBase64, "base64"));
    const box = await heading.boundingBox();
    assert.ok(Math.abs(size.width - box.width) <= 1 && Math.abs(size.height - box.height) <= 1, `PNG ${JSON.stringify(size)} vs box ${JSON.stringify(box)}`);

    // Send: the chip goes with the message and stays on it in the transcript.
    await page.locator("[data-testid=message]").fill(MESSAGE);
    await page.locator("[data-testid=send]").click();
    await page.locator("[data-testid=entry][data-kind=user] [data-testid=pointed-chip]").waitFor();
    await until("the composer's chips to go with the message", async () => (await chip.count()) === 0, 30_000);
    await page.locator("[data-testid=entry][data-kind=agent]").getByText(REPLY).waitFor({ timeout: 120_000 });

    const requests = await until("the turn's request in the model server's record", () => {
      if (!fs.existsSync(record)) return null;
      const lines = fs.readFileSync(record, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
      const turn = lines.filter((r) => r.path === "/v1/messages" && promptOf(r.body).includes(MESSAGE));
      return turn.length ? turn : null;
    });
    const prompt = promptOf(requests[0].body);
    assert.ok(prompt.includes(`The element \`${selector}\``), `the selector in the prompt:\n${prompt}`);
    assert.ok(prompt.includes("<h1>Catalog</h1>"), `the heading's HTML in the prompt:\n${prompt}`);
    assert.ok(prompt.includes(`reference/attachments/preview/screenshot-${shot.id}.png`), `the screenshot named:\n${prompt}`);
    const workcopy = path.join(workspace, ".kiln/sessions", id, "workspace");
    assert.ok(fs.existsSync(path.join(workcopy, `reference/attachments/preview/screenshot-${shot.id}.png`)));
    assert.deepEqual(filesHolding(workcopy, "/__kiln/pick.js"), [], "the picking script is never in the working copy");
    await page.screenshot({ path: path.join(ARTIFACTS, "pick-sent.png") });
    assert.deepEqual(errors, []);
  });
});
