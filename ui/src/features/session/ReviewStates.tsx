// Each module's auto-review state as a small badge (passed, stale, changes requested, not reviewed), with the verdict's reason as its title.
import type { SessionView } from "../../api/types";
import { REVIEW_LABEL, REVIEW_TONE, reviewOf, reviewState } from "../../lib/reviews";

export function ReviewStates({ session }: { session: SessionView }) {
  if (session.modules.length === 0) return null;
  const many = session.modules.length > 1;
  return (
    <span className="review-states" data-testid="review-states">
      {session.modules.map((m) => {
        const review = reviewOf(session, m.id);
        const state = reviewState(review);
        return (
          <span
            key={m.id}
            className={`badge badge-${REVIEW_TONE[state]}`}
            data-testid="review-state"
            data-module={m.id}
            data-review={state}
            title={review ? review.summary : "No auto-review report yet"}
          >
            {many
              ? `${m.id}: ${REVIEW_LABEL[state]}`
              : REVIEW_LABEL[state][0].toUpperCase() + REVIEW_LABEL[state].slice(1)}
          </span>
        );
      })}
    </span>
  );
}
