// A finished delivery: what landed and, for a pull request, its link (opened in a new window); the restart note.
import type { DeliveryRun } from "../../api/types";
import { openExternal } from "../../lib/openExternal";
import { Icon } from "../../components/Icon";
import { RelativeTime } from "../../components/RelativeTime";

const VIA: Record<string, string> = { api: "through the provider's API", gh: "through gh", compare: "as a compare link: open it to create the pull request" };

export function DeliveryDone({ run }: { run: DeliveryRun }) {
  const pr = run.pullRequest;
  return (
    <div className="card delivery-done" data-testid="delivery-done">
      <h2 className="done-title">
        <Icon name="check" /> {run.target === "git-pr" ? "Delivered as a pull request" : "Delivered into the workspace"}
        {run.endedAt && <RelativeTime value={run.endedAt} prefix=" · " />}
      </h2>
      {pr && (
        <p className="done-pr">
          <a
            href={pr.url}
            target="_blank"
            rel="noopener noreferrer"
            className="btn btn-primary"
            onClick={(e) => {
              e.preventDefault();
              openExternal(pr.url);
            }}
            data-testid="pr-link"
          >
            {pr.via === "compare" ? "Open the compare link" : pr.number !== null ? `Open pull request #${pr.number}` : "Open the pull request"}
          </a>
          <span className="muted small">
            {" "}
            {pr.created ? "" : "An open pull request was updated. "}Branch <code>{pr.branch}</code>, {VIA[pr.via] ?? pr.via}.
          </span>
        </p>
      )}
      <h3 className="section-title">What landed</h3>
      {run.landed.length === 0 ? (
        <p className="muted small">No files.</p>
      ) : (
        <ul className="landed" data-testid="landed">
          {run.landed.map((p) => (
            <li key={p}>
              <code>{p}</code>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
