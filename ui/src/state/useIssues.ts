// The delivery repository's open GitHub issues (list_issues, a query) for the new-session picker: asked only once the operator opens "From a GitHub issue", kept for the workspace like its other answers.
import { useQuery } from "@tanstack/react-query";
import { type KilnError, toKilnError } from "../api/backend";
import type { IssueSummary } from "../api/types";
import { keys, questionQuery } from "./queries";
import { useBackend } from "./store";
import { useApp } from "./useApp";

export interface IssuesState {
  issues: IssueSummary[] | null;
  error: KilnError | null;
  loading: boolean;
  reload: () => void;
}

export function useIssues(enabled: boolean): IssuesState {
  const { backend } = useBackend();
  const root = useApp()?.workspace?.root;
  const query = useQuery({ ...questionQuery(backend, "list_issues"), enabled: enabled && !!root });
  const { refetch } = query;
  return {
    issues: query.data ?? null,
    error: query.error && !query.isFetching ? toKilnError(query.error) : null,
    loading: query.isFetching,
    reload: () => void refetch(),
  };
}

export interface IssueState {
  issue: IssueSummary | null;
  error: KilnError | null;
  loading: boolean;
}

/** One issue by address or number (get_issue), when `reference` is set: the title shown before creating. */
export function useIssue(reference: string | null): IssueState {
  const { backend } = useBackend();
  const query = useQuery({
    queryKey: keys.issue(reference ?? ""),
    queryFn: () => backend.call("get_issue", { issue: reference ?? "" }),
    enabled: reference !== null,
  });
  return {
    issue: reference === null ? null : (query.data ?? null),
    error: reference !== null && query.error ? toKilnError(query.error) : null,
    loading: reference !== null && query.isFetching,
  };
}
