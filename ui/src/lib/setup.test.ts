// Tests for the set-up helpers: the per-root memory of a saved or dismissed set-up, the form over a detection and save_config's args.
import { afterEach, describe, expect, it } from "vitest";
import { makeDetection, workspace } from "../test/fixtures";
import { editedGates, formOf, isDirty, markSetupDone, orderedGates, saveArgsOf, setupDone, wantsSetup } from "./setup";

afterEach(() => localStorage.clear());

describe("wantsSetup", () => {
  it("is true for a workspace without kiln.toml until its set-up is saved or dismissed, per root", () => {
    const fresh = { ...workspace, configPath: null };
    expect(wantsSetup(fresh)).toBe(true);
    expect(wantsSetup(workspace)).toBe(false);
    expect(wantsSetup(null)).toBe(false);
    markSetupDone("/somewhere/else");
    expect(wantsSetup(fresh)).toBe(true);
    markSetupDone(fresh.root);
    markSetupDone(fresh.root);
    expect(setupDone(fresh.root)).toBe(true);
    expect(wantsSetup(fresh)).toBe(false);
    expect(JSON.parse(localStorage.getItem("kiln.setup.done")!)).toEqual(["/somewhere/else", fresh.root]);
  });

  it("survives a broken stored value", () => {
    localStorage.setItem("kiln.setup.done", "{not json");
    expect(setupDone("/a")).toBe(false);
    markSetupDone("/a");
    expect(setupDone("/a")).toBe(true);
  });
});

describe("the set-up form", () => {
  it("starts from the detection, with an empty command for a gate that has none", () => {
    const form = formOf(makeDetection());
    expect(form.workflow).toBe("direct");
    expect(form.setup).toBe("npm ci --offline");
    expect(form.gates.blog).toEqual({
      dependencies: "npm ci --offline",
      typecheck: "npx tsc --noEmit",
      tests: "npm test",
      format: "npx prettier --check .",
      lint: "",
    });
    expect(isDirty(makeDetection(), form)).toBe(false);
  });

  it("knows which gates were edited, ignoring surrounding spaces", () => {
    const detection = makeDetection();
    const form = formOf(detection);
    form.gates.blog.tests = "  npm test  ";
    expect(editedGates(detection, form)).toEqual([]);
    form.gates.blog.tests = "node --test";
    form.gates.blog.lint = "npx eslint .";
    expect(editedGates(detection, form)).toEqual(["blog/tests", "blog/lint"]);
    expect(isDirty(detection, form)).toBe(true);
  });

  it("sends every gate as shown, trimmed, an empty one as off; the setup null only when none was detected nor typed", () => {
    const detection = makeDetection();
    const form = formOf(detection);
    form.gates.blog.tests = " node --test ";
    expect(saveArgsOf(detection, form, false)).toEqual({
      workflow: "direct",
      setup: "npm ci --offline",
      modules: [
        {
          id: "blog",
          gates: {
            dependencies: "npm ci --offline",
            typecheck: "npx tsc --noEmit",
            tests: "node --test",
            format: "npx prettier --check .",
            lint: "",
          },
        },
      ],
      replace: false,
    });
    form.setup = " ";
    expect(saveArgsOf(detection, form, true).setup).toBe("");
    expect(saveArgsOf(detection, form, true).replace).toBe(true);
    const none = makeDetection({ setup: null });
    expect(saveArgsOf(none, formOf(none), false).setup).toBeNull();
    expect(saveArgsOf(none, { ...formOf(none), setup: "make deps" }, false).setup).toBe("make deps");
  });

  it("orders a module's gates as they run", () => {
    const gates = makeDetection().modules[0].gates;
    const shuffled = [
      gates[4],
      gates[2],
      { gate: "zz-extra", command: null, source: "", hint: null },
      gates[0],
      gates[3],
      gates[1],
    ];
    expect(orderedGates(shuffled).map((g) => g.gate)).toEqual([
      "dependencies",
      "typecheck",
      "tests",
      "format",
      "lint",
      "zz-extra",
    ]);
  });
});
