// A small W3C WebDriver client for the desktop tests that drive the real app (e2e.mjs,
// update.mjs, background.mjs): tauri-driver in front of WebKitWebDriver, which launches the Kiln
// binary and drives its webview. Only what they use: sessions, finding elements by CSS, clicks,
// typing, text, frames, keys and script, plus `waitFor`, which polls until a check holds (WebDriver has no
// auto-wait). No screenshots: WebKitWebDriver's did not answer for a Tauri window here, so the
// tests take the X display's (harness.mjs).

/** Waits for `check()` to return something truthy; throws naming `what` after `timeout` ms. */
export async function waitFor(what, check, timeout = 30_000, interval = 250) {
  const end = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out after ${timeout} ms waiting for ${what}${last ? `: ${last.message}` : ""}`);
    await new Promise((r) => setTimeout(r, interval));
  }
}

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

/** One WebDriver session: the app launched by the driver at `url` (tauri-driver's port). */
export class Session {
  static async create(url, capabilities) {
    const answer = await call(url, "POST", "/session", { capabilities: { alwaysMatch: capabilities } });
    return new Session(url, answer.sessionId);
  }

  constructor(url, id) {
    this.url = url;
    this.id = id;
  }

  cmd(method, path, body) {
    return call(this.url, method, `/session/${this.id}${path}`, body);
  }

  /** The first element matching `css`, or null. */
  async find(css) {
    const found = await this.findAll(css);
    return found.length ? found[0] : null;
  }

  async findAll(css) {
    const found = await this.cmd("POST", "/elements", { using: "css selector", value: css });
    return found.map((e) => e[ELEMENT]);
  }

  /** Waits for an element matching `css` (whose text matches the RegExp `text`, when given).
   * Matched in the page, on innerText (or textContent when not rendered), in one round trip. */
  async waitFor(css, { text, timeout = 30_000 } = {}) {
    const found = () =>
      this.script(
        "const [css, source, flags] = arguments;" +
          "const re = source === null ? null : new RegExp(source, flags);" +
          "return [...document.querySelectorAll(css)].find((e) => !re || re.test(e.innerText || e.textContent || '')) ?? null;",
        [css, text ? text.source : null, text ? text.flags : ""],
      );
    const el = await waitFor(text ? `${css} with text ${text}` : css, found, timeout);
    return el[ELEMENT];
  }

  text(el) {
    return this.cmd("GET", `/element/${el}/text`);
  }

  attribute(el, name) {
    return this.cmd("GET", `/element/${el}/attribute/${encodeURIComponent(name)}`);
  }

  /** Clicks the element: scrolled into view by script first, as WebKit's driver wants it visible. */
  async click(el) {
    await this.script("arguments[0].scrollIntoView({block: 'center'})", [this.ref(el)]);
    await this.cmd("POST", `/element/${el}/click`, {});
  }

  async type(el, text) {
    await this.cmd("POST", `/element/${el}/clear`, {});
    await this.cmd("POST", `/element/${el}/value`, { text });
  }

  /** Types `text` on the keyboard, into whatever has the focus (WebDriver's actions: for
   * elements such as xterm's hidden textarea, which element send keys finds not interactable).
   * "\uE007" is Enter. */
  async keys(text) {
    const actions = [...text].flatMap((value) => [
      { type: "keyDown", value },
      { type: "keyUp", value },
    ]);
    await this.cmd("POST", "/actions", { actions: [{ type: "key", id: "keyboard", actions }] });
    await this.cmd("DELETE", "/actions", undefined);
  }

  /** Runs `body` (a function body using `arguments`) in the page and returns its value. */
  script(body, args = []) {
    return this.cmd("POST", "/execute/sync", { script: body, args });
  }

  ref(el) {
    return { [ELEMENT]: el };
  }

  /** Switches into the iframe `el`, or back to the top page with null. */
  frame(el) {
    return this.cmd("POST", "/frame", { id: el === null ? null : this.ref(el) });
  }

  async close() {
    await this.cmd("DELETE", "", undefined).catch(() => {});
  }
}

async function call(base, method, path, body) {
  const response = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let answer;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new Error(`${method} ${path}: HTTP ${response.status}, not JSON: ${text.slice(0, 300)}`);
  }
  if (!response.ok || answer.value?.error) {
    const v = answer.value ?? {};
    throw new Error(`${method} ${path}: ${v.error ?? response.status}: ${v.message ?? text.slice(0, 300)}`);
  }
  return answer.value;
}
