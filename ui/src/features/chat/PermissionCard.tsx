// A permission request waiting at the end of the chat: what the agent asks, why Kiln's policy left it to the operator, and one button per option the agent offers (answer_permission); the turn waits until one is picked.
import { useMutation } from "@tanstack/react-query";
import { useId } from "react";
import { toKilnError } from "../../api/backend";
import type { PermissionCard as PermissionCardView, PermissionChoiceKind } from "../../api/types";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Icon } from "../../components/Icon";
import type { ToolKind } from "../../lib/transcript";
import { useBackend } from "../../state/store";
import { KIND_ICON } from "./ToolRow";

/** Allowing once is the usual answer; allowing for good is a choice to make on purpose; refusing reads as such. */
const OPTION_CLASS: Record<PermissionChoiceKind, string> = {
  allow_once: "btn btn-small btn-primary",
  allow_always: "btn btn-small",
  reject_once: "btn btn-small btn-danger-ghost",
  reject_always: "btn btn-small btn-danger-ghost",
};

export interface PermissionCardProps {
  sessionId: string;
  card: PermissionCardView;
}

export function PermissionCard({ sessionId, card }: PermissionCardProps) {
  const { backend, dispatch } = useBackend();
  const titleId = useId();
  const answer = useMutation({
    mutationFn: (optionId: string) => backend.call("answer_permission", { sessionId, requestId: card.id, optionId }),
    // The answer is the session without this card; its event follows with the same.
    onSuccess: (session) => dispatch({ type: "sessionUpserted", session }),
  });
  const icon = KIND_ICON[card.kind as ToolKind] ?? "tool";
  return (
    <section
      className="permission-card"
      data-testid="permission-card"
      data-request-id={card.id}
      aria-labelledby={titleId}
    >
      <div className="permission-head">
        <Icon name={icon} className="entry-icon" />
        <h3 id={titleId} className="permission-heading">
          The agent asks permission
        </h3>
        <span className="badge badge-warn" data-testid="permission-kind">
          {card.kind}
        </span>
      </div>
      <p className="permission-title" data-testid="permission-title">
        <code>{card.title}</code>
      </p>
      {card.locations.length > 0 && (
        <ul className="permission-locations" aria-label="Files it touches">
          {card.locations.map((l) => (
            <li key={l}>
              <code>{l}</code>
            </li>
          ))}
        </ul>
      )}
      {card.why && <p className="muted small permission-why">{card.why}</p>}
      <div className="permission-options">
        {card.options.map((option) => (
          <button
            key={option.id}
            type="button"
            className={OPTION_CLASS[option.kind] ?? "btn btn-small"}
            data-testid="permission-option"
            data-option-id={option.id}
            data-kind={option.kind}
            disabled={answer.isPending}
            onClick={() => answer.mutate(option.id)}
          >
            {answer.isPending && answer.variables === option.id ? "Answering…" : option.name}
          </button>
        ))}
      </div>
      {answer.error && <ErrorMessage error={toKilnError(answer.error)} testId="permission-error" />}
    </section>
  );
}
