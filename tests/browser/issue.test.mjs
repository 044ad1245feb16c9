// End-to-end test of a session from a GitHub issue in `kiln serve` (Chromium, playwright-core),
// against the GitHub double run as its own process with seeded issues: New session → "From a
// GitHub issue" lists the repository's open issues (not its closed one), a pick shows the
// issue's title before creating, the session's brief carries the issue's body and comments, and
// the session's header links to the issue.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { GITHUB_DOUBLE, api, prepare, startGithub } from "./agents.mjs";
import { ARTIFACTS, TEST_TIMEOUT, cleanUp, copyExample, newPage, startServer, stopServer, tempDir } from "./harness.mjs";

const TOKEN = "ghp_kilnBrowserIssue0123456789abcdef";

/** Starts the GitHub double with `issues` seeded; resolves with its URL. */
function startGithubWith(issues) {
  const file = path.join(tempDir("kiln-github-issues-"), "issues.json");
  fs.writeFileSync(file, JSON.stringify(issues));
  return startGithub(["--token", TOKEN, "--repo", "acme/shop", "--issues", file]);
}

describe("A session from a GitHub issue in kiln serve", () => {
  before(prepare({ binaries: [GITHUB_DOUBLE] }));
  after(cleanUp);

  test("pick an open issue, see its title, create: the brief holds the issue and the header links it", { timeout: TEST_TIMEOUT }, async (t) => {
    const github = await startGithubWith([
      { repo: "acme/shop", title: "Old and done", closed: true },
      {
        repo: "acme/shop",
        title: "The cart forgets its total",
        body: "In @shop/cart, removing an item resets the total to zero.",
        author: "alice",
        labels: ["bug"],
        comments: [{ author: "bob", body: "It happens on the second removal only." }],
      },
      { repo: "acme/shop", title: "Dark mode for the catalog", author: "carol" },
    ]);
    t.after(() => stopServer(github.child));
    const workspace = copyExample();
    const { url, child } = await startServer({ workspace });
    t.after(() => stopServer(child));
    await api(url, "update_settings", {
      plannerAgent: false,
      deliveryRepository: "acme/shop",
      deliveryApiUrl: github.url,
      deliveryToken: TOKEN,
    });

    const { page, errors } = await newPage(t);
    await page.goto(`${url}#/new`);
    await page.locator("[data-testid=from-issue]").click();
    const rows = page.locator("[data-testid=issue-row]");
    await rows.first().waitFor();
    const listed = await rows.allTextContents();
    assert.equal(listed.length, 2, `open issues only: ${listed}`);
    assert.ok(listed[0].includes("Dark mode for the catalog"), `newest first: ${listed}`);
    assert.ok(!listed.some((row) => row.includes("Old and done")), "a closed issue is not offered");

    await rows.filter({ hasText: "The cart forgets its total" }).click();
    await page.locator("[data-testid=issue-title]", { hasText: "#2 The cart forgets its total" }).waitFor();
    await page.locator("[data-testid=brief]").fill("Keep the fix small.");
    // No agent is set up here: the brief waits in the session's composer.
    await page.locator("[data-testid=start-now]").uncheck();
    await page.screenshot({ path: path.join(ARTIFACTS, "issue-picker.png"), fullPage: true });
    await page.locator("[data-testid=create-session]").click();
    await page.waitForURL(/#\/session\/[^/?]+$/);

    const link = page.locator("[data-testid=session-issue]");
    await link.waitFor();
    assert.equal(await link.textContent(), "acme/shop#2");
    assert.equal(await link.getAttribute("href"), `${github.url}/acme/shop/issues/2`);
    assert.equal(await page.locator("#session-title").textContent(), "The cart forgets its total");
    await page.screenshot({ path: path.join(ARTIFACTS, "issue-session.png"), fullPage: true });

    const id = decodeURIComponent(new URL(page.url()).hash.split("/").pop());
    const session = await api(url, "get_session", { sessionId: id });
    assert.ok(session.brief.startsWith("Keep the fix small.\n\nGitHub issue acme/shop#2: The cart forgets its total"), session.brief);
    assert.ok(session.brief.includes("removing an item resets the total to zero"), session.brief);
    assert.ok(session.brief.includes("@bob on ") && session.brief.includes("It happens on the second removal only."), session.brief);
    assert.ok(!session.brief.includes(TOKEN));
    assert.deepEqual(session.issue, { url: `${github.url}/acme/shop/issues/2`, number: 2, repo: "acme/shop" });
    assert.deepEqual(errors, []);
  });
});
