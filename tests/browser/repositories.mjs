// What the tests that carry a change through a real repository share (repos.test.mjs,
// baseline.test.mjs): the repository with its bare origin, a home with the machine's caches,
// waiting with a deadline, and what to print about a session when a check fails.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { tempDir } from "./harness.mjs";
import { api } from "./agents.mjs";

/** The caches a developer's home holds, linked into a test's own HOME so that the agent CLIs
 * write nothing into the real one, while corepack (pnpm), pnpm's store, npm's cache, rustup and
 * cargo, and pyenv are found as on the developer's machine. Go's build cache is not linked: it
 * stays under the temp dir, where codex's workspace-write sandbox lets `go test` write. */
const CACHES = [".cache/node/corepack", ".cache/pnpm", ".local/share/pnpm", ".npm", ".cargo", ".rustup", ".pyenv"];

export function homeWithCaches() {
  const home = tempDir("kiln-repos-home-");
  const real = os.homedir();
  for (const rel of CACHES) {
    const target = path.join(real, rel);
    if (!fs.existsSync(target)) continue;
    fs.mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
    fs.symlinkSync(target, path.join(home, rel));
  }
  // Who commits the delivery, as in any developer's ~/.gitconfig.
  fs.writeFileSync(path.join(home, ".gitconfig"), "[user]\n\tname = Repo Tester\n\temail = repo-tester@example.invalid\n");
  return home;
}

/** A CODEX_HOME whose config points codex at the scripted server with everything that would
 * reach elsewhere off (as src-tauri/engine/tests/it/contract_cli.rs does with -c settings). Under
 * the CLI directory, not the temp dir: codex refuses to put its helper binaries there. */
export function codexHome(t, cliDir, modelUrl) {
  const homes = path.join(cliDir, "homes");
  fs.mkdirSync(homes, { recursive: true });
  const dir = fs.mkdtempSync(path.join(homes, "codex-repos-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(
    path.join(dir, "config.toml"),
    [
      'model = "gpt-5.5"',
      'model_provider = "kiln"',
      "",
      "[model_providers.kiln]",
      'name = "kiln"',
      `base_url = "${modelUrl}/v1"`,
      'wire_api = "responses"',
      'env_key = "SCRIPTED_MODEL_KEY"',
      "",
      "[analytics]",
      "enabled = false",
      "",
      "[otel]",
      'metrics_exporter = "none"',
      "",
      "[features]",
      "plugins = false",
      "remote_plugin = false",
      "apps = false",
      "",
    ].join("\n"),
  );
  return dir;
}

export const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_TERMINAL_PROMPT: "0" };
export const git = (cwd, ...args) => execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" });

/** The repository a fixture generator (`tests/fixtures/<dir>/<name>.sh`) makes, in a temp dir
 * named after it, with a bare `origin` holding its main. */
export function makeRepository(generator) {
  const name = path.basename(generator, ".sh");
  const dir = tempDir("kiln-repos-");
  const workspace = path.join(dir, name);
  execFileSync(generator, [workspace], { stdio: "pipe" });
  const remote = path.join(dir, "origin.git");
  git(dir, "init", "-q", "--bare", "-b", "main", remote);
  git(workspace, "remote", "add", "origin", remote);
  git(workspace, "push", "-q", "origin", "main");
  return { workspace, remote };
}

export const strip = (s) => String(s ?? "").replace(/\x1b\[[0-9;]*[A-Za-z]/g, "");
export const clip = (s, n) => (s.length > n ? `${s.slice(0, n)}… (${s.length - n} more)` : s);

/** The session, its transcript's tail and its gates, to say what happened when a check fails. */
export async function explain(url, id) {
  const lines = [];
  try {
    const s = await api(url, "get_session", { sessionId: id });
    lines.push(`session: state ${s.state}, running ${s.running}, setup ${s.setup}, role ${s.role}, driver ${s.driver}, modules ${JSON.stringify(s.modules.map((m) => m.id))}, reviews ${JSON.stringify(s.reviews.map((r) => ({ module: r.moduleId, passed: r.passed, stale: r.stale })))}`);
    const entries = await api(url, "get_transcript", { sessionId: id });
    lines.push(`transcript (last ${Math.min(entries.length, 40)} of ${entries.length}):`);
    for (const e of entries.slice(-40)) lines.push(`  [${e.kind}${e.role ? ` ${e.role}` : ""}${e.module ? ` ${e.module}` : ""}] ${clip(strip(e.text), 1200).replace(/\n/g, "\n    ")}`);
    const gates = await api(url, "get_gates", { sessionId: id });
    lines.push("gates:");
    for (const g of gates) {
      lines.push(`  ${g.module ?? "(session)"} ${g.gate}: ${g.status} \`${g.command}\` (from ${g.source}, exit ${g.exitCode}, ${g.durationMs} ms)`);
      if (g.status !== "passed" && g.status !== "not-configured") lines.push(`    ${clip(strip(`${g.outputHead}\n${g.outputTail}`).trim(), 2500).replace(/\n/g, "\n    ")}`);
    }
  } catch (e) {
    lines.push(`(could not read the session: ${e.message})`);
  }
  return lines.join("\n");
}

/** Polls `check` until it returns a value; a deadline, never a sleep-and-hope. */
export async function until(what, check, timeout, why) {
  const end = Date.now() + timeout;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out after ${timeout / 1000} s waiting for ${what}\n${await why()}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

