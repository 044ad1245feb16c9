// One dashboard row: title, module ids, state badges, created time, and the lifecycle actions.
import type { SessionView } from "../api/types";
import { navigate, paths } from "../router";
import { RelativeTime } from "./RelativeTime";
import { SessionActions } from "./SessionActions";
import { SessionBadges } from "./StateBadge";

export function SessionRow({ session }: { session: SessionView }) {
  const href = paths.session(session.id);
  const shelved = session.archivedAt || session.rejectedAt || session.deletedAt;
  return (
    <li
      className={shelved ? "session-row session-row-shelved" : "session-row"}
      data-testid="session-row"
      data-session-id={session.id}
      onClick={() => navigate(href)}
    >
      <div className="session-row-main">
        <a className="session-title" href={href} onClick={(e) => e.stopPropagation()}>
          {session.title || "Untitled session"}
        </a>
        <div className="session-meta">
          {session.modules.map((m) => (
            <code key={m.id} className="module-id">
              {m.id}
            </code>
          ))}
          <span className="dot" aria-hidden="true">·</span>
          <RelativeTime value={session.createdAt} />
        </div>
      </div>
      <SessionBadges session={session} />
      <SessionActions session={session} />
    </li>
  );
}
