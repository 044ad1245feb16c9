// The header's bell: turns browser notifications on (asking the browser's permission on this click, never on load) or off.
import { useState } from "react";
import { toggleNotifications, useNotifyStatus } from "./notify";

const TITLE = {
  unsupported: "This browser cannot show notifications here",
  denied: "Notifications are blocked for this site: allow them in the browser's site settings",
  off: "Notify me when a turn ends, needs me or fails",
  on: "Notifications on: click to turn them off",
} as const;

export function NotifyToggle() {
  const status = useNotifyStatus();
  const [asking, setAsking] = useState(false);
  if (status === "unsupported") return null;
  const click = async () => {
    setAsking(true);
    try {
      await toggleNotifications();
    } finally {
      setAsking(false);
    }
  };
  return (
    <button
      type="button"
      className={status === "on" ? "btn btn-small notify-toggle notify-on" : "btn btn-small notify-toggle"}
      aria-pressed={status === "on"}
      disabled={asking || status === "denied"}
      onClick={() => void click()}
      title={TITLE[status]}
      data-testid="notify-toggle"
      data-status={status}
    >
      <Bell off={status !== "on"} />{" "}
      {status === "on" ? "Notifying" : status === "denied" ? "Notifications blocked" : "Notify me"}
    </button>
  );
}

/** A bell, struck through while off (inline: the shared icon set has none). */
function Bell({ off }: { off: boolean }) {
  return (
    <svg
      className="icon"
      width={14}
      height={14}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth={2}
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
    >
      <path d="M18 8a6 6 0 0 0-12 0c0 7-3 9-3 9h18s-3-2-3-9M13.7 21a2 2 0 0 1-3.4 0" />
      {off && <path d="M3 3l18 18" />}
    </svg>
  );
}
