// A finished delivery and what happens next: for the workspace target, that the files sit there uncommitted (how many, and how to look at them); for a pull request, its branch and link (opened in a new window); then what landed.
import type { DeliveryRun, PullRequestView } from "../../api/types";
import { openExternal } from "../../lib/openExternal";
import { Icon } from "../../components/Icon";
import { RelativeTime } from "../../components/RelativeTime";

const VIA: Record<string, string> = {
  api: "through the provider's API",
  gh: "through gh",
  compare: "as a compare link: open it to create the pull request",
};

/** "1 file", "3 files". */
export function fileCount(n: number): string {
  return `${n} file${n === 1 ? "" : "s"}`;
}

/** What the operator does next, in words: the sentence the done screen leads with. */
export function nextStepText(run: DeliveryRun): string {
  const n = run.landed.length;
  if (run.target === "git-pr") {
    const pr = run.pullRequest;
    if (!pr) return `${fileCount(n)} went to a branch; no pull request link came back.`;
    if (pr.via === "compare")
      return `${fileCount(n)} pushed to branch ${pr.branch}. No pull request was opened: open the compare link to create it.`;
    return `${fileCount(n)} pushed to branch ${pr.branch}; ${pr.created ? "the pull request is open for review" : "the open pull request was updated"}. Your workspace is unchanged.`;
  }
  if (n === 0) return "No file was written to the workspace.";
  return `${fileCount(n)} now sit in your workspace, not committed. Review them with git status and git diff, then commit them yourself.`;
}

function PullRequestLink({ pr }: { pr: PullRequestView }) {
  return (
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
        {pr.via === "compare"
          ? "Open the compare link"
          : pr.number !== null
            ? `Open pull request #${pr.number}`
            : "Open the pull request"}
      </a>
      <span className="muted small">
        {" "}
        {pr.created ? "" : "An open pull request was updated. "}Branch <code data-testid="pr-branch">{pr.branch}</code>,{" "}
        {VIA[pr.via] ?? pr.via}.
      </span>
    </p>
  );
}

/** The workspace target's next step: the files are there, uncommitted (and how to look at them, in git or not). */
function WorkspaceNext({ run, isGit }: { run: DeliveryRun; isGit: boolean }) {
  const n = run.landed.length;
  if (n === 0) {
    return (
      <p className="done-next" data-testid="done-next" data-target="workspace">
        No file was written to the workspace.
      </p>
    );
  }
  return (
    <div className="done-next" data-testid="done-next" data-target="workspace">
      <p>
        <strong>{fileCount(n)}</strong> now sit in your workspace, <strong>not committed</strong>. Nothing was committed
        or pushed.
      </p>
      {isGit ? (
        <p className="small">
          Review them with <code>git status</code> and <code>git diff</code>, then commit them yourself.
        </p>
      ) : (
        <p className="small">The workspace is not a git repository: review them in your editor.</p>
      )}
    </div>
  );
}

function PullRequestNext({ run }: { run: DeliveryRun }) {
  const pr = run.pullRequest;
  return (
    <div className="done-next" data-testid="done-next" data-target="git-pr">
      <p>{nextStepText(run)}</p>
      {pr && <PullRequestLink pr={pr} />}
    </div>
  );
}

/** `isGit`: the workspace is a git repository (the default when unknown), so git can show the change. */
export function DeliveryDone({ run, isGit = true }: { run: DeliveryRun; isGit?: boolean }) {
  return (
    <div className="card delivery-done" data-testid="delivery-done">
      <h2 className="done-title">
        <Icon name="check" /> {run.target === "git-pr" ? "Delivered as a pull request" : "Delivered into the workspace"}
        {run.endedAt && <RelativeTime value={run.endedAt} prefix=" · " />}
      </h2>
      {run.target === "git-pr" || run.pullRequest ? (
        <PullRequestNext run={run} />
      ) : (
        <WorkspaceNext run={run} isGit={isGit} />
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
