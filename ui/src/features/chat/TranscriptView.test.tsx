// Tests for the transcript list: every entry in order, and a long transcript switches to virtual rows.
import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { makeEntry } from "../../test/fixtures";
import { TranscriptView, VIRTUALIZE_AT } from "./TranscriptView";

describe("TranscriptView", () => {
  it("renders every entry of a short transcript in order", () => {
    render(<TranscriptView entries={[makeEntry(1), makeEntry(2, { kind: "user" })]} />);
    const entries = screen.getAllByTestId("entry");
    expect(entries.map((e) => e.getAttribute("data-kind"))).toEqual(["agent", "user"]);
  });

  it("virtualizes a long transcript (only a window of rows is in the DOM)", () => {
    const many = Array.from({ length: VIRTUALIZE_AT + 50 }, (_, i) => makeEntry(i + 1));
    render(<TranscriptView entries={many} />);
    const list = screen.getByTestId("transcript").querySelector("ol")!;
    expect(list).toHaveClass("entries-virtual");
    expect(screen.queryAllByTestId("entry").length).toBeLessThan(many.length);
  });
});
