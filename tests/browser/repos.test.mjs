// Any repository, out of the box (issue 13): for each repository fixture in tests/fixtures/repos
// (pnpm + vitest projects, npm + jest, a Cargo workspace, a Python src layout, a Go module, a
// Makefile project), all with no kiln.toml and nothing configured, a bug fix goes from chat to
// delivery: `kiln serve` on a fresh copy of the fixture with a bare `origin`, a real agent CLI
// (claude, or codex for go-module and makefile) against the scripted model server edits the buggy
// source file, adds a test and runs the repository's own tests; the turn hands off to review, the
// gates run the repository's own runner (detected, not configured) and pass, the auto-review
// passes, and git-pr delivery pushes a branch whose diff against main is exactly those two files.
// A screenshot of each session page goes to tests/artifacts/repos-<name>.png.
//
// It must run in a loopback-only network namespace (scripts/test runs the browser stage with
// `unshare -n`) after scripts/deps (toolchains, pnpm through corepack, and the node fixtures'
// packages in the machine's caches, tests/fixtures/repos/warm.sh): every install is offline.
// KILN_REPOS=name,name runs only those fixtures.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ARTIFACTS, ROOT, cleanUp, newPage, startServer, stopServer } from "./harness.mjs";
import { CLI_DIR, MODEL_SERVER, api, prepare, startModelServer } from "./agents.mjs";
import { clip, codexHome, explain, git, homeWithCaches, makeRepository, strip, until } from "./repositories.mjs";

const FIXTURES = path.join(ROOT, "tests/fixtures/repos");
const { fixtures } = JSON.parse(fs.readFileSync(path.join(FIXTURES, "fixtures.json"), "utf8"));
/** The agent CLI each fixture's turns run with. */
const DRIVER = {
  "pnpm-vitest": "claude",
  "npm-jest": "claude",
  "cargo-workspace": "claude",
  "python-src": "claude",
  "go-module": "codex",
  makefile: "codex",
};
const ONLY = (process.env.KILN_REPOS ?? "").split(",").filter(Boolean);
/** Planner, turn, setup, gates (twice: after the turn and before delivery), review, delivery. */
const FIXTURE_TIMEOUT = 600_000;
const TO_REVIEW = 420_000;
const TO_DELIVERED = 240_000;

/** What the scripted model answers, in order: the planner agent, the engineer's turn (edit the
 * source, add the test, run the tests, hand off), and the read-only auto-review (a spare one in
 * case a gate sends the turn back, so the failure shows as a gate and not an exhausted script). */
function script(fixture, driver) {
  const planner = {
    text: JSON.stringify({
      modules: [],
      title: `Fix ${fixture.bug}`.slice(0, 80),
      role: "engineer",
      reason: "A bug fix in one place of an ordinary repository: the engineer takes it.",
    }),
  };
  let work;
  if (driver === "claude") {
    // Claude's Write takes a path relative to its working directory (the session's working
    // copy) and wants the file read first; its Bash runs the tests.
    work = [
      { tool: "Read", arguments: { file_path: fixture.sourceFile } },
      { tool: "Write", arguments: { file_path: fixture.sourceFile, content: fixture.fixedSource } },
      { tool: "Read", arguments: { file_path: fixture.testFile } },
      { tool: "Write", arguments: { file_path: fixture.testFile, content: fixture.fixedTest } },
      { tool: "Bash", arguments: { command: fixture.testCommand, description: "Run the tests" } },
    ];
  } else {
    // `exec_command` is the shell tool codex 0.171.0 offers (see contract_cli.rs), run in its
    // workspace-write sandbox from the working copy.
    const write = (file, content) => ({ tool: "exec_command", arguments: { cmd: `cat > ${file} <<'KILN_EOF'\n${content}KILN_EOF` } });
    work = [write(fixture.sourceFile, fixture.fixedSource), write(fixture.testFile, fixture.fixedTest), { tool: "exec_command", arguments: { cmd: fixture.testCommand } }];
  }
  const done = {
    text: `Fixed it in ${fixture.sourceFile} and added a test in ${fixture.testFile}; \`${fixture.testCommand}\` passes.\n\nHANDOFF: none - fixed ${fixture.bug}`,
  };
  const review = {
    text: "Correctness, security, compatibility, lifecycle, tests and UI checked: a one-line fix with a test that fails without it.\n\nREVIEW: pass - the fix is right and tested",
  };
  return [planner, ...work, done, review, review];
}

