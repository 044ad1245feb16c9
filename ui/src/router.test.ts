// Tests for the hash router's parsing and path helpers.
import { describe, expect, it } from "vitest";
import { parseHash, paths } from "./router";

describe("parseHash", () => {
  it("maps hashes to routes", () => {
    expect(parseHash("")).toEqual({ name: "dashboard" });
    expect(parseHash("#/")).toEqual({ name: "dashboard" });
    expect(parseHash("#/new")).toEqual({ name: "new" });
    expect(parseHash("#/workspace")).toEqual({ name: "workspace" });
    expect(parseHash("#/workspace/setup")).toEqual({ name: "setup" });
    expect(parseHash(paths.setup)).toEqual({ name: "setup" });
    expect(parseHash("#/settings")).toEqual({ name: "settings" });
    expect(parseHash("#/session/abc-123")).toEqual({ name: "session", id: "abc-123" });
    expect(parseHash("#/nope")).toEqual({ name: "notFound", path: "/nope" });
  });

  it("reads ?preview=1 on a session route, and ignores other queries", () => {
    expect(parseHash("#/session/abc?preview=1")).toEqual({ name: "session", id: "abc", preview: true });
    expect(parseHash(paths.sessionPreview("a/b c"))).toEqual({ name: "session", id: "a/b c", preview: true });
    const plain = parseHash("#/session/abc?preview=0");
    expect(plain).toEqual({ name: "session", id: "abc" });
    expect("preview" in plain).toBe(false);
  });

  it("reads a group's comparison route", () => {
    expect(parseHash("#/group/g-1")).toEqual({ name: "group", id: "g-1" });
    expect(parseHash(paths.group("a/b c"))).toEqual({ name: "group", id: "a/b c" });
    expect(parseHash("#/group/g-1/more").name).toBe("notFound");
  });

  it("reads the eject route of a session", () => {
    expect(parseHash("#/session/abc/deliver")).toEqual({ name: "deliver", id: "abc" });
    expect(parseHash(paths.deliver("a/b c"))).toEqual({ name: "deliver", id: "a/b c" });
    expect(parseHash("#/session/abc/other").name).toBe("notFound");
  });

  it("round-trips session ids through paths.session", () => {
    expect(parseHash(paths.session("a/b c"))).toEqual({ name: "session", id: "a/b c" });
  });
});
