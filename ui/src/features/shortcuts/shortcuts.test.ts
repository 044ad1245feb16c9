// Tests for the shortcut dispatcher: the keys and their actions, nothing while typing (but Escape and Mod+.), no stolen browser combinations.
import { describe, expect, it } from "vitest";
import { isTypingTarget, matchShortcut, SHORTCUTS } from "./shortcuts";

const key = (k: string, over: Partial<Parameters<typeof matchShortcut>[0]> = {}) => ({
  key: k,
  shiftKey: false,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  ...over,
});

describe("matchShortcut", () => {
  it("maps the plain keys outside text fields", () => {
    expect(matchShortcut(key("?", { shiftKey: true }), false)).toBe("help");
    expect(matchShortcut(key("n"), false)).toBe("new-session");
    expect(matchShortcut(key("1"), false)).toBe("tab-chat");
    expect(matchShortcut(key("2"), false)).toBe("tab-changes");
    // In the order the tabs stand.
    expect(matchShortcut(key("3"), false)).toBe("tab-terminal");
    expect(matchShortcut(key("4"), false)).toBe("tab-gates");
    expect(matchShortcut(key("5"), false)).toBe("tab-preview");
    expect(matchShortcut(key("j"), false)).toBe("diff-next");
    expect(matchShortcut(key("k"), false)).toBe("diff-prev");
    expect(matchShortcut(key("/"), false)).toBe("focus-composer");
    expect(matchShortcut(key("x"), false)).toBeNull();
  });

  it("ignores keys typed into text fields, except Escape (leave the field) and Mod+. (stop)", () => {
    for (const k of ["?", "n", "1", "j", "/"]) expect(matchShortcut(key(k), true)).toBeNull();
    expect(matchShortcut(key("Escape"), true)).toBe("leave-field");
    expect(matchShortcut(key("Escape"), false)).toBeNull();
    expect(matchShortcut(key(".", { ctrlKey: true }), true)).toBe("stop");
    expect(matchShortcut(key(".", { metaKey: true }), false)).toBe("stop");
  });

  it("leaves the browser's combinations and input-method composition alone", () => {
    expect(matchShortcut(key("n", { ctrlKey: true }), false)).toBeNull();
    expect(matchShortcut(key("1", { metaKey: true }), false)).toBeNull();
    expect(matchShortcut(key("j", { altKey: true }), false)).toBeNull();
    expect(matchShortcut(key(".", { ctrlKey: true, shiftKey: true }), false)).toBeNull();
    expect(matchShortcut(key("n", { isComposing: true }), false)).toBeNull();
  });

  it("lists every action the dispatcher can ask for on the sheet", () => {
    const listed = new Set(SHORTCUTS.map((s) => s.action));
    for (const k of ["?", "n", "1", "2", "3", "4", "j", "k", "/"])
      expect(listed.has(matchShortcut(key(k), false)!)).toBe(true);
    expect(listed.has("stop")).toBe(true);
  });
});

describe("isTypingTarget", () => {
  it("counts text inputs, textareas, selects and editable content, not buttons or checkboxes", () => {
    const el = (html: string) => {
      const div = document.createElement("div");
      div.innerHTML = html;
      return div.firstElementChild;
    };
    expect(isTypingTarget(el("<textarea></textarea>"))).toBe(true);
    expect(isTypingTarget(el("<input>"))).toBe(true);
    expect(isTypingTarget(el('<input type="search">'))).toBe(true);
    expect(isTypingTarget(el("<select></select>"))).toBe(true);
    expect(isTypingTarget(el('<div contenteditable="true"></div>'))).toBe(true);
    expect(isTypingTarget(el('<input type="checkbox">'))).toBe(false);
    expect(isTypingTarget(el("<button></button>"))).toBe(false);
    expect(isTypingTarget(document.body)).toBe(false);
    expect(isTypingTarget(null)).toBe(false);
  });
});
