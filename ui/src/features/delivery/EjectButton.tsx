// The session header's Deliver link (to the eject screen): the orange primary button only when delivering can succeed, a plain one (saying why) otherwise; "Delivery" once delivered.
import type { SessionView } from "../../api/types";
import { ejectAction } from "../../lib/deliverable";
import { paths } from "../../router";

export function EjectButton({ session }: { session: SessionView }) {
  const action = ejectAction(session);
  return (
    <a
      className={action.primary ? "btn btn-small btn-primary" : "btn btn-small"}
      href={paths.deliver(session.id)}
      title={action.reason}
      data-testid="eject"
      data-primary={action.primary}
    >
      {session.deliveredAt ? "Delivery" : "Deliver"}
    </a>
  );
}
