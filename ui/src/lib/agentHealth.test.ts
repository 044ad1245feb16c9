// The words for a driver's version and sign-in: versions as "v1.2.3", "unknown" only when the engine says nothing.
import { describe, expect, it } from "vitest";
import { signInLabel, signInTone, versionLabel } from "./agentHealth";

describe("agent health words", () => {
  it("shows the version number the CLI printed", () => {
    expect(versionLabel({ version: "2.0.14 (Claude Code)" })).toBe("v2.0.14");
    expect(versionLabel({ version: "codex-cli 0.46.0" })).toBe("v0.46.0");
    expect(versionLabel({ version: "codex-cli 0.47.0-alpha.2" })).toBe("v0.47.0-alpha.2");
    expect(versionLabel({ version: "nightly build" })).toBe("nightly build");
    expect(versionLabel({ version: null })).toBe("version unknown");
  });

  it("says signed in or not, and unknown only when the engine could not tell", () => {
    expect(signInLabel({ id: "claude", signedIn: true })).toBe("signed in");
    expect(signInLabel({ id: "codex", signedIn: false })).toBe("not signed in");
    expect(signInLabel({ id: "claude", signedIn: null })).toBe("sign-in unknown");
    expect(signInLabel({ id: "openai-compatible", signedIn: true })).toBe("key stored");
    expect(signInLabel({ id: "openai-compatible", signedIn: false })).toBe("no key");
    expect(signInTone({ signedIn: false })).toBe("warn");
  });
});
