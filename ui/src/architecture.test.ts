// No import circles among the UI's files: each file reads from what it imports, never back. An arrow is a relative `import … from`, `export … from` or `import()` (type-only ones too: a reader follows them the same way); tests are left out. The Rust crates are checked by tests/import_circles.rs.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(process.cwd(), "src");

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, out);
    else if (/\.(ts|tsx)$/.test(entry.name) && !/\.(test|d)\.tsx?$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** The files each file imports, from the files' texts (name to source). */
function arrows(files: Map<string, string>): Map<string, Set<string>> {
  const resolve = (from: string, spec: string) => {
    const base = normalize(join(dirname(from), spec));
    return [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts"), join(base, "index.tsx")].find((c) =>
      files.has(c),
    );
  };
  const out = new Map<string, Set<string>>();
  const pattern = /(?:import|export)\s[^'"]*?from\s*["'](\.[^'"]+)["']|import\(\s*["'](\.[^'"]+)["']\s*\)/g;
  for (const [file, text] of files) {
    const to = new Set<string>();
    for (const match of text.matchAll(pattern)) {
      const target = resolve(file, match[1] ?? match[2]);
      if (target && target !== file) to.add(target);
    }
    out.set(file, to);
  }
  return out;
}

/** Each set of more than one file that reach one another, sorted. */
function circles(graph: Map<string, Set<string>>): string[][] {
  const reach = (from: string) => {
    const seen = new Set<string>();
    const todo = [from];
    for (let next = todo.pop(); next !== undefined; next = todo.pop()) {
      for (const to of graph.get(next) ?? []) {
        if (!seen.has(to)) {
          seen.add(to);
          todo.push(to);
        }
      }
    }
    return seen;
  };
  const reached = new Map([...graph.keys()].map((file) => [file, reach(file)]));
  const found = new Map<string, string[]>();
  for (const file of graph.keys()) {
    const circle = [...graph.keys()].filter((other) => reached.get(file)?.has(other) && reached.get(other)?.has(file));
    if (circle.length > 1) found.set(circle.sort().join(" <-> "), circle);
  }
  return [...found.values()];
}

describe("the UI's imports", () => {
  it("form no circle", () => {
    const files = new Map(sourceFiles(SRC).map((file) => [file, readFileSync(file, "utf8")]));
    expect(files.size).toBeGreaterThan(50);
    const found = circles(arrows(files)).map((circle) => circle.map((file) => relative(SRC, file)).join(" <-> "));
    expect(found).toEqual([]);
  });

  it("are read through static, re-exported, type-only and dynamic imports", () => {
    const files = new Map([
      ["/x/a.ts", 'import type { B } from "./b";\n'],
      ["/x/b.ts", 'export { c } from "./dir";\n'],
      ["/x/dir/index.ts", 'const a = () => import("../a");\n'],
      ["/x/d.tsx", 'import { c } from "./dir";\nimport React from "react";\n'],
    ]);
    expect(circles(arrows(files))).toEqual([["/x/a.ts", "/x/b.ts", "/x/dir/index.ts"]]);
  });
});
