// Tests for the gate helpers: grouping and order, counts (failing before apart), status words (not run included), durations and head/tail output.
import { describe, expect, it } from "vitest";
import { makeGate } from "../test/fixtures";
import {
  gateDisplayName,
  countGates,
  formatDuration,
  gateLabel,
  gateNoteText,
  gateOutput,
  groupGates,
  statusLabel,
} from "./gates";

describe("groupGates", () => {
  it("puts the working copy first, then the session's modules in order, each in gate order", () => {
    const gates = [
      makeGate(1, { module: "@shop/api", gate: "tests" }),
      makeGate(2, { module: "@shop/cart", gate: "format" }),
      makeGate(3, { module: null, gate: "spec-schema" }),
      makeGate(4, { module: "@shop/cart", gate: "dependencies" }),
      makeGate(5, { module: "@shop/cart", gate: "tests" }),
      makeGate(6, { module: null, gate: "module-schema" }),
      makeGate(7, { module: "@shop/zeta", gate: "typecheck" }),
      makeGate(8, { module: "@shop/cart", gate: "typecheck" }),
      makeGate(9, { module: "@shop/cart", gate: "lint" }),
    ];
    const groups = groupGates(gates, ["@shop/cart", "@shop/api"]);
    expect(groups.map((g) => g.module)).toEqual([null, "@shop/cart", "@shop/api", "@shop/zeta"]);
    expect(groups[0].gates.map((g) => g.gate)).toEqual(["spec-schema", "module-schema"]);
    expect(groups[1].gates.map((g) => g.gate)).toEqual(["dependencies", "typecheck", "tests", "format", "lint"]);
  });
});

describe("countGates", () => {
  it("counts each status", () => {
    const gates = [
      makeGate(1),
      makeGate(2, { status: "failed" }),
      makeGate(3, { status: "skipped" }),
      makeGate(4, { status: "skipped" }),
      makeGate(5, { status: "not-configured", gate: "lint" }),
      makeGate(6, { status: "failing-before", gate: "typecheck" }),
    ];
    expect(countGates(gates)).toEqual({
      passed: 1,
      failed: 1,
      "failing-before": 1,
      skipped: 2,
      "not-configured": 1,
    });
  });
});

describe("countGates and the setup", () => {
  it("leaves out the session's setup when it passed, as the chat's gate runs do, and counts it when it failed", () => {
    const setup = makeGate(1, { module: null, gate: "dependencies" });
    const gates = [setup, makeGate(2, { gate: "tests" }), makeGate(3, { gate: "typecheck" })];
    expect(countGates(gates).passed).toBe(2);
    expect(countGates([{ ...setup, status: "failed" }, ...gates.slice(1)])).toMatchObject({ passed: 2, failed: 1 });
  });
});

describe("statusLabel", () => {
  it("reads not-configured as two words and keeps the others", () => {
    expect(statusLabel("not-configured")).toBe("not configured");
    expect(statusLabel("skipped")).toBe("skipped");
    expect(statusLabel("failing-before")).toBe("failing before");
  });

  it("reads a skipped gate with a not-run note as not run, with the note's reason", () => {
    const notRun = { status: "skipped" as const, note: "not run: setup failed: npm ERR! 404 left-pad" };
    expect(gateLabel(notRun)).toBe("not run");
    expect(gateNoteText(notRun)).toBe("setup failed: npm ERR! 404 left-pad");
    expect(gateLabel({ status: "skipped", note: "" })).toBe("skipped");
    const before = { status: "failing-before" as const, note: "3 failures, all there before this session" };
    expect(gateLabel(before)).toBe("failing before");
    expect(gateNoteText(before)).toBe("3 failures, all there before this session");
  });
});

describe("gateDisplayName", () => {
  it("names Kiln's own checks by what they check, the setup as setup, the project's gates as they are", () => {
    expect(gateDisplayName({ module: null, gate: "module-schema" })).toBe("manifests");
    expect(gateDisplayName({ module: null, gate: "spec-schema" })).toBe("specifications");
    expect(gateDisplayName({ module: null, gate: "dependencies" })).toBe("setup");
    expect(gateDisplayName({ module: "web", gate: "dependencies" })).toBe("dependencies");
    expect(gateDisplayName({ module: "web", gate: "tests" })).toBe("tests");
  });
});

describe("formatDuration", () => {
  it("shows ms, seconds with a decimal, then minutes", () => {
    expect(formatDuration(0)).toBe("0 ms");
    expect(formatDuration(420)).toBe("420 ms");
    expect(formatDuration(3240)).toBe("3.2 s");
    expect(formatDuration(120_000)).toBe("2 min");
    expect(formatDuration(125_400)).toBe("2 min 5 s");
  });
});

describe("gateOutput", () => {
  it("keeps a head alone when the tail is empty, and trims the newlines at the seam otherwise", () => {
    expect(gateOutput(makeGate(1, { outputHead: "all\n", outputTail: "" }))).toEqual({ head: "all\n", tail: "" });
    expect(gateOutput(makeGate(1, { outputHead: "start\n\n", outputTail: "\nend\n" }))).toEqual({
      head: "start",
      tail: "end\n",
    });
  });
});
