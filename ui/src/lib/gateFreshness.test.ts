// Tests for gate freshness: not run before a module gate ran, stale after a restore, current once gates run again.
import { describe, expect, it } from "vitest";
import { makeEntry, makeGate } from "../test/fixtures";
import { gateFreshness } from "./gateFreshness";

const restore = (id: number) =>
  makeEntry(id, { kind: "system", text: "Restored the workspace to the state after the starting point (turn 0)." });
const gateEntry = (id: number) => makeEntry(id, { kind: "gate", text: "tests passed" });

describe("gateFreshness", () => {
  it("is not run with no results, or with only Kiln's working-copy checks", () => {
    expect(gateFreshness([], [])).toBe("not-run");
    expect(gateFreshness([makeGate(1, { module: null, gate: "module-schema" })], [gateEntry(2)])).toBe("not-run");
    expect(gateFreshness([makeGate(1, { status: "skipped" })], undefined)).toBe("not-run");
  });

  it("is current once a module gate passed or failed", () => {
    expect(gateFreshness([makeGate(1)], [gateEntry(2)])).toBe("current");
    expect(gateFreshness([makeGate(1, { status: "failed" })], undefined)).toBe("current");
  });

  it("is stale after a restore until the gates run again", () => {
    expect(gateFreshness([makeGate(1)], [gateEntry(2), restore(3)])).toBe("stale");
    expect(gateFreshness([makeGate(1)], [gateEntry(2), restore(3), gateEntry(4)])).toBe("current");
  });
});
