// The installed app updates itself: the binary installed from a test .deb (tests/desktop/deb.sh
// builds it, and a newer one, with scripts/release and a throwaway key pair) is launched through
// tauri-driver on Xvfb with its update endpoint on a loopback server serving the newer release.
// It must offer the new version with its notes, download it with visible progress, verify its
// signature, install it (pkexec, which needs polkit, is stood in for by a script that checks it
// was asked for `dpkg -i <file>` and unpacks the package into the same scratch root the app was
// installed in), and restart into the new binary, whose own start-up check then offers nothing.
// Screenshots: tests/artifacts/update-{offered,downloading,installed,restarted}.png.
//
//   node tests/desktop/update.mjs --installed ROOT --release DIR --base-url URL
// ROOT: where the installed .deb was unpacked (ROOT/usr/bin/kiln); DIR: the newer release (its
// .deb, .sig and latest.json, as scripts/release lays them out); URL: the --base-url it was made
// with, which the loopback server stands in for. Run in a loopback-only network namespace.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { parseArgs } from "node:util";
import {
  TAURI_DRIVER,
  WEBKIT_DRIVER,
  assertLoopbackOnly,
  assertPresent,
  reporter,
  shot,
  startDisplay,
  startDriver,
  temp,
} from "./harness.mjs";
import { Session, waitFor } from "./webdriver.mjs";

const { values: opts } = parseArgs({ options: { installed: { type: "string" }, release: { type: "string" }, "base-url": { type: "string" } } });
for (const name of ["installed", "release", "base-url"]) assert.ok(opts[name], `--${name} is required`);
const INSTALLED = path.resolve(opts.installed);
const APP = path.join(INSTALLED, "usr/bin/kiln");
const RELEASE = path.resolve(opts.release);
const BASE = opts["base-url"].replace(/\/$/, "");
// The newer .deb arrives in 64 KiB pieces 10 ms apart, so the progress can be watched.
const PIECE = 64 * 1024;
const PIECE_DELAY_MS = 10;

const { ok, run } = reporter("update");

const sha256 = (file) => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");

/** Serves the release directory where its base URL pointed, and records every request. */
async function startUpdateServer(channelPath) {
  const requests = [];
  const server = http.createServer(async (req, res) => {
    requests.push({ url: req.url, at: Date.now() });
    const prefix = `${channelPath}/`;
    const name = req.url.startsWith(prefix) ? decodeURIComponent(req.url.slice(prefix.length)) : null;
    const file = name && !name.includes("/") ? path.join(RELEASE, name) : null;
    if (!file || !fs.existsSync(file)) {
      res.statusCode = 404;
      res.end();
      return;
    }
    if (name === "latest.json") {
      res.setHeader("content-type", "application/json");
      res.end(fs.readFileSync(file, "utf8").replaceAll(`${BASE}/`, `${origin}${new URL(BASE).pathname.replace(/\/$/, "")}/`));
      return;
    }
    const bytes = fs.readFileSync(file);
    res.setHeader("content-type", "application/octet-stream");
    res.setHeader("content-length", bytes.length);
    for (let at = 0; at < bytes.length; at += PIECE) {
      if (!res.write(bytes.subarray(at, at + PIECE))) await new Promise((r) => res.once("drain", r));
      await new Promise((r) => setTimeout(r, PIECE_DELAY_MS));
    }
    res.end();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return { server, requests, endpoint: `${origin}${channelPath}/latest.json` };
}

/** Stands in for pkexec: only `dpkg -i <file>` is allowed, and it unpacks into the scratch root. */
function pkexecDouble(dir) {
  const bin = path.join(dir, "bin");
  fs.mkdirSync(bin);
  fs.writeFileSync(
    path.join(bin, "pkexec"),
    `#!/bin/sh
# Test double for polkit's pkexec (no polkit daemon or agent runs here): the updater installs a .deb
# with "pkexec dpkg -i FILE"; this records the call, keeps the package, and unpacks it into the
# scratch root the app was installed in instead of the machine's /.
printf '%s\\n' "$*" >>"$KILN_TEST_PKEXEC_LOG"
[ "$1" = dpkg ] && [ "$2" = -i ] && [ -f "$3" ] && [ $# -eq 3 ] || exit 126
cp "$3" "$KILN_TEST_PKEXEC_LOG.deb" && exec dpkg-deb -x "$3" "$KILN_TEST_INSTALL_ROOT"
`,
    { mode: 0o755 },
  );
  return bin;
}

/** Pids of processes running `file`. */
function runningFrom(file) {
  const pids = [];
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (fs.readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, "") === file) pids.push(Number(pid));
    } catch {}
  }
  return pids;
}

