// The shop's typecheck and format gates, run from a module's directory:
//   node ../../scripts/check.mjs syntax   every .js/.mjs file parses (node --check)
//   node ../../scripts/check.mjs format   text files end with a newline, use LF, no tabs
//                                         for indentation and no trailing whitespace
// Plain Node, no dependencies, so the gates run offline in any session.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const SKIP = new Set(['node_modules', '.git', '.kiln']);
const TEXT = new Set(['.js', '.mjs', '.json', '.md', '.css', '.html']);

function files(dir, out = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files(full, out);
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

function syntax(all) {
  const problems = [];
  for (const file of all.filter((f) => /\.m?js$/.test(f))) {
    const run = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' });
    if (run.status !== 0) problems.push(`${file}\n${run.stderr.trim()}`);
  }
  return problems;
}

function format(all) {
  const problems = [];
  for (const file of all.filter((f) => TEXT.has(path.extname(f)))) {
    const text = fs.readFileSync(file, 'utf8');
    if (text.length && !text.endsWith('\n')) problems.push(`${file}: no newline at the end`);
    if (text.includes('\r')) problems.push(`${file}: CRLF line endings`);
    text.split('\n').forEach((line, i) => {
      if (/[ \t]+$/.test(line)) problems.push(`${file}:${i + 1}: trailing whitespace`);
      if (/^\t/.test(line)) problems.push(`${file}:${i + 1}: indented with a tab`);
    });
  }
  return problems;
}

const mode = process.argv[2];
const checks = { syntax, format };
if (!checks[mode]) {
  console.error('usage: node scripts/check.mjs syntax|format');
  process.exit(2);
}
const all = files(process.cwd()).map((f) => path.relative(process.cwd(), f));
const problems = checks[mode](all);
for (const problem of problems) console.log(problem);
console.log(problems.length ? `${problems.length} problem(s) in ${all.length} files` : `${mode}: ${all.length} files checked`);
process.exit(problems.length ? 1 : 0);
