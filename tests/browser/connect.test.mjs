// Connecting to `kiln serve` in Chromium. Self-hosted: the page asks for an access token,
// refuses a wrong one, connects with one made by `kiln token create`, and a revoked token's
// browser session sends the page back to the Connect screen. The cookie it gets is HttpOnly.
// Loopback: the page opened without the printed link asks for the server's token; the link
// connects and leaves the address bar clean; the token file (0600) connects a pasted token.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ARTIFACTS, KILN, TEST_TIMEOUT, cleanUp, copyExample, launchBrowser, newPage, startServer, stopServer } from "./harness.mjs";

function kilnToken(configDir, ...args) {
  return execFileSync(KILN, ["token", ...args], { env: { ...process.env, KILN_CONFIG_DIR: configDir }, encoding: "utf8" }).trim();
}

describe("connecting to kiln serve in Chromium", { timeout: TEST_TIMEOUT * 2 }, () => {
  before(launchBrowser);
  after(cleanUp);

  test("connect with a token, lose the connection when it is revoked", { timeout: TEST_TIMEOUT }, async (t) => {
    const workspace = copyExample();
    const { url, child, configDir } = await startServer({ workspace, args: ["--mode", "self-hosted"] });
    t.after(() => stopServer(child));
    const { page, errors } = await newPage(t);

    await page.goto(url);
    await page.locator("[data-testid=connect-screen]").waitFor();
    assert.equal(await page.locator("[data-testid=new-session]").count(), 0, "nothing of the workspace shows before connecting");

    // A wrong token is refused with the server's code.
    await page.locator("[data-testid=connect-token]").fill("kiln_not-a-real-token");
    await page.locator("[data-testid=connect-submit]").click();
    await page.locator("[data-testid=connect-error]").waitFor();
    assert.match(await page.locator("[data-testid=connect-error]").innerText(), /TOKEN_INVALID|unknown, expired or revoked/);
    await page.screenshot({ path: path.join(ARTIFACTS, "connect-refused.png") });

    // A real one opens the dashboard, marked self-hosted.
    const token = kilnToken(configDir, "create", "--name", "browser");
    assert.match(token, /^kiln_[A-Za-z0-9_-]{43}$/);
    await page.locator("[data-testid=connect-token]").fill(token);
    await page.locator("[data-testid=connect-submit]").click();
    await page.locator("[data-testid=new-session]").first().waitFor();
    assert.match(await page.locator("header").innerText(), /self-hosted/i);
    assert.equal(await page.locator("[data-testid=switch-workspace]").count(), 0, "a self-hosted server serves one workspace");
    await page.screenshot({ path: path.join(ARTIFACTS, "connect-dashboard.png") });

    const cookies = await page.context().cookies();
    const session = cookies.find((c) => c.name.startsWith("kiln_session_"));
    assert.ok(session, `a session cookie: ${JSON.stringify(cookies)}`);
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, "Strict");
    assert.equal(session.secure, true);
    assert.equal(await page.evaluate(() => document.cookie), "", "the page's script cannot read the cookie");

    // Revoking the token ends the browser session: the next call returns to Connect.
    const id = kilnToken(configDir, "list").split(/\s+/)[0];
    kilnToken(configDir, "revoke", id);
    await page.reload();
    await page.locator("[data-testid=connect-screen]").waitFor();
    assert.deepEqual(errors, [], "no uncaught page errors");
  });

  test("loopback: the printed link connects, a page without it asks for the server's token", { timeout: TEST_TIMEOUT }, async (t) => {
    const workspace = copyExample();
    const { url: link, child, configDir } = await startServer({ workspace });
    t.after(() => stopServer(child));
    const token = new URL(link).searchParams.get("token");
    const base = new URL("/", link).href;
    assert.match(token ?? "", /^[A-Za-z0-9_-]{43}$/, `the link holds the server's token: ${link}`);

    // The token's file, the user's alone, holds the same token.
    const file = path.join(configDir, `loopback-${new URL(link).port}.token`);
    assert.equal(fs.readFileSync(file, "utf8").trim(), token);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);

    // Without the link: the Connect screen, nothing of the workspace.
    const { page, errors } = await newPage(t);
    await page.goto(base);
    await page.locator("[data-testid=connect-screen]").waitFor();
    assert.match(await page.locator("[data-testid=connect-screen]").innerText(), /Server token/);
    assert.equal(await page.locator("[data-testid=new-session]").count(), 0, "nothing of the workspace shows before connecting");
    for (const [width, height] of [[1440, 900], [900, 700], [390, 844]]) {
      await page.setViewportSize({ width, height });
      await page.screenshot({ path: path.join(ARTIFACTS, `connect-loopback-${width}.png`) });
    }
    await page.setViewportSize({ width: 1280, height: 800 });

    // The token from the file, pasted, connects.
    await page.locator("[data-testid=connect-token]").fill(fs.readFileSync(file, "utf8").trim());
    await page.locator("[data-testid=connect-submit]").click();
    await page.locator("[data-testid=new-session]").first().waitFor();

    // The link connects a fresh browser, and its token leaves the address bar.
    const fresh = await newPage(t);
    await fresh.page.goto(link);
    await fresh.page.locator("[data-testid=new-session]").first().waitFor();
    assert.equal(new URL(fresh.page.url()).search, "", `the token stays in the address bar: ${fresh.page.url()}`);
    await fresh.page.reload();
    await fresh.page.locator("[data-testid=new-session]").first().waitFor();

    // A link with another token says so.
    const stale = await newPage(t);
    await stale.page.goto(`${base}?token=${"A".repeat(43)}`);
    await stale.page.locator("[data-testid=connect-note]").waitFor();
    assert.match(await stale.page.locator("[data-testid=connect-note]").innerText(), /restarted since/);
    assert.deepEqual([...errors, ...fresh.errors, ...stale.errors], [], "no uncaught page errors");
  });
});