/** The workspace module holding the fix: the one whose directory is the longest prefix of it. */
function moduleOf(modules, file) {
  const holds = (m) => m.directory === "." || file.startsWith(`${m.directory.replace(/\/$/, "")}/`);
  return modules.filter(holds).sort((a, b) => b.directory.length - a.directory.length)[0];
}

describe("any repository, out of the box: chat to delivery with no kiln.toml", { timeout: FIXTURE_TIMEOUT * fixtures.length }, () => {
  before(async () => {
    const unknown = ONLY.filter((n) => !fixtures.some((f) => f.name === n));
    assert.deepEqual(unknown, [], `KILN_REPOS names fixtures that do not exist: ${unknown.join(", ")}`);
    await prepare({ clis: ["claude", "codex"], binaries: [MODEL_SERVER] })();
  });
  after(cleanUp);

  for (const fixture of fixtures) {
    const driver = DRIVER[fixture.name];
    test(`${fixture.name} (${driver}): fix, own tests, gates, review, git-pr`, { timeout: FIXTURE_TIMEOUT, skip: ONLY.length > 0 && !ONLY.includes(fixture.name) }, async (t) => {
      assert.ok(driver, `no driver chosen for fixture ${fixture.name}: add it to DRIVER`);
      const started = Date.now();
      const took = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;
      const { workspace, remote } = makeRepository(path.join(FIXTURES, `${fixture.name}.sh`));
      assert.ok(!fs.existsSync(path.join(workspace, "kiln.toml")), "the fixture has a kiln.toml");

      const model = await startModelServer(script(fixture, driver));
      t.after(() => stopServer(model.child));
      const env = { HOME: homeWithCaches(), ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "sk-ant-test", GOTOOLCHAIN: "local" };
      if (driver === "codex") Object.assign(env, { CODEX_HOME: codexHome(t, CLI_DIR, model.url), SCRIPTED_MODEL_KEY: "test-key" });
      const { url, child } = await startServer({ workspace, env });
      t.after(() => stopServer(child));

      // Nothing configured but the driver and, as the remote is a local path, the repository's name.
      await api(url, "update_settings", {
        defaultDriver: driver,
        [`${driver}Path`]: path.join(CLI_DIR, "node_modules/.bin", driver),
        deliveryRepository: `fixtures/${fixture.name}`,
      });
      const state = await api(url, "get_state", {});
      const modules = state.workspace?.modules ?? [];
      t.diagnostic(`workflow ${state.workspace?.workflow}; modules ${JSON.stringify(modules.map((m) => `${m.id} (${m.directory}, ${m.toolchain})`))}`);
      try {
        const detected = await api(url, "detect_workspace", {});
        t.diagnostic(`detected setup: ${JSON.stringify(detected.setup)}`);
        for (const m of detected.modules) t.diagnostic(`detected ${m.id}: ${m.gates.map((g) => `${g.gate}=${g.command ?? "(none)"} [${g.source}]`).join("; ")}`);
      } catch (e) {
        t.diagnostic(`detect_workspace: ${e.message}`);
      }
      const module = moduleOf(modules, fixture.sourceFile);
      assert.ok(module, `no workspace module holds ${fixture.sourceFile}; modules: ${JSON.stringify(modules)}`);
      if (module.id !== fixture.module.id || module.directory !== fixture.module.directory) {
        t.diagnostic(`note: the module is ${module.id} (${module.directory}); fixtures.json expects ${fixture.module.id} (${fixture.module.directory})`);
      }

      // The brief names the module by its whole id, as the planner's rules read it (ARCHITECTURE.md: Planner); the UI sends
      // the brief as the first message right after creating the session.
      const brief = `Fix ${fixture.bug} in ${module.id}`;
      const created = await api(url, "create_session", { brief });
      const id = created.id;
      const why = () => explain(url, id);
      await api(url, "send_message", { sessionId: id, text: brief });

      await until(
        "the turn, the gates and a passing auto-review (state `review`)",
        async () => {
          const s = await api(url, "get_session", { sessionId: id });
          if (s.setup === "failed") throw new Error(`the session's setup (install) failed\n${await why()}`);
          if (s.state === "blocked") throw new Error(`the session is blocked\n${await why()}`);
          if (s.reviews.some((r) => !r.passed && !r.stale) && !s.running) throw new Error(`the auto-review did not pass\n${await why()}`);
          return s.state === "review" && !s.running && s.reviews.some((r) => r.passed && !r.stale) ? s : null;
        },
        TO_REVIEW,
        why,
      );
      t.diagnostic(`review reached after ${took()}`);

      // The agent ran the repository's own tests in its turn, and they passed with the new test.
      const pass = new RegExp(fixture.passPattern, "m");
      const entries = await api(url, "get_transcript", { sessionId: id });
      const toolOutputs = entries.filter((e) => e.kind === "tool").map((e) => strip(e.text));
      assert.ok(
        toolOutputs.some((text) => pass.test(text)),
        `no tool result in the transcript shows \`${fixture.testCommand}\` passing (/${fixture.passPattern}/)\n${await why()}`,
      );

      // The gates ran the repository's own runner, detected, and nothing failed or was skipped.
      const gates = await api(url, "get_gates", { sessionId: id });
      const bad = gates.filter((g) => g.status === "failed" || g.status === "skipped");
      assert.deepEqual(bad.map((g) => `${g.module} ${g.gate}: ${g.status} \`${g.command}\``), [], `gates failed or skipped\n${await why()}`);
      const runner = new RegExp(fixture.gateCommand);
      const tests = gates.filter((g) => g.gate === "tests" && g.status === "passed" && runner.test(g.command));
      assert.ok(tests.length > 0, `no passed \`tests\` gate runs the repository's own runner (/${fixture.gateCommand}/)\n${await why()}`);
      assert.ok(
        tests.some((g) => pass.test(strip(`${g.outputHead}\n${g.outputTail}`))),
        `the tests gate's output does not show the pass count /${fixture.passPattern}/: ${JSON.stringify(tests.map((g) => ({ command: g.command, head: g.outputHead, tail: g.outputTail })))}`,
      );
      for (const g of gates) t.diagnostic(`gate ${g.module ?? "(session)"} ${g.gate}: ${g.status} \`${g.command}\` from ${g.source} (${g.durationMs} ms)`);

      // The session page, as the operator sees it.
      const { page, errors } = await newPage(t);
      await page.goto(`${url}#/session/${encodeURIComponent(id)}`);
      await page.locator("[data-testid=transcript]").waitFor();
      await page.locator("[data-testid=entry]").last().waitFor();
      await page.screenshot({ path: path.join(ARTIFACTS, `repos-${fixture.name}.png`), fullPage: true });
      assert.deepEqual(errors, []);

      // git-pr: a branch on origin holding exactly the two files the fix changed.
      const plan = await api(url, "plan_delivery", { sessionId: id, target: "git-pr" });
      assert.deepEqual(plan.blockers, [], `the git-pr plan has blockers: ${JSON.stringify(plan, null, 1)}`);
      await api(url, "deliver", { sessionId: id, target: "git-pr", planId: plan.planId });
      const run = await until(
        "the git-pr delivery to end",
        async () => {
          const r = await api(url, "get_delivery", { sessionId: id });
          return r && r.state !== "running" ? r : null;
        },
        TO_DELIVERED,
        async () => JSON.stringify(await api(url, "get_delivery", { sessionId: id }), null, 1),
      );
      const steps = run.steps.map((s) => `  ${s.id} ${s.state}: ${s.title}${s.state === "passed" ? "" : `\n    ${clip(strip(s.output), 2500).replace(/\n/g, "\n    ")}`}`).join("\n");
      assert.equal(run.state, "delivered", `the git-pr delivery ended ${run.state}: ${JSON.stringify(run.error)}\n${steps}`);
      t.diagnostic(`delivered after ${took()}: ${run.pullRequest?.via} ${run.pullRequest?.url}`);

      const branches = git(remote, "for-each-ref", "--format=%(refname:short)", "refs/heads").split("\n").filter((b) => b && b !== "main");
      assert.equal(branches.length, 1, `origin should hold main and one delivered branch: ${JSON.stringify(branches)}`);
      const branch = branches[0];
      if (run.pullRequest?.branch) assert.equal(branch, run.pullRequest.branch, "the branch pushed is the one the delivery names");
      const changed = git(remote, "diff", "--name-only", "main", branch).split("\n").filter(Boolean).sort();
      assert.deepEqual(changed, [fixture.sourceFile, fixture.testFile].sort(), `the delivered branch ${branch} changes other files than the fix and its test`);
      assert.equal(git(remote, "show", `${branch}:${fixture.sourceFile}`), fixture.fixedSource, `${fixture.sourceFile} on ${branch}`);
      assert.equal(git(remote, "show", `${branch}:${fixture.testFile}`), fixture.fixedTest, `${fixture.testFile} on ${branch}`);
    });
  }
});
