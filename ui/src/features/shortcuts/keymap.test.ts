// Tests for the composer's send key: Enter sends, Shift+Enter does not, the Ctrl/⌘+Enter setting, IME composition never sends.
import { afterEach, describe, expect, it } from "vitest";
import { isSendKey, loadSendKey, saveSendKey, sendHint } from "./keymap";

const key = (over: Partial<Parameters<typeof isSendKey>[0]> = {}) => ({
  key: "Enter",
  shiftKey: false,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  ...over,
});

describe("isSendKey", () => {
  it("sends on Enter and makes a newline on Shift+Enter by default", () => {
    expect(isSendKey(key(), "enter")).toBe(true);
    expect(isSendKey(key({ shiftKey: true }), "enter")).toBe(false);
    expect(isSendKey(key({ altKey: true }), "enter")).toBe(false);
    expect(isSendKey(key({ ctrlKey: true }), "enter")).toBe(true);
    expect(isSendKey(key({ key: "a" }), "enter")).toBe(false);
  });

  it("with the Ctrl+Enter setting, only Ctrl/⌘+Enter sends", () => {
    expect(isSendKey(key(), "ctrl-enter")).toBe(false);
    expect(isSendKey(key({ shiftKey: true }), "ctrl-enter")).toBe(false);
    expect(isSendKey(key({ ctrlKey: true }), "ctrl-enter")).toBe(true);
    expect(isSendKey(key({ metaKey: true }), "ctrl-enter")).toBe(true);
  });

  it("never sends while an input method composes", () => {
    expect(isSendKey(key({ isComposing: true }), "enter")).toBe(false);
    expect(isSendKey(key({ keyCode: 229 }), "enter")).toBe(false);
    expect(isSendKey(key({ isComposing: true, ctrlKey: true }), "ctrl-enter")).toBe(false);
  });
});

describe("the send-key setting", () => {
  afterEach(() => localStorage.clear());

  it("defaults to Enter, is kept in localStorage, and the hint follows it", () => {
    expect(loadSendKey()).toBe("enter");
    saveSendKey("ctrl-enter");
    expect(localStorage.getItem("kiln.sendKey")).toBe("ctrl-enter");
    expect(loadSendKey()).toBe("ctrl-enter");
    expect(sendHint("ctrl-enter", false)).toBe("Ctrl+Enter to send · Enter for a new line");
    expect(sendHint("ctrl-enter", true)).toBe("⌘+Enter to send · Enter for a new line");
    saveSendKey("enter");
    expect(loadSendKey()).toBe("enter");
    expect(sendHint("enter", false)).toBe("Enter to send · Shift+Enter for a new line");
  });
});
