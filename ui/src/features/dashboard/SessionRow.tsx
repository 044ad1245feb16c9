// One dashboard row: title, module ids, created time, when it was delivered, usage (tokens, cost), disk use, state badges and the lifecycle actions.
import type { SessionView } from "../../api/types";
import { costNote, formatCost, formatTokens } from "../../lib/usage";
import { navigate, paths } from "../../router";
import { RelativeTime } from "../../components/RelativeTime";
import { SessionActions } from "../session/SessionActions";
import { SessionBadges } from "../../components/StateBadge";
import { SessionDisk } from "./SessionDisk";

export function SessionRow({ session }: { session: SessionView }) {
  const href = paths.session(session.id);
  const shelved = session.archivedAt || session.rejectedAt || session.deletedAt;
  const usage = session.usage?.total;
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
          <span className="dot" aria-hidden="true">
            ·
          </span>
          <RelativeTime value={session.createdAt} />
          {session.deliveredAt && (
            <>
              <span className="dot" aria-hidden="true">
                ·
              </span>
              <span className="row-delivered" data-testid="delivered">
                <RelativeTime value={session.deliveredAt} prefix="Delivered " />
              </span>
            </>
          )}
          {usage && usage.turns > 0 && (
            <>
              <span className="dot" aria-hidden="true">
                ·
              </span>
              <span className="row-usage" data-testid="row-usage" title={costNote(usage)}>
                {formatTokens(usage)} · {formatCost(usage)}
              </span>
            </>
          )}
          <SessionDisk sessionId={session.id} />
        </div>
      </div>
      <SessionBadges session={session} />
      <SessionActions session={session} />
    </li>
  );
}
