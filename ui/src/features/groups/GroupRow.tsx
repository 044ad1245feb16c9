// A group of candidate sessions on the dashboard: one row with its title, how many candidates and which was picked, a link to the comparison, and the candidates' own rows under it.
import type { GroupSummary, SessionView } from "../../api/types";
import { Badge } from "../../components/StateBadge";
import { paths } from "../../router";
import { SessionRow } from "../dashboard/SessionRow";

export function GroupRow({
  groupId,
  sessions,
  summary,
}: {
  groupId: string;
  sessions: SessionView[];
  summary: GroupSummary | undefined;
}) {
  const title = summary?.title ?? sessions[0]?.title ?? "Candidates";
  const picked = summary?.pickedSessionId ?? null;
  return (
    <li className="group-row" data-testid="group-row" data-group-id={groupId}>
      <div className="group-row-head">
        <Badge tone="accent">{`Best of ${summary?.sessionIds.length ?? sessions.length}`}</Badge>
        <a className="group-row-title" href={paths.group(groupId)} data-testid="group-compare">
          {title}
        </a>
        {picked ? (
          <Badge tone="success" testId="group-picked">
            Picked
          </Badge>
        ) : (
          <span className="muted small">not picked yet</span>
        )}
        <a className="btn btn-small" href={paths.group(groupId)}>
          Compare
        </a>
      </div>
      <ul className="session-list">
        {sessions.map((s) => (
          <SessionRow key={s.id} session={s} />
        ))}
      </ul>
    </li>
  );
}