async function main() {
  assertLoopbackOnly();
  assertPresent(
    [
      [APP, "unpack the installed .deb there (tests/desktop/deb.sh does)"],
      [path.join(RELEASE, "latest.json"), "make the newer release with scripts/release (tests/desktop/deb.sh does)"],
      [WEBKIT_DRIVER, "run ./scripts/deps (webkit2gtk-driver)"],
      [TAURI_DRIVER, "run ./scripts/deps (cargo install tauri-driver)"],
    ],
    ["Xvfb", "import", "convert", "dpkg-deb"],
  );
  const manifest = JSON.parse(fs.readFileSync(path.join(RELEASE, "latest.json"), "utf8"));
  const newer = manifest.version;
  const debName = fs.readdirSync(RELEASE).find((f) => f.endsWith(".deb"));
  assert.ok(debName, `no .deb in ${RELEASE}`);
  // What the newer package would install as /usr/bin/kiln, to compare with what is there after.
  const unpacked = temp("kiln-update-newer-");
  execFileSync("dpkg-deb", ["-x", path.join(RELEASE, debName), unpacked]);
  const newerBinary = sha256(path.join(unpacked, "usr/bin/kiln"));
  const installedBinary = sha256(APP);
  assert.notEqual(installedBinary, newerBinary, "the installed and the newer binary are the same file: nothing to update");

  const dir = temp("kiln-update-");
  for (const sub of ["config", "home", "run"]) fs.mkdirSync(path.join(dir, sub), { mode: 0o700 });
  const pkexecLog = path.join(dir, "pkexec.log");
  const { server, requests, endpoint } = await startUpdateServer(`${new URL(BASE).pathname.replace(/\/$/, "")}/${path.basename(RELEASE)}`);
  const display = await startDisplay();
  const env = {
    ...process.env,
    DISPLAY: display,
    HOME: path.join(dir, "home"),
    XDG_RUNTIME_DIR: path.join(dir, "run"),
    KILN_CONFIG_DIR: path.join(dir, "config"),
    KILN_UPDATE_ENDPOINT: endpoint,
    PATH: `${pkexecDouble(dir)}:${process.env.PATH}`,
    KILN_TEST_PKEXEC_LOG: pkexecLog,
    KILN_TEST_INSTALL_ROOT: INSTALLED,
    TAURI_WEBVIEW_AUTOMATION: "true",
    WEBKIT_DISABLE_COMPOSITING_MODE: "1",
    LIBGL_ALWAYS_SOFTWARE: "1",
    NO_AT_BRIDGE: "1",
  };
  delete env.KILN_NO_UPDATE_CHECK;
  const driver = await startDriver(env);
  const s = await Session.create(driver, { "tauri:options": { application: APP } });
  let restartedPid = null;
  try {
    // The start-up check offers the newer version, with its notes.
    const offer = await s.waitFor("[data-testid=update-available]", { timeout: 90_000 });
    const text = await s.text(offer);
    assert.match(text, new RegExp(`Kiln ${newer.replace(/\./g, "\\.")} is available \\(you have [0-9.]+\\)`));
    assert.ok(text.includes(manifest.notes.split("\n")[0]), `the notes are shown: ${text}`);
    const [oldPid] = runningFrom(APP);
    assert.ok(oldPid, "the installed app is running");
    shot(display, "update-offered");
    ok(`the installed app offers ${newer} with its notes`);

    // Download with progress; the signature verifies; pkexec is asked to dpkg -i it.
    await s.click(await s.waitFor(".modal button.btn-primary", { text: /Download and install/ }));
    const seen = new Set();
    let captured = false;
    const outcome = await waitFor("the update to be installed", async () => {
      const state = await s.script(
        "const p = document.querySelector('[data-testid=update-downloading] progress');" +
          "return { progress: p ? [p.value, p.max] : null, installed: !!document.querySelector('[data-testid=update-installed]'), failed: document.querySelector('[data-testid=update-failed]')?.innerText ?? null };",
      );
      if (state.progress && state.progress[1] > 1) {
        seen.add(Math.round((state.progress[0] / state.progress[1]) * 100));
        if (!captured && state.progress[0] > 0) {
          shot(display, "update-downloading");
          captured = true;
        }
      }
      return state.installed ? { installed: true } : state.failed ? { failed: state.failed } : null;
    }, 180_000, 50);
    assert.ok(outcome.installed, `the update failed: ${outcome.failed}`);
    const partial = [...seen].filter((p) => p > 0 && p < 100);
    assert.ok(partial.length >= 2, `the progress bar moved through the download: saw ${[...seen].sort((a, b) => a - b)}%`);
    const calls = fs.readFileSync(pkexecLog, "utf8").trim().split("\n");
    assert.equal(calls.length, 1, `pkexec called once: ${calls}`);
    assert.match(calls[0], /^dpkg -i \S+\.deb$/);
    assert.equal(sha256(`${pkexecLog}.deb`), sha256(path.join(RELEASE, debName)), "what was installed is the newer release's .deb");
    assert.equal(sha256(APP), newerBinary, "the installed binary is now the newer one");
    const debGets = requests.filter((r) => r.url.endsWith(encodeURIComponent(debName)) || r.url.endsWith(debName));
    assert.equal(debGets.length, 1, `one download: ${requests.map((r) => r.url)}`);
    await s.waitFor("[data-testid=update-installed]", { text: new RegExp(`${newer.replace(/\./g, "\\.")} is installed and verified`) });
    shot(display, "update-installed");
    ok(`downloaded with progress (${partial.length} steps between 0 and 100%), verified, installed with dpkg -i through pkexec`);

    // Restart now: the app starts again from the same path, now the newer binary.
    const beforeRestart = Date.now();
    // The app quits as it handles the click, so the driver may lose it before it answers.
    await s.click(await s.waitFor(".modal button.btn-primary", { text: /Restart now/ })).catch((e) => console.log(`desktop update: the click's answer was lost with the app: ${e.message}`));
    restartedPid = await waitFor("the app to restart as a new process", () => {
      const pids = runningFrom(APP).filter((p) => p !== oldPid);
      return !runningFrom(APP).includes(oldPid) && pids.length === 1 ? pids[0] : null;
    }, 60_000, 200);
    const exe = fs.readlinkSync(`/proc/${restartedPid}/exe`);
    assert.equal(exe, APP, `the restarted app runs the installed file, not a deleted one: ${exe}`);
    // Its own start-up check: the same latest.json, now not newer, so nothing is downloaded.
    await waitFor("the restarted app's update check", () => requests.some((r) => r.url.endsWith("/latest.json") && r.at > beforeRestart), 90_000, 200);
    await new Promise((r) => setTimeout(r, 5000));
    assert.equal(requests.filter((r) => r.url.endsWith(debName)).length, 1, "the restarted app downloads nothing");
    shot(display, "update-restarted");
    ok(`restarted as pid ${restartedPid} running the ${newer} binary; its own check offers nothing`);
  } finally {
    await Promise.race([s.close(), new Promise((r) => setTimeout(r, 5000))]);
    for (const pid of runningFrom(APP)) {
      try {
        process.kill(pid, "SIGTERM");
      } catch {}
    }
    server.closeAllConnections();
    server.close();
  }
  await waitFor("the restarted app to exit", () => runningFrom(APP).length === 0, 20_000, 200).catch(() => {
    for (const pid of runningFrom(APP)) process.kill(pid, "SIGKILL");
  });
}

await run(main, "update-*.png");
