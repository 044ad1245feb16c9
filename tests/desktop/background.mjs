// Desktop test of work that outlives the window, against the real app (tauri-driver,
// WebKitWebDriver, Xvfb) on a temp copy of examples/shop, with real claude turns against the
// scripted model server. A turn's command waits for a flag file, so the window surely closes
// mid-turn; it closes by the window manager's close request (WM_DELETE_WINDOW, x11window.py).
// The first app: the window hides and the process lives on; "Kiln keeps working" is notified
// once; the tray (read and clicked over D-Bus by tray_watcher.py, a panel's side of it) says what
// runs, and its Quit asks first (the native question, dismissed); a second launch shows the
// window; the released turn completes with the window closed (read from .kiln/kiln.db) and
// "ready for review" is notified once; the tray's Show Kiln shows the finished turn in the page
// (tests/artifacts/background-reopened.png). There, the session's Terminal tab opens a shell over
// the desktop's own path (attach_terminal's Tauri Channel): typed keys reach it and its output
// shows; leaving the tab and coming back replays it once; closing the window while only the
// terminal runs hides it to the tray ("Running: 1 terminal"); Stop ends it, its output stays
// (tests/artifacts/background-terminal.png). Closing it with nothing running quits. The second
// app: a new turn runs, the window closes to the tray, and Quit Kiln, confirmed in the native
// question, stops the turn and quits. Notifications are the Notify calls dbus-monitor records on
// the test's own session bus.
//
// It must run on a session bus of its own in a network namespace with only loopback (scripts/test:
// `unshare -n sh -c 'ip link set lo up && exec dbus-run-session -- node tests/desktop/background.mjs'`).
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {
  ARTIFACTS,
  CLAUDE,
  CLAUDE_APP_PARTS,
  DISPLAY_TOOLS,
  KILN,
  ROOT,
  assertLoopbackOnly,
  assertPresent,
  closeAtEnd,
  createSession,
  outputMatch,
  reporter,
  sessionPids,
  shot,
  start,
  startDisplay,
  startDriver,
  startModelServer,
  temp,
  useClaude,
} from "./harness.mjs";
import { Session, waitFor } from "./webdriver.mjs";

const X11WINDOW = path.join(ROOT, "tests/desktop/x11window.py");
const TRAY_WATCHER = path.join(ROOT, "tests/desktop/tray_watcher.py");
const BRIEF = "Add a wishlist to @shop/catalog";
const TITLE = "Wishlist for the catalog";
// The turn's command waits for this file in its working copy, so the window closes mid-turn.
const FLAG = "kiln-background-release.flag";
const NEVER = "kiln-background-never.flag";
const TURN_TEXT = "The wishlist waited for its flag and is in place.";
const FILE = "modules/catalog/src/client/wishlist.js";
const CONTENT = "// The catalog's wishlist: product ids the shopper saved.\nexport const wishlist = new Set();\n";
const LONG = 180_000;

const { ok, run } = reporter("background");

function preflight() {
  assertLoopbackOnly();
  assert.ok(process.env.DBUS_SESSION_BUS_ADDRESS, "run this test on a session bus of its own (scripts/test does: dbus-run-session)");
  assertPresent(CLAUDE_APP_PARTS, [...DISPLAY_TOOLS, "dbus-monitor", "sqlite3"]);
  try {
    execFileSync("/usr/bin/python3", ["-c", "import Xlib"], { stdio: "ignore" });
  } catch {
    throw new Error("python3-xlib is missing: run ./scripts/deps");
  }
}

/** Runs x11window.py `action` on the window titled `title` (with `more` arguments); "none" for
 * `state` when there is none. */
function x11window(display, action, title = "Kiln", ...more) {
  try {
    return execFileSync("/usr/bin/python3", [X11WINDOW, action, title, ...more], { env: { ...process.env, DISPLAY: display }, stdio: ["ignore", "pipe", "pipe"] }).toString().trim();
  } catch (e) {
    if (action === "state" && /no window named/.test(e.stderr)) return "none";
    throw e;
  }
}

/** Asks the window titled `title` to close until `done()` holds. About one close request in ten
 * had no effect here, with nothing in the app's log (GTK drops a delete request while a grab is
 * held in the window's group, which WebDriver's synthesized input may leave for a moment: the
 * likeliest cause), so a request that changed nothing within 5 s is sent again, as a user would
 * click again; at most 3 times, and each resend is said. */
