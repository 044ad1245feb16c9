// What the bench parts written in Node share: the repo root, the binaries they run (from
// CARGO_TARGET_DIR when set; KILN_BIN and KILN_MODEL_SERVER_BIN override), which build that is, the
// median, and printing a row in the bench-row protocol (scripts/bench).
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const TARGET = path.resolve(ROOT, process.env.CARGO_TARGET_DIR ?? "target");
// Set before the browser harness is imported: it reads them once.
process.env.KILN_BIN ??= path.join(TARGET, "debug/kiln");
process.env.KILN_MODEL_SERVER_BIN ??= path.join(TARGET, "debug/kiln-model-server");

/** Said beside Kiln's figure: a debug build answers the API several times slower than a release one. */
export const BUILD = /[/\\]release[/\\]/.test(process.env.KILN_BIN) ? "release build" : "debug build";

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** One table row on stdout; everything else a part prints goes to its log. */
export function row(measure, kiln, anchor, goal, verdict) {
  console.log(["bench-row", measure, kiln, anchor, goal, verdict].join("\t"));
}
