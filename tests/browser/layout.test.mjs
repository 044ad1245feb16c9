// The session screen's layout in `kiln serve` (Chromium, playwright-core) at 1440×900, 1280×800 and 900×700: a new
// session, one awaiting approval of its specification, one with changes in the Changes tab, and one with the preview
// docked beside the chat and as its own tab; Chat, Changes and Gates. In each, the key parts (app header, session header, rail, tabs,
// transcript, composer, approval card, side panel or its Details button, preview, diff file list) are visible, inside
// the viewport, and overlap nothing: their boxes do not intersect, and the element drawn at each one's centre is its
// own. The Changes tab's diff takes at least 60% of the window's height. Screenshots: tests/artifacts/layout-<size>-<state>.png.
// No agent runs: the rule-based planner, a draft specification and files written into the working copy make the states.
// Run it in a loopback-only namespace (unshare -n), as scripts/test runs the browser tests.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { api, startModelServer, useScriptedModel } from "./agents.mjs";
import { ARTIFACTS, TEST_TIMEOUT, cleanUp, copyExample, launchBrowser, newPage, startServer, stopServer } from "./harness.mjs";

const SIZES = [
  { name: "1440x900", width: 1440, height: 900 },
  { name: "1280x800", width: 1280, height: 800 },
  { name: "900x700", width: 900, height: 700 },
];

/** The parts whose boxes must not meet, by name: a CSS selector (the first visible match counts). */
const PARTS = {
  appHeader: ".app-header",
  sessionHeader: ".session-top",
  rail: "[data-testid=session-rail]",
  tabs: ".transcript-panel > [role=tablist]",
  transcript: "[data-testid=transcript]",
  composer: "[data-testid=composer]",
  approval: ".approval-slot",
  side: "[data-testid=session-side]",
  preview: "[data-testid=preview-card]",
  diffFiles: ".diff-files",
  diffViewer: "[data-testid=diff-viewer]",
  gates: "[data-testid=gates-panel]",
};