async function closeUntil(display, what, done, title = "Kiln") {
  for (let attempt = 1; ; attempt++) {
    if (attempt > 1) console.log(`desktop background: no effect after 5 s; closing again for ${what} (attempt ${attempt})`);
    x11window(display, "close", title);
    try {
      return await waitFor(what, done, attempt < 3 ? 5_000 : 30_000, 250);
    } catch (e) {
      if (attempt >= 3) throw e;
    }
  }
}

/** A process's command line, parent and group, for a report. */
function describe(pid) {
  try {
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim();
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return `${cmd} (ppid ${stat[1]}, pgid ${stat[2]}, sid ${stat[3]})`;
  } catch {
    return "gone";
  }
}

/** Whether a process of `workspace`'s sessions waits for `flag` (a turn's command). */
function waitingFor(workspace, flag) {
  const cmdline = (pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      return ""; // gone meanwhile
    }
  };
  return sessionPids(workspace).some((pid) => cmdline(pid).includes(flag));
}

/** The tray icon registered with the watcher last, as [service, path], once one other than
 * `before`'s service has. */
function registration(watcher, before = null) {
  return waitFor(
    "the tray icon's registration",
    () => {
      const found = [...watcher.output.matchAll(/^registered (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]).filter(([service]) => service !== before);
      return found.at(-1) ?? null;
    },
    30_000,
    250,
  );
}

/** The tray icon's menu (the watcher reads it as a panel would): [{id, label, enabled}]. */
function trayMenu(service, itemPath) {
  return JSON.parse(execFileSync("/usr/bin/python3", [TRAY_WATCHER, "menu", service, itemPath]).toString());
}

/** Clicks the tray menu's item `label`. */
function trayClick(service, itemPath, label) {
  execFileSync("/usr/bin/python3", [TRAY_WATCHER, "click", service, itemPath, label]);
}

/** The pid of the Kiln app tauri-driver started on `workspace` (its command line names it; its
 * environment is no guide, since Kiln conceals its own as it starts). */
function appPid(workspace) {
  const exe = fs.realpathSync(KILN);
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (fs.readlinkSync(`/proc/${pid}/exe`) !== exe) continue;
      if (fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes(workspace)) return Number(pid);
    } catch {}
  }
  return null;
}

const alive = (pid) => fs.existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, "utf8"));

/** One row of `sql` against the workspace's records (read-only, as the app writes beside it). */
function query(workspace, sql) {
  return execFileSync("sqlite3", ["-readonly", path.join(workspace, ".kiln/kiln.db"), sql]).toString().trim();
}

