// Kiln killed during a turn (issue 33, item 3): `kiln serve` runs the real claude CLI on a
// repository written here (no kiln.toml), whose Bash tool runs a command printing every second.
// The server is killed with SIGKILL: the page says it is reconnecting and pauses its actions,
// and nothing of the old turn (claude, its command) is left running, before and when the
// restarted server offers Retry. Runs in a loopback-only network namespace (scripts/test).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ARTIFACTS, TEST_TIMEOUT, cleanUp, newPage, startServer, stopServer, tempDir } from "./harness.mjs";
import { CLI_DIR, MODEL_SERVER, api, prepare, startModelServer } from "./agents.mjs";
import { explain, git, homeWithCaches, until } from "./repositories.mjs";

const MARK = `kiln-crash-tick-${process.pid}`;

/** A small Node package in git, as a user's repository is. */
function repository() {
  const dir = path.join(tempDir("kiln-crash-"), "ticker");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "ticker", version: "1.0.0" }, null, 2));
  fs.writeFileSync(path.join(dir, "index.js"), "exports.tick = (n) => n + 1;\n");
  git(dir, "init", "-q", "-b", "main");
  git(dir, "add", "-A");
  git(dir, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-qm", "ticker");
  return dir;
}

/** Every process whose working directory is under `dir`, or whose command line holds MARK. */
function leftIn(dir) {
  const found = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, "utf8").replace(/\0/g, " ").trim();
      let cwd = "";
      try {
        cwd = fs.readlinkSync(`/proc/${name}/cwd`);
      } catch {
        // A process of another user, or one that just ended.
      }
      const marked = cmdline.includes(MARK);
      if (cwd.startsWith(dir) || marked) found.push(`${name}${marked ? " [the ticking command]" : ""} (${cmdline.slice(0, 120)}) in ${cwd}`);
    } catch {
      // Ended while read.
    }
  }
  return found;
}

describe("Kiln killed during a turn", { timeout: TEST_TIMEOUT * 3 }, () => {
  before(prepare({ clis: ["claude"], binaries: [MODEL_SERVER] }));
  after(cleanUp);

  test("kill -9 mid-turn: the page reconnects, and nothing of the old turn runs when Retry appears", { timeout: TEST_TIMEOUT * 3 }, async (t) => {
    const model = await startModelServer([
      { text: JSON.stringify({ modules: [], title: "Tick", role: "engineer", reason: "One small change." }) },
      {
        tool: "Bash",
        arguments: { command: `echo ${MARK}; for i in $(seq 1 300); do echo "tick $i"; sleep 1; done`, description: "Tick every second" },
      },
      { text: "Ticked.\n\nHANDOFF: none - ticked" },
    ]);
    t.after(() => stopServer(model.child));
    const workspace = repository();
    const env = { HOME: homeWithCaches(), ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "sk-ant-test" };
    const first = await startServer({ workspace, env });
    t.after(() => stopServer(first.child));
    await api(first.url, "update_settings", { defaultDriver: "claude", claudePath: path.join(CLI_DIR, "node_modules/.bin/claude") });
    const { id } = await api(first.url, "create_session", { brief: "Make the ticker tick" });
    const workdir = path.join(workspace, ".kiln/sessions", id, "workspace");
    const why = () => explain(first.url, id);
    await api(first.url, "send_message", { sessionId: id, text: "Make the ticker tick" });

    const { page, errors } = await newPage(t);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(first.url);
    await page.goto(new URL(`#/session/${id}`, first.url).href);
    await page.locator("[data-testid=running]").waitFor();
    // The turn's command is ticking in the session's working copy.
    await until("the turn's command to run", async () => leftIn(workdir).some((p) => p.includes("[the ticking command]")), 120_000, async () => `${await why()}\nprocesses in the working copy:\n${leftIn(workdir).join("\n")}`);

    first.child.kill("SIGKILL");
    await until("kiln serve to end", async () => first.child.exitCode !== null || first.child.signalCode !== null, 10_000, async () => "");
    // The page says the server is away and offers nothing that cannot reach it.
    const away = page.locator(".reconnecting");
    await away.waitFor();
    assert.match(await away.innerText(), /Reconnecting to Kiln/);
    assert.equal(await page.locator("main.app-main").getAttribute("inert"), "", "the page's actions are paused");
    await page.screenshot({ path: path.join(ARTIFACTS, "crash-reconnecting-1440.png") });
    await page.setViewportSize({ width: 900, height: 700 });
    await page.screenshot({ path: path.join(ARTIFACTS, "crash-reconnecting-900.png") });
    // Nothing Kiln started outlives it: claude and its ticking command are gone at once.
    await until("the old turn's processes to end", async () => leftIn(workdir).length === 0, 10_000, async () => leftIn(workdir).join("\n"));

    // Kiln again, on the same workspace: the page (on the new link) offers Retry.
    const second = await startServer({ workspace, env });
    t.after(() => stopServer(second.child));
    await page.goto(second.url);
    await page.goto(new URL(`#/session/${id}`, second.url).href);
    const retry = page.locator("[data-testid=retry-turn]");
    await retry.waitFor({ timeout: 60_000 });
    assert.deepEqual(leftIn(workdir), [], "nothing of the old turn runs when Retry appears");
    assert.equal(await page.locator(".reconnecting").count(), 0);
    // The cut-short turn stands as its own entry, in view, never folded into notes (issue 33, item 5).
    const cut = page.getByText(/Kiln stopped while .*cut short/).first();
    await cut.waitFor();
    assert.ok(await cut.isVisible(), "the cut-short turn is in view");
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.screenshot({ path: path.join(ARTIFACTS, "crash-retry-1440.png") });
    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });
});
