// A session's review comments: add, edit, delete, resolve and "Send to agent" (add_review_comment, update_review_comment,
// delete_review_comment, resolve_review_comment, send_review). Each answers the session, written into the cache at once;
// its session event follows with the same.
import { useMutation } from "@tanstack/react-query";
import type {
  AddReviewCommentArgs,
  ResolveReviewCommentArgs,
  SendReviewArgs,
  SessionView,
  UpdateReviewCommentArgs,
} from "../api/types";
import { useBackend } from "./store";

type Without<T> = Omit<T, "sessionId">;

export function useReviewComments(sessionId: string) {
  const { backend, dispatch } = useBackend();
  const upsert = (session: SessionView) => dispatch({ type: "sessionUpserted", session });
  const add = useMutation({
    mutationFn: (args: Without<AddReviewCommentArgs>) => backend.call("add_review_comment", { sessionId, ...args }),
    onSuccess: upsert,
  });
  const update = useMutation({
    mutationFn: (args: Without<UpdateReviewCommentArgs>) =>
      backend.call("update_review_comment", { sessionId, ...args }),
    onSuccess: upsert,
  });
  const remove = useMutation({
    mutationFn: (commentId: string) => backend.call("delete_review_comment", { sessionId, commentId }),
    onSuccess: upsert,
  });
  const resolve = useMutation({
    mutationFn: (args: Without<ResolveReviewCommentArgs>) =>
      backend.call("resolve_review_comment", { sessionId, ...args }),
    onSuccess: upsert,
  });
  const send = useMutation({
    mutationFn: (args: Without<SendReviewArgs>) => backend.call("send_review", { sessionId, ...args }),
    onSuccess: upsert,
  });
  return { add, update, remove, resolve, send };
}
