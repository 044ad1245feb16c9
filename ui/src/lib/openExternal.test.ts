// openExternal: http(s) only, the shell plugin on the desktop, window.open with noopener in the browser.
import { afterEach, describe, expect, it, vi } from "vitest";
import { httpUrl, openExternal, type OpenExternalDeps } from "./openExternal";

function deps(
  desktop: boolean,
): OpenExternalDeps & { shellOpen: ReturnType<typeof vi.fn>; windowOpen: ReturnType<typeof vi.fn> } {
  return { desktop: () => desktop, shellOpen: vi.fn(() => Promise.resolve()), windowOpen: vi.fn() };
}

afterEach(() => vi.restoreAllMocks());

describe("openExternal", () => {
  it("opens http(s) addresses through the shell plugin on the desktop", () => {
    const d = deps(true);
    expect(openExternal("https://github.com/o/r/pull/7", d)).toBe(true);
    expect(d.shellOpen).toHaveBeenCalledWith("https://github.com/o/r/pull/7");
    expect(d.windowOpen).not.toHaveBeenCalled();
  });

  it("opens them with window.open in the browser", () => {
    const d = deps(false);
    expect(openExternal("http://127.0.0.1:4400/?x=1", d)).toBe(true);
    expect(d.windowOpen).toHaveBeenCalledWith("http://127.0.0.1:4400/?x=1");
    expect(d.shellOpen).not.toHaveBeenCalled();
  });

  it("uses noopener by default in the browser", () => {
    const spy = vi.spyOn(window, "open").mockReturnValue(null);
    vi.spyOn(console, "warn").mockImplementation(() => {});
    expect(openExternal("https://example.com/")).toBe(true);
    expect(spy).toHaveBeenCalledWith("https://example.com/", "_blank", "noopener");
    expect(openExternal("javascript:alert(1)")).toBe(false);
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it.each([
    "file:///etc/passwd",
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    "data:text/html,x",
    "mailto:a@b",
    "/relative",
    "",
    "ftp://x/",
    "http://",
  ])("refuses %s on both", (url) => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    for (const desktop of [true, false]) {
      const d = deps(desktop);
      expect(openExternal(url, d)).toBe(false);
      expect(d.shellOpen).not.toHaveBeenCalled();
      expect(d.windowOpen).not.toHaveBeenCalled();
    }
  });

  it("normalises what it opens (spaces and non-ASCII are encoded for the shell scope)", () => {
    expect(httpUrl(" https://exämple.com/a b ")).toBe("https://xn--exmple-cua.com/a%20b");
  });
});
