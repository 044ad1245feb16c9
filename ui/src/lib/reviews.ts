// A module's auto-review state from SessionView.reviews: missing, passed, stale (its files changed since) or changes requested.
import type { ReviewView, SessionView } from "../api/types";

export type ReviewState = "missing" | "passed" | "stale" | "changes";

export const REVIEW_LABEL: Record<ReviewState, string> = {
  missing: "not reviewed",
  passed: "review passed",
  stale: "review stale",
  changes: "changes requested",
};

export const REVIEW_TONE: Record<ReviewState, string> = {
  missing: "muted",
  passed: "success",
  stale: "warn",
  changes: "danger",
};

export function reviewOf(session: SessionView, moduleId: string): ReviewView | null {
  return session.reviews.find((r) => r.moduleId === moduleId) ?? null;
}

export function reviewState(review: ReviewView | null): ReviewState {
  if (!review) return "missing";
  if (review.stale) return "stale";
  return review.passed ? "passed" : "changes";
}

/** Changes whenever any module's review changes (a new report, a verdict, staleness). */
export function reviewsKey(session: SessionView | undefined): string {
  return (session?.reviews ?? []).map((r) => `${r.moduleId}:${r.passed}:${r.stale}:${r.createdAt}`).join("|");
}