/** The Notify calls dbus-monitor recorded so far: [summary, body] each. */
function notifications(monitor) {
  const found = [];
  const re = /member=Notify\n(?:[ \t]+.*\n){3}[ \t]+string "((?:[^"\\]|\\.)*)"\n[ \t]+string "((?:[^"\\]|\\.)*)"/g;
  for (const m of monitor.output.matchAll(re)) found.push([m[1], m[2]]);
  return found;
}

async function main() {
  preflight();
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const workspace = path.join(temp("kiln-bg-ws-"), "shop");
  const example = path.join(ROOT, "examples/shop");
  fs.cpSync(example, workspace, {
    recursive: true,
    filter: (src) => !path.relative(example, src).split(path.sep).some((p) => p === "node_modules" || p === ".kiln"),
  });
  // No screenshots after turns: a capture starts the shop's preview in the working copy, and
  // this test counts the working copy's processes to see the terminal's shell end.
  const toml = path.join(workspace, "kiln.toml");
  fs.writeFileSync(toml, fs.readFileSync(toml, "utf8").replace("[preview]\n", "[preview]\nscreenshots = false\n"));
  // Whatever the test's end, nothing of the workspace may outlive it: an app killed by the
  // cleanup after a failure has no chance to stop its turns (claude runs in a group of its own).
  closeAtEnd(() => {
    for (const p of sessionPids(workspace)) {
      try {
        process.kill(Number(p), "SIGKILL");
      } catch {}
    }
  });
  const config = temp("kiln-bg-config-");
  const home = temp("kiln-bg-home-");
  const runtime = temp("kiln-bg-run-");
  fs.chmodSync(runtime, 0o700);

  const model = await startModelServer([
    { text: `{"modules": [], "title": "${TITLE}", "role": "frontend-engineer", "reason": "The wishlist starts on the product cards."}` },
    // The engineer's command waits (in its working copy) until the test drops the flag.
    {
      tool: "Bash",
      arguments: { command: `while [ ! -e ${FLAG} ]; do sleep 0.2; done; rm -f ${FLAG}`, description: "Wait for the flag", timeout: 600000 },
    },
    // A change, so that its review follows (a turn that changed nothing has none).
    { tool: "Write", arguments: { file_path: FILE, content: CONTENT } },
    { text: `${TURN_TEXT}\n\nHANDOFF: none - the wishlist is in place` },
    { text: "Checked.\n\nREVIEW: pass - nothing changed that could break" },
    // The second app's turn: its command waits for a flag that never comes, until Quit stops it.
    { tool: "Bash", arguments: { command: `while [ ! -e ${NEVER} ]; do sleep 0.2; done`, description: "Wait for ever", timeout: 600000 } },
    { text: "Never reached.\n\nHANDOFF: none - stopped before this" },
  ]);
  // Every Notify call on this test's own session bus, whether a notification server answers or not.
  const monitor = start("dbus-monitor", ["--session", "type='method_call',interface='org.freedesktop.Notifications',member='Notify'"]);
  await waitFor("dbus-monitor to listen", () => monitor.output.includes("NameAcquired") || monitor.output.length > 0, 15_000, 100);
  // The panel's side of the tray: tray icons register with it, and the test reads their menus.
  const watcher = start("/usr/bin/python3", [TRAY_WATCHER]);
  await outputMatch(watcher, /^watching$/m, "the tray watcher");
  const display = await startDisplay();
  const env = {
    ...process.env,
    DISPLAY: display,
    HOME: home,
    XDG_RUNTIME_DIR: runtime,
    KILN_CONFIG_DIR: config,
    KILN_NO_UPDATE_CHECK: "1",
    TAURI_WEBVIEW_AUTOMATION: "true",
    ANTHROPIC_BASE_URL: model,
    ANTHROPIC_API_KEY: "sk-ant-background",
    WEBKIT_DISABLE_COMPOSITING_MODE: "1",
    LIBGL_ALWAYS_SOFTWARE: "1",
    NO_AT_BRIDGE: "1",
    // What the app decides when its window closes, in the failure report.
    KILN_LOG: "kiln_app=info",
  };
  const driverUrl = await startDriver(env);
  const id = await runApp(driverUrl, { workspace, display, monitor }, (s) => steps(s, { workspace, display, env, monitor, watcher }));
  await runApp(driverUrl, { workspace, display, monitor }, (s) => quitWhileRunning(s, { workspace, display, watcher, id }));
}

/** Runs `body` against a new app on `workspace` (a WebDriver session), reporting the page and the
 * screen when it fails; resolves with what `body` does. */
async function runApp(driverUrl, { workspace, display, monitor }, body) {
  const s = await Session.create(driverUrl, { "tauri:options": { application: KILN, args: ["--workspace", workspace] } });
  try {
    return await body(s);
  } catch (e) {
    console.error(`desktop background: notifications: ${JSON.stringify(notifications(monitor))}`);
    try {
      console.error(`desktop background: the page said:\n${(await s.script("return document.body.innerText")).slice(0, 3000)}`);
      shot(display, "background-failed"); // last: a hidden window leaves a blank screen
      console.error(`desktop background: the screen at the failure: ${path.join(ARTIFACTS, "background-failed.png")}`);
    } catch {}
    throw e;
  } finally {
    await s.close();
  }
}

/** The first app: a turn outlives the closed window; the tray reopens it; closing it idle quits. */
async function steps(s, { workspace, display, env, monitor, watcher }) {
  // 1. A session whose claude turn runs and waits for the flag.
  await useClaude(s, CLAUDE);
  const id = await createSession(s, BRIEF);
  const copy = path.join(workspace, ".kiln/sessions", id, "workspace");
  const waiting = () => waitingFor(workspace, FLAG);
  await waitFor("the turn's command waiting for its flag", waiting, LONG, 250);
  const pid = appPid(workspace);
  assert.ok(pid, "the app's process");
  assert.equal(query(workspace, `SELECT count(*) FROM turns WHERE session_id = '${id}' AND status = 'running'`), "1", "one turn runs");
  ok(`session ${id}: the claude turn runs (its command waits for ${FLAG})`);

  // 2. The window manager's close request while it runs: the window hides, the process lives on,
  //    and the operator hears that Kiln keeps working.
  assert.equal(x11window(display, "state"), "viewable");
  await closeUntil(display, "the window to hide", () => x11window(display, "state") === "hidden");
  await waitFor("the notification that Kiln keeps working", () => notifications(monitor).some(([summary]) => summary === "Kiln keeps working in the background"), 30_000, 250);
  const [, backgroundBody] = notifications(monitor).find(([summary]) => summary === "Kiln keeps working in the background");
  assert.match(backgroundBody, /1 turn/, "the notification says what runs");
  assert.ok(alive(pid), "the app lives on after its window closed");
  assert.ok(waiting(), "the turn still runs");
  ok(`closing the window hid it; the app (pid ${pid}) lives on and notified: "${backgroundBody}"`);
  // The tray icon, as a panel sees it: Show Kiln, what runs (not clickable), Quit Kiln.
  const [service, itemPath] = await registration(watcher);
  const labels = (menu) => menu.map((e) => `${e.label}${e.enabled ? "" : " (disabled)"}`);
  assert.deepEqual(labels(trayMenu(service, itemPath)), ["Show Kiln", "Running: 1 turn (disabled)", "Quit Kiln"]);
  ok(`the tray icon registered (${service} ${itemPath}) with Show Kiln, "Running: 1 turn" and Quit Kiln`);

  // 2b. Quit Kiln from the tray while the turn runs asks first; dismissing the question keeps
  //     everything running.
  trayClick(service, itemPath, "Quit Kiln");
  await waitFor("the question before quitting", () => x11window(display, "state", "Quit Kiln") === "viewable", 30_000, 250);
  await new Promise((r) => setTimeout(r, 1000)); // let the dialog paint before the screenshot
  const asked = shot(display, "background-quit-asked");
  await closeUntil(display, "the question to go", () => x11window(display, "state", "Quit Kiln") !== "viewable", "Quit Kiln");
  assert.ok(alive(pid) && waiting(), "dismissing the question keeps the app and its turn running");
  ok(`Quit Kiln while the turn runs asked first (${asked}); dismissed, the app and the turn go on`);

  // 2c. A second launch shows the window again (the single-instance hand-over); closing it again
  //     while the turn runs hides it again, without a second "keeps working" notification.
  const second = spawn(KILN, [], { env, stdio: "ignore" });
  const code = await new Promise((resolve) => second.on("exit", resolve));
  assert.equal(code, 0, "the second launch hands over and exits");
  await waitFor("the window to show again", () => x11window(display, "state") === "viewable", 30_000, 250);
  await closeUntil(display, "the window to hide again", () => x11window(display, "state") === "hidden");
  assert.ok(alive(pid) && waiting(), "the app and its turn run on");
  const told = notifications(monitor).filter(([summary]) => summary === "Kiln keeps working in the background");
  assert.equal(told.length, 1, `told once that Kiln keeps working: ${JSON.stringify(notifications(monitor))}`);
  ok("a second launch showed the window; closing it again hid it, and the background notice was not repeated");

  // 3. The turn is released and completes with the window closed; its review follows, and the
  //    operator hears the session is ready, once.
  fs.writeFileSync(path.join(copy, FLAG), "go\n");
  await waitFor(
    "the session to reach review with no turn running",
    () => query(workspace, `SELECT state FROM sessions WHERE id = '${id}'`) === "review" && query(workspace, `SELECT count(*) FROM turns WHERE session_id = '${id}' AND status = 'running'`) === "0",
    LONG,
    500,
  );
  const completed = Number(query(workspace, `SELECT count(*) FROM turns WHERE session_id = '${id}' AND status = 'completed'`));
  assert.ok(completed >= 2, `the engineer's turn and its review completed (${completed})`);
  assert.equal(fs.readFileSync(path.join(copy, FILE), "utf8"), CONTENT, "the turn wrote its file");
  assert.ok(alive(pid), "the app lives on with its window closed");
  const ready = await waitFor(
    "the notification that the session is ready for review",
    () => {
      const found = notifications(monitor).filter(([summary, body]) => summary === TITLE && /review/.test(body));
      return found.length ? found : null;
    },
    30_000,
    250,
  );
  // Nothing runs any more: the tray says so, and Kiln stays there rather than quitting by itself.
  await waitFor("the tray to say nothing runs", () => trayMenu(service, itemPath).some((e) => e.label === "Nothing running" && !e.enabled), 30_000, 250);
  // The transition was told once: checked after twice the app's settle delay (1.5 s), in which a
  // repeated notification would have gone out.
  await new Promise((r) => setTimeout(r, 3000));
  const sessionNotices = notifications(monitor).filter(([summary]) => summary === TITLE);
  assert.equal(sessionNotices.length, 1, `one notification for the transition: ${JSON.stringify(notifications(monitor))}`);
  assert.ok(alive(pid), "the app stays (in the tray) after the work ended");
  assert.equal(x11window(display, "state"), "hidden");
  ok(`the turn completed with the window closed (${completed} turns); notified "${ready[0][0]}: ${ready[0][1]}"; the app stays in the tray`);

  // 4. Show Kiln in the tray shows the window again, with the finished turn in the page.
  trayClick(service, itemPath, "Show Kiln");
  await waitFor("the window to show again", () => x11window(display, "state") === "viewable", 30_000, 250);
  await s.waitFor("[data-testid=entry][data-kind=agent]", { text: new RegExp(TURN_TEXT), timeout: 60_000 });
  await s.waitFor("[data-testid=entry][data-kind=handoff]", { text: /review\s*→\s*pass/i, timeout: 60_000 });
  await new Promise((r) => setTimeout(r, 1500)); // let the page paint before the screenshot
  const reopened = shot(display, "background-reopened");
  ok(`Show Kiln in the tray showed the window again with the finished turn: ${reopened}`);

  // 4b. A terminal, through the desktop's own path (a Tauri Channel from attach_terminal).
  await terminalSteps(s, { workspace, display, id, pid, service, itemPath });

  // 5. Closing it with nothing running quits, leaving nothing of the workspace behind.
  await closeUntil(display, "the app to quit", () => !alive(pid));
  await waitFor("no process running from the session's working copy", () => sessionPids(workspace).length === 0, 20_000, 500);
  ok("closing the window with nothing running quit the app");
  return id;
}

/** The text of the terminal on screen, from xterm's rendered rows (joined without breaks). */
const screenText = (s) =>
  s.script("return (document.querySelector('[data-testid=terminal-screen] .xterm-rows')?.textContent ?? '').replaceAll('\\u00a0', ' ')");

/** How often `text` occurs in `screen`. */
const occurrences = (screen, text) => screen.split(text).length - 1;

/** Waits until the terminal on screen shows `text`; resolves with the screen's text. */
const waitForScreen = (s, text, timeout = 30_000) => waitFor(`the terminal to show ${text}`, async () => ((await screenText(s)).includes(text) ? screenText(s) : null), timeout, 200);

/** The session's Terminal tab in the desktop app: a shell takes typed keys and shows their output
 * over the desktop's channel; leaving the tab and coming back replays the screen once, and the
 * new attachment carries live output once; closing the window while only the terminal runs hides
 * it to the tray (a running terminal is work); Stop ends it and its output stays readable. */
async function terminalSteps(s, { workspace, display, id, pid, service, itemPath }) {
  await s.click(await s.waitFor("[data-testid=tab-terminal]"));
  await s.click(await s.waitFor("[data-testid=new-terminal]", { timeout: 30_000 }));
  await s.waitFor("[data-testid=terminal-screen] .xterm-rows");
  // Clicking the screen focuses xterm's textarea; the keys go to the shell.
  await s.click(await s.waitFor("[data-testid=terminal-screen] .xterm-screen"));
  await s.keys("echo kiln-$((6*7))\uE007");
  await waitForScreen(s, "kiln-42");
  const terminalId = await s.attribute(await s.waitFor("[data-testid=terminal-screen]"), "data-terminal-id");
  // The shell runs in the session's working copy (the turns are over: it is the only one there).
  assert.ok(sessionPids(workspace).length > 0, "the terminal's shell runs in the working copy");
  ok(`a new terminal (${terminalId}) took typed keys and showed "kiln-42" over the desktop's channel`);

  // Leaving the tab detaches the view; coming back attaches again and replays the screen, once.
  await s.click(await s.waitFor("[data-testid=tab-chat]"));
  await waitFor("the terminal's screen to go", async () => (await s.findAll("[data-testid=terminal-screen]")).length === 0, 15_000, 200);
  await s.click(await s.waitFor("[data-testid=tab-terminal]"));
  const replayed = await waitForScreen(s, "kiln-42");
  assert.equal(occurrences(replayed, "kiln-42"), 1, `the replay shows the output once: ${JSON.stringify(replayed)}`);
  // Live output after the replay comes once too: one attachment feeds the screen.
  await s.click(await s.waitFor("[data-testid=terminal-screen] .xterm-screen"));
  await s.keys("echo again-$((2*3))\uE007");
  await waitForScreen(s, "again-6");
  await new Promise((r) => setTimeout(r, 1000)); // room for a second copy to arrive, were there one
  const live = await screenText(s);
  assert.equal(occurrences(live, "again-6"), 1, `live output shows once: ${JSON.stringify(live)}`);
  assert.equal(occurrences(live, "kiln-42"), 1, `the replayed output is not repeated: ${JSON.stringify(live)}`);
  ok("leaving the Terminal tab and coming back replayed the screen once, and live output after it came once");

  // A running terminal is work: closing the window hides it to the tray, which says so.
  await closeUntil(display, "the window to hide with the terminal running", () => x11window(display, "state") === "hidden");
  assert.ok(alive(pid), "the app lives on while its terminal runs");
  await waitFor("the tray to say the terminal runs", () => trayMenu(service, itemPath).some((e) => e.label === "Running: 1 terminal" && !e.enabled), 30_000, 250);
  trayClick(service, itemPath, "Show Kiln");
  await waitFor("the window to show again", () => x11window(display, "state") === "viewable", 30_000, 250);
  ok('closing the window with only a terminal running hid it to the tray ("Running: 1 terminal"); Show Kiln brought it back');

  // Stop: the shell ends, the screen says so, and its output stays readable.
  await s.click(await s.waitFor("[data-testid=terminal-stop]"));
  const exit = await s.text(await s.waitFor("[data-testid=terminal-exit]", { timeout: 30_000 }));
  await s.waitFor('[data-testid=terminal-item][data-state="exited"]');
  assert.match(await screenText(s), /kiln-42/);
  await waitFor("the shell to end", () => sessionPids(workspace).length === 0, 20_000, 250);
  await waitFor("the tray to say nothing runs", () => trayMenu(service, itemPath).some((e) => e.label === "Nothing running" && !e.enabled), 30_000, 250);
  await new Promise((r) => setTimeout(r, 1000)); // let the page paint before the screenshot
  const stopped = shot(display, "background-terminal");
  ok(`Stop ended the terminal ("${exit}"); its output stays on screen: ${stopped}`);
}

/** The second app, on the same session: a new turn runs, the window closes to the tray, and Quit
 * Kiln, confirmed, stops the turn and quits. */
async function quitWhileRunning(s, { workspace, display, watcher, id }) {
  const before = (await registration(watcher))[0];
  await s.script("location.hash = arguments[0]", [`#/session/${encodeURIComponent(id)}`]);
  await s.type(await s.waitFor("[data-testid=message]", { timeout: 60_000 }), "Now wait for the other flag");
  await s.click(await s.waitFor("[data-testid=send]"));
  await waitFor("the new turn's command waiting", () => waitingFor(workspace, NEVER), LONG, 250);
  const pid = appPid(workspace);
  assert.ok(pid, "the second app's process");
  await closeUntil(display, "the window to hide", () => x11window(display, "state") === "hidden");
  const [service, itemPath] = await registration(watcher, before);
  assert.ok(trayMenu(service, itemPath).some((e) => e.label === "Running: 1 turn"), "the tray says the turn runs");
  trayClick(service, itemPath, "Quit Kiln");
  await waitFor("the question before quitting", () => x11window(display, "state", "Quit Kiln") === "viewable", 30_000, 250);
  // The dialog's buttons fill its bottom row: Quit on the left, Keep working on the right.
  x11window(display, "click", "Quit Kiln", "0.25", "0.85");
  await waitFor("the app to quit", () => !alive(pid), 30_000, 250);
  const statuses = query(workspace, `SELECT status FROM turns WHERE session_id = '${id}' ORDER BY id`).split("\n");
  assert.ok(!statuses.includes("running"), `no turn left marked running: ${statuses}`);
  // Kiln stops a turn by killing the agent CLI's process group and what left it: Claude Code's
  // Bash tool runs each command in a session of its own (setsid), which the group kill alone
  // would miss. Nothing may be left running from the session's working copy.
  const left = () => sessionPids(workspace);
  await waitFor("no process running from the session's working copy", () => left().length === 0, 20_000, 500).catch((e) => {
    const names = left().map((p) => `${p}: ${describe(p)}`);
    for (const p of left()) {
      try {
        process.kill(Number(p), "SIGKILL");
      } catch {}
    }
    throw new Error(`${e.message}; left: ${JSON.stringify(names)}`);
  });
  ok(`Quit Kiln, confirmed while a turn ran, stopped it (turns: ${statuses.join(", ")}) and quit; no process of the turn left, the command Claude Code detached included`);
}

await run(main, "background-*.png");
