// A session's attachments for the composer: uploads (checked first, then add_attachment one at a time), removal, refusals.
import { useCallback, useRef, useState } from "react";
import { toKilnError } from "../api/backend";
import type { SessionView } from "../api/types";
import { nameOf, precheck, readBase64, type Refusal, type UploadItem } from "../lib/attachments";
import { useBackend } from "./store";

export interface SessionAttachments {
  uploads: UploadItem[];
  refusals: Refusal[];
  /** Ids of attachments whose removal is on its way. */
  removing: ReadonlySet<string>;
  /** Checks the files and uploads those that pass; each call replaces the refusals shown. */
  add: (files: File[]) => void;
  remove: (attachmentId: string) => void;
  dismiss: () => void;
}

let keys = 0;
const nextKey = () => `f${++keys}`;

export function useSessionAttachments(session: SessionView): SessionAttachments {
  const { backend, dispatch } = useBackend();
  const sessionId = session.id;
  const [uploads, setUploads] = useState<UploadItem[]>([]);
  const [refusals, setRefusals] = useState<Refusal[]>([]);
  const [removing, setRemoving] = useState<ReadonlySet<string>>(() => new Set());
  // Uploads go one at a time, in order, so the engine's count and name checks see each other.
  const queue = useRef<Promise<void>>(Promise.resolve());
  const queued = useRef(0);
  const held = useRef(session.attachments);
  held.current = session.attachments;

  const add = useCallback(
    (files: File[]) => {
      const refused: Refusal[] = [];
      for (const file of files) {
        const key = nextKey();
        const name = nameOf(file);
        const early = precheck(name, file.size, held.current.length + queued.current);
        if (early) {
          refused.push({ key, name, error: early });
          continue;
        }
        queued.current += 1;
        setUploads((u) => [...u, { key, name, size: file.size }]);
        queue.current = queue.current.then(async () => {
          try {
            const dataBase64 = await readBase64(file);
            const attachment = await backend.call("add_attachment", { sessionId, name, dataBase64 });
            dispatch({ type: "attachmentAdded", sessionId, attachment });
          } catch (e) {
            setRefusals((r) => [...r, { key, name, error: toKilnError(e) }]);
          } finally {
            queued.current -= 1;
            setUploads((u) => u.filter((x) => x.key !== key));
          }
        });
      }
      setRefusals(refused);
    },
    [backend, dispatch, sessionId],
  );

  const remove = useCallback(
    (attachmentId: string) => {
      const name = held.current.find((a) => a.id === attachmentId)?.name ?? attachmentId;
      setRemoving((s) => new Set(s).add(attachmentId));
      backend
        .call("remove_attachment", { sessionId, attachmentId })
        .then((updated) => dispatch({ type: "sessionUpserted", session: updated }))
        .catch((e: unknown) => setRefusals([{ key: nextKey(), name, error: toKilnError(e) }]))
        .finally(() =>
          setRemoving((s) => {
            const next = new Set(s);
            next.delete(attachmentId);
            return next;
          }),
        );
    },
    [backend, dispatch, sessionId],
  );

  const dismiss = useCallback(() => setRefusals([]), []);
  return { uploads, refusals, removing, add, remove, dismiss };
}
