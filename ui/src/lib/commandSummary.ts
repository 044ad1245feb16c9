// A detected command by what it does: Kiln's offline-first installs (`{ npm ci --offline … || npm ci --prefer-offline …; }`) read "npm ci (offline first)"; any other command is shown as written. The whole command stays one click away (a title, the gate's output).

/** Flags that say how, not what: left out of the summary. */
const NOISE =
  /^(--offline|--prefer-offline|--no-audit|--no-fund|--no-index|--no-build-isolation|--disable-pip-version-check|-q|--quiet|--frozen-lockfile|--no-lockfile|--no-package-lock|--no-interaction|--all-extras)$/;
/** What marks the first of two alternatives as the offline try. */
const OFFLINE = /--offline|--no-index|GOPROXY=off/;

export function commandSummary(command: string): string {
  // The hop to the repository's root a module's install makes first.
  const line = command.trim().replace(/^cd\s+\S+\s+&&\s+/, "");
  // Braced groups: the last is the install (a venv's creation comes before it).
  const groups = [...line.matchAll(/\{\s*([^{}]*?)\s*;?\s*\}/g)].map((m) => m[1]);
  const main = groups.length > 0 ? groups[groups.length - 1] : line;
  const alternatives = main.split(/\s*\|\|\s*/);
  if (alternatives.length !== 2 || !OFFLINE.test(alternatives[0])) return command;
  const words = alternatives[0]
    .split(/\s+/)
    .filter((w) => w && !/^[A-Z_][A-Z0-9_]*=/.test(w) && !NOISE.test(w))
    .map((w, i) => (i === 0 ? w.replace(/^.*\//, "") : w));
  return words.length > 0 ? `${words.join(" ")} (offline first)` : command;
}

/** Text whose backticked commands read by what they do (a gate's or the setup's transcript line). */
export function withCommandSummaries(text: string): string {
  return text.replace(/`([^`\n]+)`/g, (whole, command: string) => {
    const summary = commandSummary(command);
    return summary === command ? whole : `\`${summary}\``;
  });
}
