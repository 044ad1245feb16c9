// The colour theme: the user's choice (system, dark or light), remembered in localStorage and
// resolved to data-theme="dark" | "light" on <html>, following the system while set to "system".
export type ThemeChoice = "system" | "dark" | "light";

const KEY = "kiln.theme";
const CHOICES: ThemeChoice[] = ["system", "dark", "light"];

export function loadTheme(): ThemeChoice {
  try {
    const stored = localStorage.getItem(KEY);
    return CHOICES.includes(stored as ThemeChoice) ? (stored as ThemeChoice) : "system";
  } catch {
    return "system";
  }
}

export function resolveTheme(choice: ThemeChoice, prefersLight: boolean): "dark" | "light" {
  if (choice === "system") return prefersLight ? "light" : "dark";
  return choice;
}

export function nextTheme(choice: ThemeChoice): ThemeChoice {
  return CHOICES[(CHOICES.indexOf(choice) + 1) % CHOICES.length];
}

function prefersLight(): boolean {
  return typeof matchMedia === "function" && matchMedia("(prefers-color-scheme: light)").matches;
}

export function applyTheme(choice: ThemeChoice): void {
  document.documentElement.dataset.theme = resolveTheme(choice, prefersLight());
  try {
    localStorage.setItem(KEY, choice);
  } catch {
    // Storage may be unavailable (private mode); the theme still applies for this page.
  }
}

/** Applies the stored choice now and again whenever the system theme changes. */
export function startTheme(): void {
  applyTheme(loadTheme());
  if (typeof matchMedia === "function") {
    matchMedia("(prefers-color-scheme: light)").addEventListener("change", () => applyTheme(loadTheme()));
  }
}
