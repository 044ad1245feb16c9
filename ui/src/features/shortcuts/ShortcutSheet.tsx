// The `?` sheet: every keyboard shortcut, grouped by where it works, and the composer's send key.
import { Modal } from "../../components/Modal";
import { isMac, sendHint, useSendKey } from "./keymap";
import { keyLabel, SHORTCUTS, type ShortcutSpec } from "./shortcuts";

const WHERE: ShortcutSpec["where"][] = ["Anywhere", "In a session", "In Changes", "In a text field"];

function Keys({ keys, mac }: { keys: string[]; mac: boolean }) {
  return (
    <span className="shortcut-keys">
      {keys.map((k, i) => (
        <span key={k}>
          {i > 0 && <span className="muted"> or </span>}
          <kbd>{keyLabel(k, mac)}</kbd>
        </span>
      ))}
    </span>
  );
}

export function ShortcutSheet({ onClose }: { onClose: () => void }) {
  const mac = isMac();
  const sendKey = useSendKey();
  return (
    <Modal
      title="Keyboard shortcuts"
      onClose={onClose}
      footer={
        <button type="button" className="btn" onClick={onClose} data-autofocus>
          Close
        </button>
      }
    >
      <div className="shortcut-sheet" data-testid="shortcut-sheet">
        {WHERE.map((where) => (
          <section key={where}>
            <h3 className="shortcut-where">{where}</h3>
            <dl className="shortcut-list">
              {SHORTCUTS.filter((s) => s.where === where).map((s) => (
                <div key={s.action} className="shortcut-row">
                  <dt>
                    <Keys keys={s.keys} mac={mac} />
                  </dt>
                  <dd>{s.label}</dd>
                </div>
              ))}
            </dl>
          </section>
        ))}
        <section>
          <h3 className="shortcut-where">In the composer</h3>
          <p className="small" data-testid="shortcut-send">
            {sendHint(sendKey, mac)}. Change it in{" "}
            <a href="#/settings" onClick={onClose}>
              Settings
            </a>
            .
          </p>
        </section>
      </div>
    </Modal>
  );
}
