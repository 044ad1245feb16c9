// Session view: header with state, each module's review state, Eject and Preview, Chat, Changes and Gates tabs (the live transcript with restore points; the diff; the latest gate results) under the floating preview card, composer, approval card, and a sidebar (modules, checkpoints, handoffs, usage, brief).
import { lazy, Suspense, useCallback, useEffect, useId, useMemo, useRef, useState } from "react";
import type { TranscriptEntry, WorkspaceView } from "../../api/types";
import { AddModule } from "./AddModule";
import { ApprovalCard } from "./ApprovalCard";
import { AutoContinueToggle } from "./AutoContinueToggle";
import { CheckpointList } from "../checkpoints/CheckpointList";
import { Composer, type ComposerPreset } from "../chat/Composer";
import { checkpointsByEntry, EntryCheckpoint } from "../chat/EntryCheckpoint";
import { EmptyState } from "../../components/EmptyState";
import { ErrorMessage } from "../../components/ErrorMessage";
import { GatesPanel } from "../gates/GatesPanel";
import { GatesTabBadge } from "../gates/GatesTabBadge";
import { Loading } from "../../components/Loading";
import { PreviewCard } from "../preview/PreviewCard";
import { RelativeTime } from "../../components/RelativeTime";
import { ReviewStates } from "./ReviewStates";
import { EjectButton } from "../delivery/EjectButton";
import { NothingChanged } from "../delivery/NothingChanged";
import { RunningBar } from "./RunningBar";
import { SessionActions } from "./SessionActions";
import { SessionModules } from "./SessionModules";
import { lifecycleOf, SessionBadges, SetupBadge } from "../../components/StateBadge";
import { Tabs } from "../../components/Tabs";
import { TranscriptView } from "../chat/TranscriptView";
import { UsagePanel } from "./UsagePanel";
import { lastGateEntryId } from "../../lib/gates";
import { navigate, paths } from "../../router";
import { useSession, useTranscript } from "../../state/sessions";
import { useLive } from "../../state/live";
import { useApp } from "../../state/useApp";
import { useSessionShortcuts } from "../shortcuts/useSessionShortcuts";
import { useGates } from "../../state/useGates";
import { usePreview } from "../../state/usePreview";
import { useSettings } from "../../state/useSettings";

// The diff panel (react-diff-view, refractor) loads with the first visit to Changes.
const NO_MODULES: WorkspaceView["modules"] = [];

const DiffPanel = lazy(() => import("../changes/DiffPanel").then((m) => ({ default: m.DiffPanel })));

type Tab = "chat" | "changes" | "gates";

const TABS = [
  { id: "chat" as const, label: "Chat", testId: "tab-chat" },
  { id: "changes" as const, label: "Changes", testId: "tab-changes" },
  { id: "gates" as const, label: "Gates", testId: "tab-gates" },
];

