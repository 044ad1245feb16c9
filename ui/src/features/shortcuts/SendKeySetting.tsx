// Settings' one checkbox for this browser: send with Ctrl/⌘+Enter (Enter then makes a new line) instead of Enter. Applies at once; not part of the workspace's saved settings.
import { isMac, saveSendKey, useSendKey } from "./keymap";

export function SendKeySetting() {
  const mode = useSendKey();
  const mod = isMac() ? "⌘" : "Ctrl";
  return (
    <label className="checkbox settings-checkbox" data-testid="send-key-setting">
      <input
        type="checkbox"
        checked={mode === "ctrl-enter"}
        onChange={(e) => saveSendKey(e.target.checked ? "ctrl-enter" : "enter")}
        data-testid="send-with-mod-enter"
      />
      Send messages with {mod}+Enter; Enter makes a new line{" "}
      <span className="muted small">(this browser only; applies at once)</span>
    </label>
  );
}
