// Prints the rows scripts/bench collected (measure, Kiln, anchor, goal, verdict; tab separated)
// as one Markdown table, then the machine it ran on and how many goals were met.
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import os from "node:os";

const file = process.argv[2];
const rows = readFileSync(file, "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => {
    const [measure, kiln, anchor, goal, verdict] = line.split("\t");
    return [measure ?? "", kiln ?? "", anchor ?? "—", goal ?? "—", verdict ?? "unmeasured"];
  });
const header = ["measure", "Kiln", "anchor (same run)", "goal", "verdict"];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
console.log(line(header));
console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
for (const r of rows) console.log(line(r));

const tried = (cmd, args) => {
  try {
    return execFileSync(cmd, args, { encoding: "utf8" }).trim();
  } catch {
    return "?";
  }
};
const met = rows.filter((r) => r[4] === "met").length;
const missed = rows.filter((r) => r[4] === "MISSED").length;
console.log();
console.log(
  `Machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
    `kernel ${os.release()}, ${tried("git", ["--version"])}.`,
);
console.log(`Goals: ${met} met, ${missed} missed, ${rows.length - met - missed} unmeasured.`);
