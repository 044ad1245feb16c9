// The session rail: the workspace's sessions with a live status dot each (running, needs you, failed, idle), to switch without the dashboard; it folds to each session's initials with its dot.
import { useMemo } from "react";
import type { SessionView } from "../../api/types";
import { Icon } from "../../components/Icon";
import { lifecycleOf } from "../../components/StateBadge";
import { sessionStatus, STATUS_LABEL } from "../../lib/sessionStatus";
import { paths } from "../../router";
import { useLive } from "../../state/live";
import { useSessions } from "../../state/sessions";

/** The workspace's open sessions, newest first (the dashboard's list query, kept live by events), and the current one. */
function useRailSessions(currentId: string): SessionView[] {
  const { all } = useSessions();
  return useMemo(
    () =>
      (all ?? [])
        .filter((s) => s.id === currentId || lifecycleOf(s) === null)
        .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || b.id.localeCompare(a.id)),
    [all, currentId],
  );
}

/** Up to two letters from a title's first words ("Fix the cart" → "FT"), digits kept; "?" for none. */
/** Words a brief starts with that tell sessions apart by nothing ("Add a …", "Fix the …"). */
const PLAIN_WORDS = new Set([
  "a",
  "an",
  "the",
  "to",
  "of",
  "in",
  "on",
  "for",
  "and",
  "add",
  "fix",
  "make",
  "update",
  "change",
]);

export function initials(title: string): string {
  const words = title.match(/[\p{L}\p{N}]+/gu) ?? [];
  // The words that name the change, where there are some: "Add a coupon helper" is CH, not AA.
  const telling = words.filter((w) => !PLAIN_WORDS.has(w.toLowerCase()));
  const letters = (telling.length > 0 ? telling : words).slice(0, 2).map((w) => w[0].toUpperCase());
  return letters.join("") || "?";
}

/** One session: its status dot (from the session and its live view) and title; the current one marked. */
function RailItem({ session, current, collapsed }: { session: SessionView; current: boolean; collapsed: boolean }) {
  const status = sessionStatus(session, useLive(session.id));
  const title = session.title || "Untitled session";
  return (
    <li>
      <a
        className="session-rail-item"
        href={paths.session(session.id)}
        aria-current={current ? "page" : undefined}
        title={`${title} — ${STATUS_LABEL[status]}`}
        data-testid="rail-session"
        data-session-id={session.id}
        data-status={status}
      >
        {collapsed ? (
          // Folded, each session is its initials with its status dot on them: told apart at a glance.
          <span className="rail-initials" aria-hidden="true" data-testid="rail-initials">
            {initials(title)}
            <span className={`status-dot status-${status} rail-initials-dot`} />
          </span>
        ) : (
          <span className={`status-dot status-${status}`} aria-hidden="true" />
        )}
        <span className={collapsed ? "sr-only" : "session-rail-name"}>{title}</span>
        <span className="sr-only">, {STATUS_LABEL[status]}</span>
      </a>
    </li>
  );
}

export interface SessionSidebarProps {
  currentId: string;
  collapsed: boolean;
  onToggle: () => void;
}

export function SessionSidebar({ currentId, collapsed, onToggle }: SessionSidebarProps) {
  const sessions = useRailSessions(currentId);
  return (
    <nav
      className={collapsed ? "session-rail session-rail-collapsed" : "session-rail"}
      aria-label="Sessions"
      data-testid="session-rail"
    >
      <div className="session-rail-head">
        {!collapsed && (
          <a className="session-rail-title" href={paths.dashboard} title="All sessions (the dashboard)">
            Sessions
          </a>
        )}
        <button
          type="button"
          className="btn btn-small session-rail-toggle"
          onClick={onToggle}
          aria-expanded={!collapsed}
          aria-label={collapsed ? "Show the session list" : "Fold the session list"}
          title={collapsed ? "Show the session list" : "Fold the session list"}
          data-testid="session-rail-toggle"
        >
          <Icon name="chevron" size={14} className={collapsed ? undefined : "flip"} />
        </button>
      </div>
      <ul className="session-rail-list">
        {sessions.map((s) => (
          <RailItem key={s.id} session={s} current={s.id === currentId} collapsed={collapsed} />
        ))}
      </ul>
      <a
        className="session-rail-new btn btn-small"
        href={paths.newSession}
        title="New session"
        aria-label="New session"
        data-testid="rail-new-session"
      >
        <Icon name="plus" size={14} />
        {!collapsed && <span>New</span>}
      </a>
    </nav>
  );
}
