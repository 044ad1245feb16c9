// Opens an outside address (a pull request, a compare link) in a new window, without giving it this page (noopener).
export function openExternal(url: string): void {
  window.open(url, "_blank", "noopener");
}
