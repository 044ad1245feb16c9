// Diff helpers: the engine's hunks as react-diff-view hunks, status letters, file keys, group labels and a file's language.
import type { ChangeData, DiffType, HunkData } from "react-diff-view";
import type { DiffGroup, DiffLine, DiffView, FileDiff, FileStatus, Hunk } from "../api/types";

export const STATUS_LETTER: Record<FileStatus, string> = { added: "A", modified: "M", deleted: "D", renamed: "R" };

const DIFF_TYPE: Record<FileStatus, DiffType> = {
  added: "add",
  modified: "modify",
  deleted: "delete",
  renamed: "rename",
};

export function diffTypeOf(status: FileStatus): DiffType {
  return DIFF_TYPE[status];
}

/** One file of a DiffView with the module (or group) it belongs to. */
export interface DiffFileRef {
  key: string;
  moduleId: string;
  directory: string;
  group: DiffGroup;
  file: FileDiff;
}

/** The id the engine gives the files outside every module (direct workflow); no module id holds "(". */
export const OUTSIDE_MODULES_ID = "(repository)";

export const OUTSIDE_MODULES_LABEL = "Repository root (outside every module)";

/** How a group of the diff or the plan is named: its module id, the repository root, or a module not in the session. */
export function groupLabel(moduleId: string, group: DiffGroup): string {
  if (group === "outside") return OUTSIDE_MODULES_LABEL;
  if (group === "other-module") return `${moduleId} (not in the session)`;
  return moduleId;
}

export function fileKey(moduleId: string, path: string): string {
  return `${moduleId}\u0000${path}`;
}

/** Every file of the view, module by module, in the engine's order. */
export function diffFiles(view: DiffView | null): DiffFileRef[] {
  if (!view) return [];
  return view.modules.flatMap((m) =>
    m.files.map((file) => ({
      key: fileKey(m.moduleId, file.path),
      moduleId: m.moduleId,
      directory: m.directory,
      group: m.group,
      file,
    })),
  );
}

/** The path below the module's directory (the whole path for a whole-repository module or one outside it). */
export function pathInModule(path: string, directory: string): string {
  if (directory === "." || directory === "") return path;
  const prefix = directory.endsWith("/") ? directory : `${directory}/`;
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

function stripEol(text: string): string {
  return text.replace(/\r?\n$/, "");
}

/** The `@@ -a,b +c,d @@ heading` line react-diff-view keys hunks by. */
export function hunkHeader(h: Hunk): string {
  if (h.header.startsWith("@@")) return stripEol(h.header);
  const range = `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`;
  const heading = stripEol(h.header).trim();
  return heading ? `${range} ${heading}` : range;
}

/** Our hunk as react-diff-view's (what its parseDiff would give), line numbers counted where the engine left them out. */
export function toHunkData(h: Hunk): HunkData {
  let oldLine = h.oldStart;
  let newLine = h.newStart;
  const changes: ChangeData[] = h.lines.map((line: DiffLine): ChangeData => {
    const content = stripEol(line.text);
    if (line.kind === "add") {
      const lineNumber = line.newLine ?? newLine;
      newLine = lineNumber + 1;
      return { type: "insert", isInsert: true, lineNumber, content };
    }
    if (line.kind === "delete") {
      const lineNumber = line.oldLine ?? oldLine;
      oldLine = lineNumber + 1;
      return { type: "delete", isDelete: true, lineNumber, content };
    }
    const oldLineNumber = line.oldLine ?? oldLine;
    const newLineNumber = line.newLine ?? newLine;
    oldLine = oldLineNumber + 1;
    newLine = newLineNumber + 1;
    return { type: "normal", isNormal: true, oldLineNumber, newLineNumber, content };
  });
  return {
    content: hunkHeader(h),
    oldStart: h.oldStart,
    newStart: h.newStart,
    oldLines: h.oldLines,
    newLines: h.newLines,
    changes,
  };
}

const LANGUAGES: Record<string, string> = {
  ts: "typescript",
  mts: "typescript",
  cts: "typescript",
  tsx: "tsx",
  js: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  jsx: "jsx",
  rs: "rust",
  py: "python",
  json: "json",
  css: "css",
  scss: "scss",
  md: "markdown",
  toml: "toml",
  yml: "yaml",
  yaml: "yaml",
  sh: "bash",
  bash: "bash",
  html: "markup",
  htm: "markup",
  xml: "markup",
  svg: "markup",
  go: "go",
  java: "java",
  c: "c",
  h: "c",
  cc: "cpp",
  cpp: "cpp",
  hpp: "cpp",
  sql: "sql",
  ini: "ini",
};

/** The highlighting language for a path, by extension; null when there is none. */
export function languageOf(path: string): string | null {
  const name = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return null;
  return LANGUAGES[name.slice(dot + 1)] ?? null;
}
