// The session's details: its modules (and adding one; only where the repository has several), checkpoints and the preview's filmstrip, handoffs, usage and brief; beside the work on a wide window, in a drawer on a narrow one.
import type { SessionView, TranscriptEntry, ModuleInfo } from "../../api/types";
import { AddModule } from "./AddModule";
import { AutoContinueToggle } from "./AutoContinueToggle";
import { CheckpointList } from "../checkpoints/CheckpointList";
import { Filmstrip } from "../screenshots/Filmstrip";
import { SessionModules } from "./SessionModules";
import { UsagePanel } from "./UsagePanel";
import { useModuleWords } from "../../lib/moduleWords";

export interface SessionDetailsProps {
  session: SessionView;
  entries: TranscriptEntry[] | undefined;
  workspaceModules: ModuleInfo[];
  /** The session takes new work (not archived, rejected, deleted or delivered). */
  open: boolean;
}

export function SessionDetails({ session, entries, workspaceModules, open }: SessionDetailsProps) {
  // A repository of one module: its name and "primary" say nothing the title does not.
  const moduleWords = useModuleWords();
  return (
    <>
      {moduleWords && (
        <>
          <h2 className="section-title">Modules</h2>
          <SessionModules modules={session.modules} session={session} entries={entries} editable={open} />
          {open && <AddModule session={session} modules={workspaceModules} />}
        </>
      )}
      <h2 className="section-title">Checkpoints</h2>
      <CheckpointList session={session} closed={!open} entries={entries} />
      <Filmstrip session={session} />
      <h2 className="section-title">Handoffs</h2>
      <AutoContinueToggle session={session} />
      <h2 className="section-title">Usage</h2>
      <UsagePanel usage={session.usage} />
      <h2 className="section-title">Brief</h2>
      <p className="brief-text">{session.brief}</p>
    </>
  );
}
