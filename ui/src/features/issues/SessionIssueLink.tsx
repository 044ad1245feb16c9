// The GitHub issue a session started from, in the session's header: `owner/name#12`, opened in the system browser.
import type { IssueLink } from "../../api/types";
import { openExternal } from "../../lib/openExternal";

export function SessionIssueLink({ issue }: { issue: IssueLink | null | undefined }) {
  if (!issue) return null;
  return (
    <a
      className="issue-link small"
      href={issue.url}
      target="_blank"
      rel="noopener noreferrer"
      title={`Started from issue ${issue.repo}#${issue.number}; its pull request closes it`}
      onClick={(e) => {
        e.preventDefault();
        openExternal(issue.url);
      }}
      data-testid="session-issue"
    >
      {issue.repo}#{issue.number}
    </a>
  );
}
