// The session as a git checkout of its own (issue 33, item 1), with the real agent CLIs: in a turn of
// `kiln serve` on a repository written here (no kiln.toml), claude's Bash tool and codex's
// exec_command run `git rev-parse`, `git status`, `git log`, then change a file and run `git diff`
// and `git commit`. git answers for the session (its working copy, its branch kiln/<id>, the
// repository's history), the commit lands on the session's branch, and the user's repository is
// unchanged byte for byte. And "Open claude here" in the Terminal tab: the user's own claude (their home,
// onboarded, the repository trusted) starts at its prompt in the session's checkout, with no first-run
// question. Runs in a loopback-only network namespace (scripts/test).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ARTIFACTS, TEST_TIMEOUT, cleanUp, newPage, startServer, stopServer, tempDir } from "./harness.mjs";
import { CLI_DIR, MODEL_SERVER, api, prepare, startModelServer } from "./agents.mjs";
import { codexHome, explain, git, homeWithCaches, strip, until } from "./repositories.mjs";

const LOOK = "git rev-parse --show-toplevel; git branch --show-current; git status --porcelain; git log --format=%s";
const COMMIT = "git diff --stat; git add -A && git commit -qm 'Greet louder' && git log -n 2 --format=%s";

/** A small package with two commits, as a user's repository is. */
function repository() {
  const dir = path.join(tempDir("kiln-checkout-"), "greet");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "greet", version: "1.0.0" }, null, 2));
  fs.writeFileSync(path.join(dir, "greet.js"), 'export const greet = (n) => `hello ${n}`;\n');
  git(dir, "init", "-q", "-b", "main");
  git(dir, "add", "-A");
  git(dir, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-qm", "first: greet");
  fs.writeFileSync(path.join(dir, "README.md"), "# greet\n");
  git(dir, "add", "-A");
  git(dir, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-qm", "second: a readme");
  return dir;
}

/** Every file under `dir` with its bytes: what "unchanged byte for byte" compares. */
function bytes(dir) {
  const out = {};
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = e.isSymbolicLink() ? `-> ${fs.readlinkSync(p)}` : fs.readFileSync(p).toString("base64");
    }
  };
  walk(dir);
  return out;
}

const LOUD = 'export const greet = (n) => `HELLO ${n}`;\n';
const SCRIPTS = {
  claude: [
    { tool: "Bash", arguments: { command: LOOK, description: "Look at the repository" } },
    { tool: "Read", arguments: { file_path: "greet.js" } },
    { tool: "Write", arguments: { file_path: "greet.js", content: LOUD } },
    { tool: "Bash", arguments: { command: COMMIT, description: "Commit the change" } },
  ],
  codex: [
    { tool: "exec_command", arguments: { cmd: LOOK } },
    { tool: "exec_command", arguments: { cmd: `cat > greet.js <<'KILN_EOF'\n${LOUD}KILN_EOF` } },
    { tool: "exec_command", arguments: { cmd: COMMIT } },
  ],
};

