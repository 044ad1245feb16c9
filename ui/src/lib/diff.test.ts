// Tests for the diff helpers: hunks for react-diff-view, headers, paths in a module, languages by extension.
import { describe, expect, it } from "vitest";
import type { Hunk } from "../api/types";
import { diffFiles, hunkHeader, languageOf, pathInModule, STATUS_LETTER, toHunkData } from "./diff";

const hunk: Hunk = {
  oldStart: 10,
  oldLines: 3,
  newStart: 12,
  newLines: 3,
  header: "fn total()",
  lines: [
    { kind: "context", oldLine: 10, newLine: 12, text: "a\n" },
    { kind: "delete", oldLine: 11, newLine: null, text: "b\n" },
    { kind: "add", oldLine: null, newLine: 13, text: "c\r\n" },
    { kind: "context", oldLine: null, newLine: null, text: "d" },
  ],
};

describe("toHunkData", () => {
  it("turns our lines into react-diff-view changes, counting missing line numbers", () => {
    const data = toHunkData(hunk);
    expect(data).toMatchObject({
      content: "@@ -10,3 +12,3 @@ fn total()",
      oldStart: 10,
      newStart: 12,
      oldLines: 3,
      newLines: 3,
    });
    expect(data.changes).toEqual([
      { type: "normal", isNormal: true, oldLineNumber: 10, newLineNumber: 12, content: "a" },
      { type: "delete", isDelete: true, lineNumber: 11, content: "b" },
      { type: "insert", isInsert: true, lineNumber: 13, content: "c" },
      { type: "normal", isNormal: true, oldLineNumber: 12, newLineNumber: 14, content: "d" },
    ]);
  });

  it("keeps a header that is already a @@ line", () => {
    expect(hunkHeader({ ...hunk, header: "@@ -1 +1 @@ main\n" })).toBe("@@ -1 +1 @@ main");
    expect(hunkHeader({ ...hunk, header: "" })).toBe("@@ -10,3 +12,3 @@");
  });
});

describe("diff helpers", () => {
  it("lists files module by module with unique keys", () => {
    const file = {
      path: "a/x.ts",
      oldPath: null,
      status: "added" as const,
      binary: false,
      tooLarge: false,
      additions: 1,
      deletions: 0,
      hunks: [],
    };
    const refs = diffFiles({
      modules: [
        { moduleId: "@a", directory: "a", group: "module", baseSequence: 0, files: [file] },
        { moduleId: "@b", directory: ".", group: "module", baseSequence: 0, files: [file] },
      ],
    });
    expect(refs.map((r) => r.moduleId)).toEqual(["@a", "@b"]);
    expect(new Set(refs.map((r) => r.key)).size).toBe(2);
    expect(diffFiles(null)).toEqual([]);
  });

  it("shows paths below the module's directory", () => {
    expect(pathInModule("modules/cart/src/a.ts", "modules/cart")).toBe("src/a.ts");
    expect(pathInModule("README.md", ".")).toBe("README.md");
    expect(pathInModule("other/b.ts", "modules/cart")).toBe("other/b.ts");
  });

  it("knows status letters and languages by extension", () => {
    expect(Object.values(STATUS_LETTER)).toEqual(["A", "M", "D", "R"]);
    expect(languageOf("src/App.tsx")).toBe("tsx");
    expect(languageOf("engine/src/lib.rs")).toBe("rust");
    expect(languageOf("Cargo.TOML")).toBe("toml");
    expect(languageOf("Makefile")).toBeNull();
    expect(languageOf(".gitignore")).toBeNull();
    expect(languageOf("notes.xyz")).toBeNull();
  });
});
