// J/K (or ]/[) move the selection to the next or previous changed file while the Changes tab is shown.
import { useShortcut } from "./bus";

/** `keys`: the files in list order; `selected`: the shown one. */
export function useDiffFileShortcuts(
  keys: string[],
  selected: string | null,
  select: (key: string) => void,
  active: boolean,
): void {
  useShortcut(
    ["diff-next", "diff-prev"],
    (action) => {
      if (keys.length === 0) return;
      const at = selected === null ? -1 : keys.indexOf(selected);
      const step = action === "diff-next" ? 1 : -1;
      const next = at < 0 ? 0 : Math.min(keys.length - 1, Math.max(0, at + step));
      select(keys[next]);
      // Bring the newly selected row into view once it is marked.
      requestAnimationFrame(() =>
        document.querySelector('[data-testid="diff-file"][aria-current="true"]')?.scrollIntoView({ block: "nearest" }),
      );
    },
    active,
  );
}
