// A muted badge for a session whose files did not change: "No changes yet" before any turn ended, "The agent's turns changed no files" after, so nothing reads as ready to deliver.
import type { SessionView } from "../../api/types";
import { nothingChangedText } from "../../lib/deliverable";

export function NothingChanged({ session }: { session: SessionView }) {
  if (session.deliveredAt || session.state === "delivered" || session.state === "planning") return null;
  const text = nothingChangedText(session);
  if (!text) return null;
  return (
    <span
      className="badge badge-muted"
      data-testid="nothing-changed"
      title="The working copy is the same as where the session started: there is nothing to deliver"
    >
      {text}
    </span>
  );
}