/** `openPreview`: the route asked for the preview card (`?preview=1`): it opens, and the preview starts, at once. */
export function SessionScreen({ sessionId, openPreview = false }: { sessionId: string; openPreview?: boolean }) {
  const { session, removed, ...sessionQuery } = useSession(sessionId);
  const { entries, ...transcriptQuery } = useTranscript(sessionId);
  const live = useLive(sessionId);
  const loading = sessionQuery.loading || transcriptQuery.loading;
  const error = sessionQuery.error ?? transcriptQuery.error;
  const retry = () => {
    sessionQuery.retry();
    transcriptQuery.retry();
  };
  const workspaceModules = useApp()?.workspace?.modules ?? NO_MODULES;
  const [preset, setPreset] = useState<ComposerPreset | null>(null);
  const { settings } = useSettings();
  const [tab, setTab] = useState<Tab>("chat");
  // The diff panel is mounted the first time Changes is opened, then kept (hidden) with its filter and mode.
  const [diffShown, setDiffShown] = useState(false);
  // Likewise the gates panel, with its open outputs.
  const [gatesShown, setGatesShown] = useState(false);
  const showTab = useCallback((t: Tab) => {
    setTab(t);
    if (t === "changes") setDiffShown(true);
    if (t === "gates") setGatesShown(true);
  }, []);
  const tabsId = useId();
  // The Changes tab's module filter: its own selector or the preview's sets it.
  const [diffModule, setDiffModule] = useState("");
  const [previewOpen, setPreviewOpen] = useState(openPreview);
  const [previewPick, setPreviewPick] = useState<string | null>(null);
  const preview = usePreview(sessionId, previewOpen);
  const startPreview = preview.start;
  const showPreview = useCallback(() => {
    setPreviewOpen(true);
    void startPreview();
  }, [startPreview]);
  // Keys 1–4 and `/` (shortcuts sheet): 4 opens the preview, on an open session only.
  useSessionShortcuts((t) => (t !== "preview" ? showTab(t) : session && lifecycleOf(session) === null && !session.deliveredAt ? showPreview() : undefined));
  const closePreview = useCallback(async () => {
    if (await preview.stop()) setPreviewOpen(false);
  }, [preview]);
  const pickPreviewModule = useCallback((id: string) => {
    setPreviewPick(id);
    setDiffModule(id);
  }, []);
  const startedRef = useRef(false);
  useEffect(() => {
    if (openPreview && !startedRef.current) {
      startedRef.current = true;
      void startPreview();
    }
  }, [openPreview, startPreview]);
  // Bumped by every restore: the diff is fetched again.
  const [restores, setRestores] = useState(0);
  const onRestored = useCallback(() => setRestores((n) => n + 1), []);
  // Gate results are held here, so the tab label can summarise them before the tab is opened.
  const gateKey = useMemo(() => lastGateEntryId(entries), [entries]);
  const gates = useGates({ sessionId, gateKey, active: tab === "gates" });
  const moduleOrder = useMemo(() => (session?.modules ?? []).map((m) => m.id), [session?.modules]);
  const tabs = useMemo(
    () => TABS.map((t) => (t.id === "gates" ? { ...t, badge: <GatesTabBadge gates={gates.gates} checking={gates.checking} entries={entries} /> } : t)),
    [gates.gates, gates.checking, entries],
  );
  const closed = !session || lifecycleOf(session) !== null || session.state === "delivered";
  const byEntry = useMemo(() => checkpointsByEntry(session?.checkpoints ?? []), [session?.checkpoints]);
  const footerOf = useCallback(
    (entry: TranscriptEntry) => {
      const checkpoint = byEntry.get(entry.id);
      if (!session || !checkpoint) return null;
      return <EntryCheckpoint session={session} checkpoint={checkpoint} closed={closed} onRestored={onRestored} />;
    },
    [byEntry, session, closed, onRestored],
  );

  const back = (
    <a className="back" href={paths.dashboard}>
      ← Sessions
    </a>
  );

  if (removed && !session) {
    return (
      <section className="screen">
        {back}
        <EmptyState title="This session was removed" actions={<a className="btn" href={paths.dashboard}>Back to sessions</a>}>
          <p>Its record no longer exists in this workspace.</p>
        </EmptyState>
      </section>
    );
  }
  if (!session) {
    return (
      <section className="screen">
        {back}
        {error ? <ErrorMessage error={error} onRetry={retry} /> : <Loading label="Loading session…" />}
      </section>
    );
  }

  const open = !closed;
  const previewModule = session.modules.some((m) => m.id === previewPick) ? (previewPick as string) : (session.modules[0]?.id ?? "");

  return (
    <section className="screen session-screen" aria-labelledby="session-title">
      <div className="session-top">
        {back}
        <div className="screen-head">
          <div className="session-heading">
            <h1 id="session-title">{session.title || "Untitled session"}</h1>
            <div className="session-meta">
              <SessionBadges session={session} />
              <SetupBadge setup={session.setup} />
              <RelativeTime value={session.createdAt} prefix="created " />
              {session.model && <span className="muted small">{session.model}</span>}
              <ReviewStates session={session} />
              <NothingChanged session={session} />
            </div>
          </div>
          <div className="actions">
            {open && (
              <button type="button" className="btn btn-small" aria-pressed={previewOpen} onClick={showPreview} data-testid="preview-button">
                Preview
              </button>
            )}
            {lifecycleOf(session) === null && session.modules.length > 0 && (
              <EjectButton session={session} />
            )}
            <SessionActions session={session} onRemoved={() => navigate(paths.dashboard)} />
          </div>
        </div>
        {error && <ErrorMessage error={error} onRetry={retry} />}
      </div>

      <div className="session-body">
        <div className="transcript-panel">
          <Tabs tabs={tabs} value={tab} onChange={showTab} idBase={tabsId} label="Session views" />
          <div className={previewOpen ? "session-views with-preview" : "session-views"}>
            <div className="tab-panel" role="tabpanel" id={`${tabsId}-chat`} aria-labelledby={`${tabsId}-tab-chat`} hidden={tab !== "chat"}>
              {entries === undefined && loading ? (
                <Loading label="Loading transcript…" />
              ) : !entries || entries.length === 0 ? (
                <div className="transcript" data-testid="transcript">
                  <EmptyState title="No transcript yet">
                    <p>The planner's classification of the brief appears here first, then the agent's work as it happens.</p>
                  </EmptyState>
                </div>
              ) : (
                <TranscriptView entries={entries} footerOf={footerOf} live={live} />
              )}
            </div>
            <div className="tab-panel" role="tabpanel" id={`${tabsId}-changes`} aria-labelledby={`${tabsId}-tab-changes`} hidden={tab !== "changes"}>
              {diffShown && (
                <Suspense fallback={<Loading label="Loading changes…" />}>
                  <DiffPanel
                    sessionId={session.id}
                    modules={session.modules}
                    refreshKey={`${entries?.length ?? 0}:${restores}`}
                    active={tab === "changes"}
                    moduleId={diffModule}
                    onModuleChange={setDiffModule}
                  />
                </Suspense>
              )}
            </div>
            <div className="tab-panel" role="tabpanel" id={`${tabsId}-gates`} aria-labelledby={`${tabsId}-tab-gates`} hidden={tab !== "gates"}>
              {gatesShown && <GatesPanel gates={gates} moduleOrder={moduleOrder} running={session.running} entries={entries} />}
            </div>
            {previewOpen && (
              <PreviewCard
                handle={preview}
                modules={session.modules}
                moduleId={previewModule}
                onModuleChange={pickPreviewModule}
                onClose={() => void closePreview()}
              />
            )}
          </div>
          <RunningBar session={session} entries={entries} />
          {session.state === "awaiting-approval" && open && (
            <ApprovalCard
              session={session}
              entries={entries}
              onRequestChanges={() => setPreset((p) => ({ role: "business-manager", seq: (p?.seq ?? 0) + 1 }))}
            />
          )}
          <Composer session={session} settings={settings} preset={preset} />
        </div>
        <aside className="session-side" aria-label="Session details">
          <h2 className="section-title">Modules</h2>
          <SessionModules modules={session.modules} session={session} entries={entries} editable={open} />
          {open && <AddModule session={session} modules={workspaceModules} />}
          <h2 className="section-title">Checkpoints</h2>
          <CheckpointList session={session} closed={closed} onRestored={onRestored} />
          <h2 className="section-title">Handoffs</h2>
          <AutoContinueToggle session={session} />
          <h2 className="section-title">Usage</h2>
          <UsagePanel usage={session.usage} />
          <h2 className="section-title">Brief</h2>
          <p className="brief-text">{session.brief}</p>
        </aside>
      </div>
    </section>
  );
}
