// Tests for checkpoint names: the message that led to each, never two alike, and the current one.
import { describe, expect, it } from "vitest";
import { makeCheckpoint, makeEntry } from "../test/fixtures";
import { currentSequence, nameCheckpoints, shortName } from "./checkpoints";

const user = (id: number, text: string) => makeEntry(id, { kind: "user", text });
const agent = (id: number) => makeEntry(id, { kind: "agent" });

describe("nameCheckpoints", () => {
  const entries = [user(1, "Add a coupon field"), agent(2), user(3, "Add a coupon field"), agent(4), agent(5)];
  const checkpoints = [
    makeCheckpoint(0),
    makeCheckpoint(1, { label: "Backend Engineer in @shop/cart", entryId: 2 }),
    makeCheckpoint(2, { label: "Backend Engineer in @shop/cart", entryId: 4 }),
    makeCheckpoint(3, { label: "Backend Engineer in @shop/cart", entryId: 5 }),
  ];

  it("names each checkpoint by the message before its entry, and no two alike", () => {
    const names = nameCheckpoints(checkpoints, entries).map((n) => n.name);
    expect(names).toEqual([
      "The starting point",
      "“Add a coupon field”",
      "“Add a coupon field” (2)",
      "“Add a coupon field” (3)",
    ]);
    expect(new Set(names).size).toBe(names.length);
  });

  it("falls back to the engine's labels, made unique, without a transcript", () => {
    const names = nameCheckpoints(checkpoints, undefined).map((n) => n.name);
    expect(names).toEqual([
      "The starting point",
      "Backend Engineer in @shop/cart",
      "Backend Engineer in @shop/cart (2)",
      "Backend Engineer in @shop/cart (3)",
    ]);
  });

  it("uses the engine's labels and current marker once it sends them", () => {
    const marked = [
      { ...makeCheckpoint(0), current: false },
      { ...makeCheckpoint(1, { label: "add a coupon field", entryId: 2 }), current: true },
      { ...makeCheckpoint(2, { label: "add a coupon field", entryId: 4 }), current: false },
    ];
    const named = nameCheckpoints(marked, entries);
    expect(named.map((n) => n.name)).toEqual(["The starting point", "Add a coupon field", "Add a coupon field (2)"]);
    expect(named.map((n) => n.current)).toEqual([false, true, false]);
  });

  it("marks the latest checkpoint current, or the one a restore went back to", () => {
    expect(
      nameCheckpoints(checkpoints, entries)
        .filter((n) => n.current)
        .map((n) => n.checkpoint.sequence),
    ).toEqual([3]);
    const restored = [
      ...entries,
      makeEntry(6, {
        kind: "system",
        text: "Restored the workspace to the state after Backend Engineer in @shop/cart (turn 1).",
      }),
    ];
    expect(currentSequence(checkpoints, restored)).toBe(1);
    // A later turn's checkpoint after the restore is where the files are again.
    const later = [...checkpoints, makeCheckpoint(4, { entryId: 8 })];
    expect(currentSequence(later, [...restored, user(7, "Again"), agent(8)])).toBe(4);
  });

  it("shortens long messages on a word", () => {
    const name = shortName(
      "Make the cart page show the coupon discount next to the subtotal and explain it\nsecond line",
    );
    expect(name.length).toBeLessThanOrEqual(61);
    expect(name.endsWith("…")).toBe(true);
    expect(shortName("One line\nTwo")).toBe("One line");
  });
});
