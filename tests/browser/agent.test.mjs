// End-to-end test of a real agent turn: `kiln serve` drives the real `claude` CLI (pinned,
// installed by scripts/deps) against the scripted model server, and Chromium watches it.
// Start a session on examples/shop, see the planner agent's answer, approve the
// module's specification, watch the turn stream into the chat and end in a handoff, and
// see tokens and cost on the dashboard. It must run in a loopback-only network namespace
// (scripts/test runs this stage with `unshare -n`) and refuses to run anywhere else.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ARTIFACTS, TEST_TIMEOUT, cleanUp, copyExample, newPage, startServer, stopServer, tempDir } from "./harness.mjs";
import { CLI_DIR, MODEL_SERVER, api, prepare, startModelServer } from "./agents.mjs";

const BRIEF = "Add a wishlist to @shop/catalog";
const TURN_TEXT = "Added a wishlist heart to each product card.";

describe("a real agent turn in kiln serve", { timeout: TEST_TIMEOUT * 2 }, () => {
  before(prepare({ clis: ["claude"], binaries: [MODEL_SERVER] }));
  after(cleanUp);

  test("plan, approve, watch a claude turn stream and hand off, see tokens and cost", { timeout: TEST_TIMEOUT * 2 }, async (t) => {
    const model = await startModelServer([
      // The planner agent (a read-only claude turn): it answers JSON.
      { text: '{"modules": [], "title": "Wishlist for the catalog", "role": "frontend-engineer", "reason": "The wishlist starts on the product cards."}' },
      // The frontend engineer's turn, after the approval: it writes a file (a path relative
      // to the session's working copy, where the turn runs), since a turn that changes
      // nothing has nothing to review.
      { tool: "Write", arguments: { file_path: "modules/catalog/src/client/wishlist.js", content: "export const wishlist = new Set();\n" } },
      { text: `${TURN_TEXT}\n\nHANDOFF: none - the wishlist is on the catalog screen` },
      // Its read-only auto-review.
      { text: "Correctness, security, compatibility, lifecycle, tests and UI checked.\n\nREVIEW: pass - the wishlist works" },
    ]);
    t.after(() => stopServer(model.child));

    // A workspace whose catalog specification is a draft: building it needs approval.
    const workspace = copyExample();
    const spec = path.join(workspace, "modules/catalog/SPEC.md");
    fs.writeFileSync(spec, fs.readFileSync(spec, "utf8").replace("status: approved", "status: draft"));
    const home = tempDir("kiln-agent-home-");
    const { url, child } = await startServer({
      workspace,
      env: { HOME: home, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "sk-ant-test" },
    });
    t.after(() => stopServer(child));
    await api(url, "update_settings", { defaultDriver: "claude", claudePath: path.join(CLI_DIR, "node_modules/.bin/claude") });

    const { page, errors } = await newPage(t);
    await page.goto(url);
    await page.locator("[data-testid=new-session]").first().click();
    await page.locator("[data-testid=brief]").fill(BRIEF);
    await page.locator("[data-testid=create-session]").click();

    // The planner agent answered; the first message waits on the unapproved specification.
    const transcript = page.locator("[data-testid=transcript]");
    await transcript.getByText("Planner agent", { exact: false }).waitFor({ timeout: 90_000 });
    const card = page.locator("[data-testid=approval-card]");
    await card.waitFor({ timeout: 90_000 });
    await page.locator("[data-testid=approve]").first().click();

    // The turn streams in and ends with its handoff; the session is ready for review.
    await page.locator('[data-testid=entry][data-kind=agent]').getByText(TURN_TEXT).waitFor({ timeout: 120_000 });
    const handoffs = page.locator('[data-testid=entry][data-kind=handoff]');
    await handoffs.filter({ hasText: /review\s*→\s*pass/i }).waitFor({ timeout: 120_000 });
    // The turn handed back to the user: "→ you".
    assert.match(await handoffs.first().innerText(), /→ you/);
    await page.getByText(/review passed/i).first().waitFor();
    // Approval handed the turn to the waiting role; nothing waits any more.
    assert.equal(await page.locator("[data-testid=pending-role]").count(), 0);
    await page.screenshot({ path: path.join(ARTIFACTS, "agent-turn.png"), fullPage: true });
    assert.ok(fs.readFileSync(spec.replace(workspace, path.join(workspace, ".kiln/sessions", page.url().split("/").pop(), "workspace")), "utf8").includes("status: approved"));

    // Tokens and a provider-reported cost on the dashboard.
    await page.goto(url);
    const usage = page.locator("[data-testid=row-usage]").first();
    await usage.waitFor();
    const text = await usage.innerText();
    assert.match(text, /\d+(\.\d+)?k? tok/);
    assert.match(text, /\$\d/);
    await page.screenshot({ path: path.join(ARTIFACTS, "agent-dashboard.png"), fullPage: true });
    assert.deepEqual(errors, []);
  });
});
