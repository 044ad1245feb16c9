// The bottom of the chat while an agent works: its prose streaming in as a growing bubble, and one updating status line.
import { Icon } from "../../components/Icon";
import { Md } from "../../components/Markdown";
import { type LiveView, liveStatusLine, liveStatusTone } from "../../lib/live";
import { roleName } from "../../lib/roles";
import { streamingText } from "../../lib/transcript";
import { ModuleId } from "../../lib/moduleWords";

export function LiveActivity({ live }: { live: LiveView }) {
  const shown = live.text ? streamingText(live.text) : "";
  const text = shown.trim() ? shown : null;
  return (
    <div className="live-activity" data-testid="live" data-phase={live.phase}>
      {text && (
        <article className="entry entry-agent live-bubble" data-testid="live-text" aria-live="polite" aria-busy="true">
          <div className="role-head">
            <Icon name="agent" className="entry-icon" />
            <span className="entry-who">
              {live.role ? roleName(live.role) : live.phase === "planning" ? "Planner agent" : "Agent"}
            </span>
            <ModuleId id={live.module} />
            <span className="live-dot" aria-label="writing" />
          </div>
          <div className="entry-body markdown">
            <Md text={text} />
          </div>
        </article>
      )}
      {live.status && (
        <div
          className={`live-status live-status-${liveStatusTone(live.status)}`}
          data-testid="live-status"
          data-reason={live.status.reason}
          data-kind={live.status.kind}
          role={liveStatusTone(live.status) === "danger" ? "alert" : "status"}
        >
          <Icon name="alert" className="entry-icon" size={14} />
          <span>{liveStatusLine(live.status)}</span>
        </div>
      )}
    </div>
  );
}
