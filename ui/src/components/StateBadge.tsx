// Badges for a session: its workflow state, whether an agent is running, and archived/rejected/deleted.
import type { SessionState, SessionView, SetupState } from "../api/types";

const STATE_LABEL: Record<SessionState, string> = {
  planning: "Planning",
  "awaiting-approval": "Awaiting approval",
  editing: "Editing",
  running: "Running",
  review: "Review",
  blocked: "Blocked",
  delivered: "Delivered",
};

const STATE_TONE: Record<SessionState, string> = {
  planning: "info",
  "awaiting-approval": "warn",
  editing: "accent",
  running: "accent",
  review: "info",
  blocked: "danger",
  delivered: "success",
};

export function Badge({ tone = "neutral", children, testId }: { tone?: string; children: string; testId?: string }) {
  return (
    <span className={`badge badge-${tone}`} data-testid={testId}>
      {children}
    </span>
  );
}

export function lifecycleOf(session: SessionView): "deleted" | "rejected" | "archived" | null {
  if (session.deletedAt) return "deleted";
  if (session.rejectedAt) return "rejected";
  if (session.archivedAt) return "archived";
  return null;
}

export function SessionBadges({ session }: { session: SessionView }) {
  const lifecycle = lifecycleOf(session);
  return (
    <span className="badges">
      <span
        className={`badge badge-${STATE_TONE[session.state] ?? "neutral"}`}
        data-testid="state-badge"
        data-state={session.state}
      >
        {session.running && <span className="pulse" aria-hidden="true" />}
        {STATE_LABEL[session.state] ?? session.state}
        {session.running && session.state !== "running" && <span className="sr-only"> (agent running)</span>}
      </span>
      {session.waiting && (
        <Badge tone="warn" testId="waiting-badge">
          Waiting for a free slot
        </Badge>
      )}
      {(session.permissions?.length ?? 0) > 0 && (
        <Badge tone="warn" testId="permission-badge">
          Needs your permission
        </Badge>
      )}
      {lifecycle && (
        <Badge tone={lifecycle === "rejected" ? "danger-muted" : "muted"} testId="lifecycle-badge">
          {lifecycle[0].toUpperCase() + lifecycle.slice(1)}
        </Badge>
      )}
    </span>
  );
}

const SETUP_TONE: Record<SetupState, string> = {
  none: "muted",
  running: "accent",
  passed: "success",
  failed: "danger",
};

export function SetupBadge({ setup }: { setup: SetupState }) {
  return <Badge tone={SETUP_TONE[setup] ?? "neutral"} testId="setup-badge">{`Setup: ${setup}`}</Badge>;
}
