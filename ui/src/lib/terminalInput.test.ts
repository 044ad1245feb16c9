// Tests for terminal input: one write at a time, in order, what is typed meanwhile merged into the next write, pieces within the byte limit and never inside a character.
import { describe, expect, it } from "vitest";
import { createInputBatcher, splitUtf8 } from "./terminalInput";

const utf8 = (text: string) => new TextEncoder().encode(text).length;

/** A send whose calls wait until the test lets each one answer. */
function controlledSend() {
  const sent: string[] = [];
  const answers: ((ok: boolean) => void)[] = [];
  const send = (data: string) => {
    sent.push(data);
    return new Promise<void>((resolve, reject) =>
      answers.push((ok) => (ok ? resolve() : reject(new Error("refused")))),
    );
  };
  /** Answers the oldest unanswered write and lets its follow-up start. */
  const answer = async (ok = true) => {
    answers.shift()?.(ok);
    await new Promise((r) => setTimeout(r, 0));
  };
  return { sent, send, answer };
}

describe("splitUtf8", () => {
  it("keeps short text whole", () => {
    expect(splitUtf8("ls -la\r", 64)).toEqual(["ls -la\r"]);
    expect(splitUtf8("", 64)).toEqual([]);
  });

  it("cuts at the byte limit without splitting a character", () => {
    const text = "aé€😀".repeat(50);
    const pieces = splitUtf8(text, 7);
    expect(pieces.join("")).toBe(text);
    for (const p of pieces) expect(utf8(p)).toBeLessThanOrEqual(7);
    // No lone surrogate: each piece encodes and decodes to itself.
    for (const p of pieces) expect(new TextDecoder().decode(new TextEncoder().encode(p))).toBe(p);
  });

  it("gives a character larger than the limit a piece of its own rather than losing it", () => {
    expect(splitUtf8("a😀b", 2)).toEqual(["a", "😀", "b"]);
  });
});

describe("createInputBatcher", () => {
  it("sends the first key at once and merges what is typed while it is on its way, in order", async () => {
    const { sent, send, answer } = controlledSend();
    const input = createInputBatcher(send);
    input.push("e");
    expect(sent).toEqual(["e"]);
    for (const key of "cho hi") input.push(key);
    input.push("\r");
    expect(sent).toEqual(["e"]);
    expect(input.busy).toBe(true);
    await answer();
    expect(sent).toEqual(["e", "cho hi\r"]);
    await answer();
    expect(input.busy).toBe(false);
    input.push("x");
    expect(sent).toEqual(["e", "cho hi\r", "x"]);
  });

  it("splits a paste over the limit into writes sent one after another", async () => {
    const { sent, send, answer } = controlledSend();
    const input = createInputBatcher(send, undefined, 4);
    input.push("abcdefghij");
    expect(sent).toEqual(["abcd"]);
    await answer();
    await answer();
    await answer();
    expect(sent).toEqual(["abcd", "efgh", "ij"]);
    expect(input.busy).toBe(false);
  });

  it("reports a refused write and still sends what follows", async () => {
    const { sent, send, answer } = controlledSend();
    const errors: unknown[] = [];
    const input = createInputBatcher(send, (e) => errors.push(e));
    input.push("a");
    input.push("b");
    await answer(false);
    expect(errors).toHaveLength(1);
    expect(sent).toEqual(["a", "b"]);
    await answer();
    expect(input.busy).toBe(false);
  });

  it("ignores empty input", () => {
    const { sent, send } = controlledSend();
    createInputBatcher(send).push("");
    expect(sent).toEqual([]);
  });
});