describe("git in a session, with the real agent CLIs", { timeout: TEST_TIMEOUT * 6 }, () => {
  before(prepare({ clis: ["claude", "codex"], binaries: [MODEL_SERVER] }));
  after(cleanUp);

  for (const driver of ["claude", "codex"]) {
    test(`${driver}: git status, diff, log and commit answer for the session`, { timeout: TEST_TIMEOUT * 3 }, async (t) => {
      const model = await startModelServer([
        { text: JSON.stringify({ modules: [], title: "Greet louder", role: "engineer", reason: "One small change." }) },
        ...SCRIPTS[driver],
        { text: "Greeted louder and committed it.\n\nHANDOFF: none - done" },
        { text: "Checked.\n\nREVIEW: pass - fine" },
        { text: "Checked.\n\nREVIEW: pass - fine" },
      ]);
      t.after(() => stopServer(model.child));
      const workspace = repository();
      const env = { HOME: homeWithCaches(), ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "sk-ant-test" };
      if (driver === "codex") Object.assign(env, { CODEX_HOME: codexHome(t, CLI_DIR, model.url), SCRIPTED_MODEL_KEY: "test-key" });
      const { url, child } = await startServer({ workspace, env });
      t.after(() => stopServer(child));
      await api(url, "update_settings", { defaultDriver: driver, [`${driver}Path`]: path.join(CLI_DIR, "node_modules/.bin", driver) });
      // Opening the workspace adds `.kiln/` to .git/info/exclude, once; nothing of the repository changes after.
      const hostGit = bytes(path.join(workspace, ".git"));
      const { id } = await api(url, "create_session", { brief: "Greet louder" });
      const why = () => explain(url, id);
      await api(url, "send_message", { sessionId: id, text: "Greet louder, and commit it" });
      await until("the turn to end", async () => {
        const s = await api(url, "get_session", { sessionId: id });
        if (s.state === "blocked") throw new Error(`the session is blocked\n${await why()}`);
        return !s.running && s.checkpoints.length > 1 && s.state !== "running";
      }, 240_000, why);

      const work = path.join(workspace, ".kiln/sessions", id, "workspace");
      const outputs = (await api(url, "get_transcript", { sessionId: id })).filter((e) => e.kind === "tool").map((e) => strip(e.text)).join("\n");
      // What the agent's git saw: the session's copy, its branch, a clean start on the repository's history…
      assert.ok(outputs.includes(work), `git's top level is the session's copy:\n${outputs}`);
      assert.ok(outputs.includes(`kiln/${id.slice(0, 8)}`), `the session's branch:\n${outputs}`);
      assert.ok(outputs.includes("second: a readme") && outputs.includes("first: greet"), `the repository's history:\n${outputs}`);
      assert.ok(!/could not open directory|Permission denied|not a git repository/.test(outputs), outputs);
      // …then its own change, committed on the session's branch.
      assert.match(outputs, /greet\.js \| 2/);
      assert.match(outputs, /Greet louder\s+second: a readme/);
      assert.equal(git(work, "log", "-1", "--format=%s").trim(), "Greet louder");
      assert.equal(git(work, "status", "--porcelain").trim(), "");
      // The user's repository: not one byte changed, its branch where it was.
      assert.deepEqual(bytes(path.join(workspace, ".git")), hostGit);
      assert.equal(git(workspace, "log", "-1", "--format=%s").trim(), "second: a readme");
      assert.equal(fs.readFileSync(path.join(workspace, "greet.js"), "utf8"), 'export const greet = (n) => `hello ${n}`;\n');

      const { page, errors } = await newPage(t);
      await page.setViewportSize({ width: 1440, height: 900 });
      await page.goto(url);
      await page.goto(new URL(`#/session/${id}`, url).href);
      await page.getByText("Greet louder", { exact: false }).first().waitFor();
      await page.screenshot({ path: path.join(ARTIFACTS, `checkout-${driver}-1440.png`) });
      assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
    });
  }

  test("Open claude here: the user's own claude, past onboarding, in the session's checkout", { timeout: TEST_TIMEOUT * 2 }, async (t) => {
    const model = await startModelServer([]);
    t.after(() => stopServer(model.child));
    const workspace = repository();
    // The home of a user who has used Claude Code: onboarded, this repository trusted, their key approved.
    const home = homeWithCaches();
    const key = "sk-ant-test-terminal-0123456789";
    fs.writeFileSync(
      path.join(home, ".claude.json"),
      JSON.stringify({
        hasCompletedOnboarding: true,
        projects: { [fs.realpathSync(workspace)]: { hasTrustDialogAccepted: true } },
        customApiKeyResponses: { approved: [key.slice(-20)], rejected: [] },
      }),
    );
    const env = { HOME: home, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: key };
    const { url, child } = await startServer({ workspace, env });
    t.after(() => stopServer(child));
    await api(url, "update_settings", { claudePath: path.join(CLI_DIR, "node_modules/.bin/claude") });
    const { id } = await api(url, "create_session", { brief: "Look around" });
    await until("the setup", async () => (await api(url, "get_session", { sessionId: id })).setup !== "running", 120_000, () => explain(url, id));

    const { page, errors } = await newPage(t);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(url);
    await page.goto(new URL(`#/session/${id}`, url).href);
    await page.locator("[data-testid=tab-terminal]").click();
    await page.locator("[data-testid=open-claude]").click();
    const screen = () =>
      page.evaluate(() => (document.querySelector("[data-testid=terminal-screen] .xterm-rows")?.textContent ?? "").replaceAll("\u00a0", " "));
    // Its prompt box, and the status line under it: the CLI is ready for the user's words.
    await until("claude's prompt", async () => /auto mode|shift\+tab|\? for shortcuts/i.test(await screen()), 60_000, screen);
    const shown = await screen();
    assert.ok(shown.includes(`sessions/${id}/workspace`), `claude runs in the session's checkout:\n${shown}`);
    assert.doesNotMatch(shown, /trust|Choose the text style|Do you want to use this API key|Not logged in|login/i, "no first-run question");
    await page.screenshot({ path: path.join(ARTIFACTS, "terminal-claude-1440.png") });
    await page.setViewportSize({ width: 900, height: 700 });
    await page.screenshot({ path: path.join(ARTIFACTS, "terminal-claude-900.png") });
    await page.locator("[data-testid=terminal-stop]").click();
    await page.locator("[data-testid=terminal-exit]").waitFor();
    assert.deepEqual(errors.map(String), [], "no uncaught errors in the page");
  });
});
