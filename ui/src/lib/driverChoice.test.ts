// driverChoice: the ACP agents are offered once found (or when chosen), by name.
import { describe, expect, it } from "vitest";
import { driverLabel, isAcp, pickable } from "./driverChoice";

const drivers = [
  { id: "claude", available: true, name: null },
  { id: "codex", available: false, name: null },
  { id: "acp:gemini", available: true, name: "Gemini CLI (ACP)" },
  { id: "acp:goose", available: false, name: "Goose (ACP)" },
  { id: "acp:custom", available: false, name: "Custom ACP agent" },
];

describe("driverChoice", () => {
  it("names an ACP agent by its name and the others by their id", () => {
    expect(driverLabel(drivers[2])).toBe("Gemini CLI (ACP)");
    expect(driverLabel(drivers[0])).toBe("claude");
    expect(driverLabel({ id: "openai-compatible" })).toBe("openai-compatible");
    expect(driverLabel({ id: "acp:x", name: "  " })).toBe("acp:x");
  });

  it("offers found ACP agents, every other driver, and the chosen one whatever its state", () => {
    expect(pickable(drivers).map((d) => d.id)).toEqual(["claude", "codex", "acp:gemini"]);
    expect(pickable(drivers, "acp:goose").map((d) => d.id)).toEqual(["claude", "codex", "acp:gemini", "acp:goose"]);
    expect(isAcp("acp:custom")).toBe(true);
    expect(isAcp("claude")).toBe(false);
  });
});
