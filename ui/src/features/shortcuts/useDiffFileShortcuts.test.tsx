// Tests for J/K in the diff: the next and previous file, stopping at the ends, and nothing while the Changes tab is hidden.
import { act, render, screen } from "@testing-library/react";
import { useState } from "react";
import { describe, expect, it } from "vitest";
import { emitShortcut } from "./bus";
import { useDiffFileShortcuts } from "./useDiffFileShortcuts";

function Files({ active }: { active: boolean }) {
  const keys = ["a.ts", "b.ts", "c.ts"];
  const [selected, setSelected] = useState<string | null>(null);
  useDiffFileShortcuts(keys, selected ?? keys[0], setSelected, active);
  return <p data-testid="selected">{selected ?? keys[0]}</p>;
}

describe("useDiffFileShortcuts", () => {
  it("moves to the next and previous file and stops at the ends", () => {
    render(<Files active />);
    const shown = () => screen.getByTestId("selected").textContent;
    act(() => emitShortcut("diff-next"));
    expect(shown()).toBe("b.ts");
    act(() => emitShortcut("diff-next"));
    act(() => emitShortcut("diff-next"));
    expect(shown()).toBe("c.ts");
    act(() => emitShortcut("diff-prev"));
    expect(shown()).toBe("b.ts");
    act(() => emitShortcut("diff-prev"));
    act(() => emitShortcut("diff-prev"));
    expect(shown()).toBe("a.ts");
  });

  it("does nothing while the diff is not shown", () => {
    render(<Files active={false} />);
    act(() => emitShortcut("diff-next"));
    expect(screen.getByTestId("selected").textContent).toBe("a.ts");
  });
});
