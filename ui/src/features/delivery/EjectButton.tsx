// The session header's Eject link: the orange primary button only when something can be delivered, a plain one (saying why) otherwise; "Delivery" once delivered.
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
      {session.deliveredAt ? "Delivery" : "Eject"}
    </a>
  );
}
