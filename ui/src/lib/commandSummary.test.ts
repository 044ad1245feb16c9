// Tests for the command summaries: Kiln's offline-first installs by what they do, anything else as written.
import { describe, expect, it } from "vitest";
import { commandSummary, withCommandSummaries } from "./commandSummary";

describe("commandSummary", () => {
  it("reads the offline-first installs by what they do", () => {
    expect(
      commandSummary("{ npm ci --offline --no-audit --no-fund || npm ci --prefer-offline --no-audit --no-fund; }"),
    ).toBe("npm ci (offline first)");
    expect(
      commandSummary(
        "cd ../.. && { pnpm install --frozen-lockfile --offline || pnpm install --frozen-lockfile --prefer-offline; }",
      ),
    ).toBe("pnpm install (offline first)");
    expect(commandSummary("{ cargo fetch --offline || cargo fetch; }")).toBe("cargo fetch (offline first)");
    expect(commandSummary("{ GOFLAGS=-mod=mod GOPROXY=off go mod download || go mod download; }")).toBe(
      "go mod download (offline first)",
    );
    expect(
      commandSummary(
        "{ [ -x .venv/bin/python ] || python3 -m venv --system-site-packages .venv; } && { .venv/bin/python -m pip install --disable-pip-version-check -q --no-index --no-build-isolation -e . || .venv/bin/python -m pip install --disable-pip-version-check -q -e .; }",
      ),
    ).toBe("python -m pip install -e . (offline first)");
  });

  it("shows any other command as written", () => {
    for (const command of [
      "npm test",
      "node --test --test-reporter=spec",
      "bun install",
      "cargo test --workspace",
      "a || b",
    ])
      expect(commandSummary(command)).toBe(command);
  });

  it("rewrites the backticked commands of a transcript line, and only those", () => {
    expect(
      withCommandSummaries(
        "**dependencies** passed in 6.2 s — `{ npm ci --offline --no-audit --no-fund || npm ci --prefer-offline --no-audit --no-fund; }` · `x`",
      ),
    ).toBe("**dependencies** passed in 6.2 s — `npm ci (offline first)` · `x`");
  });
});
