// Tests for transcript entry rendering and the gate pass/fail reading.
import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { makeEntry } from "../test/fixtures";
import { EntryView, gateOutcome } from "./TranscriptEntry";

describe("gateOutcome", () => {
  it("reads pass and fail from the gate's text", () => {
    expect(gateOutcome("Gate `test` passed")).toBe("pass");
    expect(gateOutcome("12 passed, 0 failed")).toBe("pass");
    expect(gateOutcome("tests FAILED (3 failures)")).toBe("fail");
    expect(gateOutcome("✓ build")).toBe("pass");
    expect(gateOutcome("running lint")).toBe("unknown");
  });
});

describe("EntryView", () => {
  it("renders markdown without raw HTML and marks the kind", () => {
    render(<EntryView entry={makeEntry(1, { kind: "system", text: "# Plan\n\n- one\n\n<script>alert(1)</script>" })} />);
    const entry = screen.getByTestId("entry");
    expect(entry).toHaveAttribute("data-kind", "system");
    expect(screen.getByRole("heading", { name: "Plan" })).toBeInTheDocument();
    expect(entry.querySelector("script")).toBeNull();
  });
});