async function until(what, check, timeout = 60_000) {
  const end = Date.now() + timeout;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** Each named part's box, whether it is drawn, and whether the element at its centre is inside it. */
function measure(parts) {
  const out = {};
  for (const [name, selector] of Object.entries(parts)) {
    const el = [...document.querySelectorAll(selector)].find((e) => e.getClientRects().length > 0);
    if (!el) continue;
    const r = el.getBoundingClientRect();
    const x = r.left + r.width / 2;
    const y = r.top + Math.min(r.height / 2, 20);
    const top = document.elementFromPoint(x, y);
    out[name] = {
      box: { left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height },
      ownsCentre: !!top && (el === top || el.contains(top)),
      covering: top && !(el === top || el.contains(top)) ? `${top.tagName.toLowerCase()}.${top.className}` : null,
    };
  }
  out.viewport = { width: innerWidth, height: innerHeight };
  out.scrollWidth = document.documentElement.scrollWidth;
  return out;
}

function intersects(a, b) {
  // A shared edge (and sub-pixel rounding) is no overlap.
  const e = 1;
  return a.left < b.right - e && b.left < a.right - e && a.top < b.bottom - e && b.top < a.bottom - e;
}

/** Asserts `expected` parts are present, visible, inside the viewport, own their centres and meet no other part. */
async function checkLayout(page, size, state, expected) {
  const m = await page.evaluate(measure, PARTS);
  const shot = path.join(ARTIFACTS, `layout-${size.name}-${state}.png`);
  await page.screenshot({ path: shot });
  const where = `${size.name} ${state} (${shot})`;
  for (const name of expected) {
    const part = m[name];
    assert.ok(part, `${where}: ${name} is shown`);
    const { box } = part;
    assert.ok(box.width > 0 && box.height > 0, `${where}: ${name} has a size: ${JSON.stringify(box)}`);
    assert.ok(
      box.left >= -1 && box.top >= -1 && box.right <= m.viewport.width + 1 && box.bottom <= m.viewport.height + 1,
      `${where}: ${name} lies inside the ${m.viewport.width}×${m.viewport.height} viewport: ${JSON.stringify(box)}`,
    );
    assert.ok(part.ownsCentre, `${where}: ${name} is not covered (found ${part.covering} at its centre)`);
  }
  const shown = Object.keys(PARTS).filter((n) => m[n]);
  for (let i = 0; i < shown.length; i++) {
    for (let j = i + 1; j < shown.length; j++) {
      const [a, b] = [shown[i], shown[j]];
      assert.ok(!intersects(m[a].box, m[b].box), `${where}: ${a} ${JSON.stringify(m[a].box)} and ${b} ${JSON.stringify(m[b].box)} overlap`);
    }
  }
  assert.ok(m.scrollWidth <= m.viewport.width + 1, `${where}: no sideways scrolling (${m.scrollWidth} > ${m.viewport.width})`);
  return m;
}

/** The side panel beside the work on a wide window; on a narrow one, the Details button that opens its drawer. */
async function checkDetails(page, size, state) {
  if (size.width >= 1100) {
    assert.equal(await page.locator("[data-testid=details-button]").count(), 0, `${size.name}: no Details button beside a side panel`);
    return "side";
  }
  assert.equal(await page.locator("[data-testid=session-side]").count(), 0, `${size.name}: the side panel is folded into the drawer`);
  const button = page.locator("[data-testid=details-button]");
  await button.waitFor();
  const box = await button.boundingBox();
  assert.ok(box && box.width > 0 && box.x + box.width <= size.width && box.y >= 0, `${size.name} ${state}: the Details button is on screen`);
  await button.click();
  const drawer = page.locator("[data-testid=session-drawer]");
  await drawer.locator("[data-testid=session-modules]").waitFor();
  await page.screenshot({ path: path.join(ARTIFACTS, `layout-${size.name}-${state}-drawer.png`) });
  await page.keyboard.press("Escape");
  await drawer.waitFor({ state: "detached" });
  return null;
}

async function openSession(page, url, id, size) {
  await page.setViewportSize({ width: size.width, height: size.height });
  await page.goto(`${url}#/session/${encodeURIComponent(id)}`);
  await page.locator("#session-title").waitFor();
  await page.locator(`[data-testid=rail-session][data-session-id="${id}"]`).waitFor();
}

describe("the session screen's layout in kiln serve", { timeout: TEST_TIMEOUT * 4 }, () => {
  before(launchBrowser);
  after(cleanUp);

  test("nothing overlaps at 1440×900, 1280×800 and 900×700, and the diff gets the height", { timeout: TEST_TIMEOUT * 4 }, async (t) => {
    // The catalog's specification is a draft: a session on it waits for its approval before any agent runs.
    const workspace = copyExample();
    const spec = path.join(workspace, "modules/catalog/SPEC.md");
    fs.writeFileSync(spec, fs.readFileSync(spec, "utf8").replace("status: approved", "status: draft"));
    const { url, child } = await startServer({ workspace });
    t.after(() => stopServer(child));
    // Kiln's own driver against the scripted model server (on 127.0.0.1, with nothing to say): no turn reaches it,
    // but a message needs a driver that exists.
    const model = await startModelServer([]);
    t.after(() => stopServer(model.child));
    await useScriptedModel(url, model, { openaiKey: "sk-test-key" });

    const awaiting = await api(url, "create_session", { brief: "Add a wishlist to @shop/catalog" });
    const changed = await api(url, "create_session", { brief: "Add a coupon helper to @shop/cart" });
    for (const id of [awaiting.id, changed.id]) {
      await until(`${id}'s setup`, async () => (await api(url, "get_session", { sessionId: id })).setup !== "running", 150_000);
    }
    // The first message waits on the draft specification: no agent runs.
    await api(url, "send_message", { sessionId: awaiting.id, text: "Add a wishlist to @shop/catalog" });
    await until("the approval wait", async () => (await api(url, "get_session", { sessionId: awaiting.id })).state === "awaiting-approval", 30_000);

    // Changes in the cart session's working copy, as an agent would make them: enough files to need a real list.
    const workcopy = path.join(workspace, ".kiln/sessions", changed.id, "workspace");
    for (let i = 1; i <= 12; i++) {
      const body = Array.from({ length: 30 }, (_, n) => `export const coupon${i}_${n} = ${n};`).join("\n");
      fs.writeFileSync(path.join(workcopy, `modules/cart/src/server/coupon-${i}.js`), `${body}\n`);
    }
    const { page, errors } = await newPage(t);

    for (const size of SIZES) {
      // A session waiting for approval: the card, its specification and the composer, nothing covering them.
      await openSession(page, url, awaiting.id, size);
      const card = page.locator("[data-testid=approval-card]");
      await card.locator("[data-testid=spec-body]").waitFor();
      // The rail shows both sessions, this one as needing the user.
      await page.locator(`[data-testid=rail-session][data-session-id="${awaiting.id}"][data-status=needs-you][aria-current=page]`).waitFor();
      assert.equal(await page.locator("[data-testid=rail-session]").count(), 2);
      assert.equal(await page.locator("[data-testid=session-rail]").evaluate((e) => e.classList.contains("session-rail-collapsed")), size.width < 1100, `${size.name}: the rail folds only on a narrow window`);
      const side = await checkDetails(page, size, "approval");
      await checkLayout(page, size, "approval", ["appHeader", "sessionHeader", "rail", "tabs", "transcript", "approval", "composer", side].filter(Boolean));
      // The card's title, status and Edit button can be reached (the card scrolls within its slot when short of room).
      for (const sel of ["#approval-title", "[data-testid=spec-status]", "[data-testid=edit-spec]", "[data-testid=approve]"]) {
        const target = card.locator(sel).first();
        await target.scrollIntoViewIfNeeded();
        const covered = await target.evaluate((el) => {
          const r = el.getBoundingClientRect();
          const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
          return top && (el === top || el.contains(top)) ? null : `${top?.tagName}.${top?.className}`;
        });
        assert.equal(covered, null, `${size.name}: ${sel} in the approval card is not covered`);
      }

      // A session with changes: Chat, then Changes with its file list and diff at full height.
      await openSession(page, url, changed.id, size);
      await page.locator("[data-testid=composer]").waitFor();
      await checkLayout(page, size, "chat", ["appHeader", "sessionHeader", "rail", "tabs", "transcript", "composer", side].filter(Boolean));
      await page.locator("[data-testid=tab-changes]").click();
      await until("12 changed files", async () => (await page.locator("[data-testid=diff-file]").count()) === 12, 30_000);
      await page.locator("[data-testid=diff-viewer] .diff-table").first().waitFor();
      const m = await checkLayout(page, size, "changes", ["appHeader", "sessionHeader", "rail", "tabs", "diffFiles", "diffViewer", side].filter(Boolean));
      assert.equal(await page.locator("[data-testid=composer]").isVisible(), false, `${size.name}: the composer belongs to the Chat tab`);
      const panel = await page.locator("[data-testid=diff-panel]").boundingBox();
      assert.ok(panel.height >= 0.6 * size.height, `${size.name}: the diff takes ${Math.round(panel.height)} px of ${size.height} (at least 60%)`);
      assert.ok(m.diffFiles.box.height >= 96, `${size.name}: the file list has room (${Math.round(m.diffFiles.box.height)} px)`);
      // Gates: the panel fills the tab too.
      await page.locator("[data-testid=tab-gates]").click();
      await page.locator("[data-testid=gates-panel]").waitFor();
      await checkLayout(page, size, "gates", ["appHeader", "sessionHeader", "rail", "tabs", "gates", side].filter(Boolean));
      await page.locator("[data-testid=tab-chat]").click();
    }

    // The preview: docked beside the chat (the default on a wide window), then as its own tab.
    await page.setViewportSize({ width: SIZES[0].width, height: SIZES[0].height });
    await page.goto(`${url}#/session/${encodeURIComponent(changed.id)}`);
    await page.locator("[data-testid=preview-button]").click();
    await page.locator('[data-testid=preview-state][data-state="ready"]').waitFor({ timeout: 90_000 });
    for (const size of SIZES) {
      await page.setViewportSize({ width: size.width, height: size.height });
      const card = page.locator("[data-testid=preview-card]");
      await card.waitFor();
      if ((await card.getAttribute("data-layout")) !== "split") await switchLayout(page, "split");
      await page.locator("[data-testid=split-divider]").waitFor();
      // Docked, the preview takes the details' column: they open from Details in the header.
      assert.equal(await page.locator("[data-testid=session-side]").count(), 0, `${size.name}: the details leave their column to the preview`);
      await page.locator("[data-testid=details-button]").waitFor();
      await checkLayout(page, size, "preview-split", ["appHeader", "sessionHeader", "rail", "tabs", "transcript", "composer", "preview"]);
      // Beside the docked preview the composer's pickers and Send wrap inside it, never under the preview.
      const composerBox = await page.locator("[data-testid=composer]").boundingBox();
      for (const part of [".composer-model", ".composer-send"]) {
        const box = await page.locator(`[data-testid=composer] ${part}`).boundingBox();
        assert.ok(box && box.x + box.width <= composerBox.x + composerBox.width + 1, `${size.name}: ${part} lies inside the composer beside the preview: ${JSON.stringify(box)} in ${JSON.stringify(composerBox)}`);
      }
      await checkToolbar(page, size, "split");

      await switchLayout(page, "tab");
      await page.locator("[data-testid=tab-preview][aria-selected=true]").waitFor();
      const side = size.width >= 1100 ? "side" : null;
      await checkLayout(page, size, "preview-tab", ["appHeader", "sessionHeader", "rail", "tabs", "preview", side].filter(Boolean));
      await checkToolbar(page, size, "tab");
      const box = await page.locator("[data-testid=preview-card]").boundingBox();
      assert.ok(box.height >= 0.6 * size.height, `${size.name}: the preview tab takes ${Math.round(box.height)} px of ${size.height}`);
    }

    // Full screen from the docked card (its toolbar's More menu at this width) covers the window; Esc puts it back.
    await page.setViewportSize({ width: SIZES[0].width, height: SIZES[0].height });
    await switchLayout(page, "split");
    await page.locator("[data-testid=preview-more]").click();
    await page.locator("[data-testid=preview-menu-fullscreen]").click();
    await page.locator("[data-testid=preview-card][data-layout=full]").waitFor();
    const full = await page.locator("[data-testid=preview-card]").boundingBox();
    assert.deepEqual([full.x, full.y, full.width, full.height].map(Math.round), [0, 0, SIZES[0].width, SIZES[0].height], "full screen fills the window");
    await page.screenshot({ path: path.join(ARTIFACTS, "layout-1440x900-preview-full.png") });
    await page.keyboard.press("Escape");
    await page.locator("[data-testid=preview-card][data-layout=split]").waitFor();

    // The divider: the keyboard moves it, and the width is remembered across a reload.
    const divider = page.locator("[data-testid=split-divider]");
    const before = Number(await divider.getAttribute("aria-valuenow"));
    await divider.focus();
    await page.keyboard.press("Shift+ArrowLeft");
    const widened = Number(await divider.getAttribute("aria-valuenow"));
    assert.ok(widened > before, `ArrowLeft widens the preview (${before} → ${widened})`);
    // Dragged 100 px to the right, the preview narrows.
    const grip = await divider.boundingBox();
    await page.mouse.move(grip.x + grip.width / 2, grip.y + grip.height / 2);
    await page.mouse.down();
    await page.mouse.move(grip.x + grip.width / 2 + 50, grip.y + grip.height / 2, { steps: 3 });
    await page.mouse.move(grip.x + grip.width / 2 + 100, grip.y + grip.height / 2, { steps: 3 });
    await page.mouse.up();
    const dragged = Number(await divider.getAttribute("aria-valuenow"));
    assert.ok(dragged < widened - 3, `dragging right narrows the preview (${widened} → ${dragged})`);
    await page.reload();
    await page.locator("[data-testid=preview-button]").click();
    assert.equal(Number(await page.locator("[data-testid=split-divider]").getAttribute("aria-valuenow")), dragged, "the width is remembered");

    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });
});

/** Switches the preview between docked and tab, through the toolbar or its More menu. */
async function switchLayout(page, layout) {
  const card = page.locator("[data-testid=preview-card]");
  const inline = page.locator("[data-testid=preview-layout]");
  // Wait until the toolbar has settled on one of its two forms (its container query follows the
  // card's width, which moves with the viewport and the split): checking at once may see neither.
  await page.locator("[data-testid=preview-layout]:visible, [data-testid=preview-more]:visible").first().waitFor();
  if (await inline.isVisible()) await inline.click();
  else {
    await page.locator("[data-testid=preview-more]").click();
    await page.locator("[data-testid=preview-menu-layout]").click();
  }
  await page.locator(`[data-testid=preview-card][data-layout=${layout}]`).waitFor();
  return card;
}

/** The preview's toolbar is one row whose controls all lie inside the card. */
async function checkToolbar(page, size, layout) {
  const result = await page.evaluate(() => {
    const bar = document.querySelector(".preview-toolbar");
    const card = document.querySelector("[data-testid=preview-card]").getBoundingClientRect();
    const items = [...bar.children].filter((e) => e.getClientRects().length > 0).map((e) => e.getBoundingClientRect());
    const middles = items.map((r) => r.top + r.height / 2);
    const outside = items.filter((r) => r.right > card.right + 1 || r.left < card.left - 1).length;
    return { spread: Math.max(...middles) - Math.min(...middles), outside, height: bar.getBoundingClientRect().height };
  });
  assert.ok(result.spread < 4 && result.height < 48, `${size.name} ${layout}: the preview toolbar does not wrap: ${JSON.stringify(result)}`);
  assert.equal(result.outside, 0, `${size.name} ${layout}: every toolbar control lies inside the card`);
}
