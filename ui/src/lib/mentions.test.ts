// Tests for @-mentions: finding the mention at the caret, matching modules by id and directory, and putting the chosen one in.
import { describe, expect, it } from "vitest";
import type { ModuleInfo } from "../api/types";
import { applyMention, matchModules, mentionAt, mentionText } from "./mentions";

const mod = (id: string, directory: string): ModuleInfo => ({ id, directory, toolchain: "node", specStatus: null });
const modules = [
  mod("@shop/cart", "modules/cart"),
  mod("@shop/catalog", "modules/catalog"),
  mod("@shop/orders", "modules/orders"),
  mod("blog", "apps/blog"),
];

describe("mentionAt", () => {
  it("finds the @ being typed before the caret", () => {
    expect(mentionAt("Add a wishlist to @", 19)).toEqual({ start: 18, end: 19, query: "" });
    expect(mentionAt("Add to @sh", 10)).toEqual({ start: 7, end: 10, query: "sh" });
    expect(mentionAt("@shop/ca", 8)).toEqual({ start: 0, end: 8, query: "shop/ca" });
    expect(mentionAt("(@ca", 4)?.query).toBe("ca");
  });

  it("ignores an @ inside a word, and a mention the caret has left", () => {
    expect(mentionAt("mail me@host", 12)).toBeNull();
    expect(mentionAt("Add to @shop/cart now", 21)).toBeNull();
    expect(mentionAt("", 0)).toBeNull();
  });
});

describe("matchModules", () => {
  it("matches ids and directories, best first", () => {
    expect(matchModules(modules, "").map((m) => m.id)).toEqual(["@shop/cart", "@shop/catalog", "@shop/orders", "blog"]);
    expect(matchModules(modules, "ca").map((m) => m.id)).toEqual(["@shop/cart", "@shop/catalog"]);
    expect(matchModules(modules, "shop/o").map((m) => m.id)).toEqual(["@shop/orders"]);
    expect(matchModules(modules, "apps").map((m) => m.id)).toEqual(["blog"]);
    expect(matchModules(modules, "modules/cat").map((m) => m.id)).toEqual(["@shop/catalog"]);
    expect(matchModules(modules, "zzz")).toEqual([]);
  });
});

describe("applyMention", () => {
  it("puts the module's id in place of the mention, with one space after", () => {
    const value = "Add a wishlist to @cat";
    expect(applyMention(value, mentionAt(value, value.length)!, modules[1])).toEqual({
      value: "Add a wishlist to @shop/catalog ",
      caret: 32,
    });
    const mid = "Fix @ca and more";
    expect(applyMention(mid, mentionAt(mid, 7)!, modules[0])).toEqual({ value: "Fix @shop/cart and more", caret: 15 });
  });

  it("names a bare-word id by its directory, as the planner reads it", () => {
    expect(mentionText(modules[3])).toBe("module apps/blog");
    expect(mentionText(modules[0])).toBe("@shop/cart");
    expect(mentionText(mod("app", "."))).toBe("app");
  });
});

describe("unknownModuleIds", () => {
  it("reads the ids a MODULE_UNKNOWN answer names", async () => {
    const { unknownModuleIds } = await import("./mentions");
    expect(
      unknownModuleIds(
        "`@shop/wishlist` is not a module of this workspace. Modules: `@shop/cart` (modules/cart). To create it as new, confirm `@shop/wishlist` (`createModules`).",
      ),
    ).toEqual(["@shop/wishlist"]);
    expect(unknownModuleIds("`@shop/a`, `@shop/b` are not modules of this workspace. Modules: `@shop/cart`.")).toEqual([
      "@shop/a",
      "@shop/b",
    ]);
    expect(unknownModuleIds("something else")).toEqual([]);
  });
});
