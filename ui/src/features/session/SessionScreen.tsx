// Session view: the session rail, a header with state, review states, Eject and Preview; Chat (transcript, approval card, composer), Changes, Terminal, Gates and (as a tab or docked beside them) Preview; and the session's details beside the work or, on a narrow window or beside a docked preview, in a drawer.
import { lazy, Suspense, useCallback, useEffect, useId, useMemo, useRef, useState } from "react";
import type { TranscriptEntry, WorkspaceView } from "../../api/types";
import { ApprovalCard } from "./ApprovalCard";
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
import { ConflictsBar, UpdateButton } from "./UpdateFromWorkspace";
import { SessionActions } from "./SessionActions";
import { SessionDetails } from "./SessionDetails";
import { SessionSidebar } from "./SessionSidebar";
import { SplitPane } from "./SplitPane";
import { Drawer } from "./Drawer";
import { lifecycleOf, SessionBadges, SetupBadge } from "../../components/StateBadge";
import { type TabSpec, Tabs } from "../../components/Tabs";
import { TranscriptView } from "../chat/TranscriptView";
import { ModuleWordsContext, showsModules } from "../../lib/moduleWords";
import { shotsByCheckpoint } from "../../lib/screenshots";
import { loadPreviewLayout, type PreviewLayout, savePreviewLayout } from "../../lib/layout";
import { NARROW_SESSION, useMediaQuery } from "../../lib/useMediaQuery";
import { navigate, paths } from "../../router";
import { useSession, useTranscript } from "../../state/sessions";
import { useCheckpointMark } from "../../state/checkpoints";
import { useLive } from "../../state/live";
import { useApp } from "../../state/useApp";
import { useSessionShortcuts } from "../shortcuts/useSessionShortcuts";
import { useGates } from "../../state/useGates";
import { usePreview } from "../../state/usePreview";
import { useSettings } from "../../state/useSettings";
import { SessionIssueLink } from "../issues/SessionIssueLink";

const NO_MODULES: WorkspaceView["modules"] = [];

// The diff panel (react-diff-view, refractor) loads with the first visit to Changes.
const DiffPanel = lazy(() => import("../changes/DiffPanel").then((m) => ({ default: m.DiffPanel })));
// Likewise xterm.js with the first visit to Terminal.
const TerminalPanel = lazy(() => import("../terminal/TerminalPanel").then((m) => ({ default: m.TerminalPanel })));

type Tab = "chat" | "changes" | "gates" | "terminal" | "preview";

const TABS = [
  { id: "chat" as const, label: "Chat", testId: "tab-chat" },
  { id: "changes" as const, label: "Changes", testId: "tab-changes" },
  // Before Gates, which stays the last of the fixed tabs (its badge sums up the checks).
  { id: "terminal" as const, label: "Terminal", testId: "tab-terminal" },
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
  const narrow = useMediaQuery(NARROW_SESSION);
  // The rail folds on a narrow window unless the user chose otherwise here.
  const [railChoice, setRailChoice] = useState<boolean | null>(null);
  const railCollapsed = railChoice ?? narrow;
  const [detailsOpen, setDetailsOpen] = useState(false);
  const [previewLayout, setPreviewLayout] = useState<PreviewLayout>(() => loadPreviewLayout(narrow));
  const [tab, setTab] = useState<Tab>(() => (openPreview && previewLayout === "tab" ? "preview" : "chat"));
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
    if (previewLayout === "tab") setTab("preview");
    void startPreview();
  }, [startPreview, previewLayout]);
  // Keys 1–5 and `/` (shortcuts sheet): 4 opens the preview where it docks, on an open session only.
  useSessionShortcuts((t) =>
    t !== "preview"
      ? showTab(t)
      : session && lifecycleOf(session) === null && !session.deliveredAt
        ? showPreview()
        : undefined,
  );
  const changePreviewLayout = useCallback((layout: PreviewLayout) => {
    setPreviewLayout(layout);
    savePreviewLayout(layout);
    setTab((t) => (layout === "tab" ? "preview" : t === "preview" ? "chat" : t));
  }, []);
  const previewAsTab = previewOpen && previewLayout === "tab";
  const previewSplit = previewOpen && previewLayout === "split";
  // The Preview tab goes when the preview closes or docks beside the chat.
  const shownTab: Tab = tab === "preview" && !previewAsTab ? "chat" : tab;
  // The details give their column to the work on a narrow window, and to the chat and the preview when it docks.
  const detailsInDrawer = narrow || previewSplit;
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
  // Moves with every checkpoint made or restored to (the engine's events): the diff is fetched again.
  const checkpointMark = useCheckpointMark(sessionId);
  // Gate results are held here, so the tab label can summarise them before the tab is opened.
  const gates = useGates({ sessionId, active: tab === "gates" });
  const moduleOrder = useMemo(() => (session?.modules ?? []).map((m) => m.id), [session?.modules]);
  const tabs = useMemo(() => {
    const list: TabSpec<Tab>[] = TABS.map((t) =>
      t.id === "gates"
        ? { ...t, badge: <GatesTabBadge gates={gates.gates} checking={gates.checking} entries={entries} /> }
        : t,
    );
    if (previewAsTab) list.push({ id: "preview", label: "Preview", testId: "tab-preview" });
    return list;
  }, [gates.gates, gates.checking, entries, previewAsTab]);
  const closed = !session || lifecycleOf(session) !== null || session.state === "delivered";
  const byEntry = useMemo(() => checkpointsByEntry(session?.checkpoints ?? []), [session?.checkpoints]);
  // The Changes tab's review comments: absent from the view when there are none.
  const review = useMemo(
    () => ({ comments: session?.reviewComments ?? [], running: session?.running ?? false, closed }),
    [session?.reviewComments, session?.running, closed],
  );
  const shots = useMemo(() => shotsByCheckpoint(session?.screenshots), [session?.screenshots]);
  const footerOf = useCallback(
    (entry: TranscriptEntry) => {
      const checkpoint = byEntry.get(entry.id);
      if (!session || !checkpoint) return null;
      return (
        <EntryCheckpoint
          session={session}
          checkpoint={checkpoint}
          closed={closed}
          screenshot={shots.get(checkpoint.sequence)}
        />
      );
    },
    [byEntry, shots, session, closed],
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
        <EmptyState
          title="This session was removed"
          actions={
            <a className="btn" href={paths.dashboard}>
              Back to sessions
            </a>
          }
        >
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
  const previewModule = session.modules.some((m) => m.id === previewPick)
    ? (previewPick as string)
    : (session.modules[0]?.id ?? "");

  const previewCard = previewOpen && (
    <PreviewCard
      sessionId={session.id}
      handle={preview}
      modules={session.modules}
      moduleId={previewModule}
      onModuleChange={pickPreviewModule}
      onClose={() => void closePreview()}
      layout={previewLayout}
      onLayoutChange={changePreviewLayout}
    />
  );
  const details = (
    <SessionDetails session={session} entries={entries} workspaceModules={workspaceModules} open={open} />
  );

  const work = (
    <div className="transcript-panel">
      <Tabs tabs={tabs} value={shownTab} onChange={showTab} idBase={tabsId} label="Session views" />
      <div className="session-views">
        <div
          className="tab-panel"
          role="tabpanel"
          id={`${tabsId}-chat`}
          aria-labelledby={`${tabsId}-tab-chat`}
          hidden={shownTab !== "chat"}
        >
          {entries === undefined && loading ? (
            <Loading label="Loading transcript…" />
          ) : !entries || entries.length === 0 ? (
            <div className="transcript" data-testid="transcript">
              <EmptyState title="No transcript yet">
                <p>
                  The planner's classification of the brief appears here first, then the agent's work as it happens.
                </p>
              </EmptyState>
            </div>
          ) : (
            <TranscriptView entries={entries} footerOf={footerOf} live={live} permissions={session.permissions} />
          )}
        </div>
        <div
          className="tab-panel changes-panel"
          role="tabpanel"
          id={`${tabsId}-changes`}
          aria-labelledby={`${tabsId}-tab-changes`}
          hidden={shownTab !== "changes"}
        >
          {diffShown && (
            <Suspense fallback={<Loading label="Loading changes…" />}>
              <DiffPanel
                sessionId={session.id}
                modules={session.modules}
                refreshKey={`${entries?.length ?? 0}:${checkpointMark}`}
                active={shownTab === "changes"}
                moduleId={diffModule}
                onModuleChange={setDiffModule}
                review={review}
                conflicts={session.conflicts}
              />
            </Suspense>
          )}
        </div>
        <div
          className="tab-panel"
          role="tabpanel"
          id={`${tabsId}-gates`}
          aria-labelledby={`${tabsId}-tab-gates`}
          hidden={shownTab !== "gates"}
        >
          {gatesShown && (
            <GatesPanel gates={gates} moduleOrder={moduleOrder} running={session.running} entries={entries} />
          )}
        </div>
        {/* Mounted only while shown: leaving the tab detaches from the terminals, which run on. */}
        {shownTab === "terminal" && (
          <div
            className="tab-panel"
            role="tabpanel"
            id={`${tabsId}-terminal`}
            aria-labelledby={`${tabsId}-tab-terminal`}
          >
            <Suspense fallback={<Loading label="Loading the terminal…" />}>
              <TerminalPanel sessionId={session.id} open={open} />
            </Suspense>
          </div>
        )}
        {previewAsTab && (
          <div
            className="tab-panel"
            role="tabpanel"
            id={`${tabsId}-preview`}
            aria-labelledby={`${tabsId}-tab-preview`}
            hidden={shownTab !== "preview"}
          >
            {previewCard}
          </div>
        )}
      </div>
      <RunningBar session={session} entries={entries} />
      {!session.running && (
        <ConflictsBar session={session} onShow={shownTab === "changes" ? undefined : () => showTab("changes")} />
      )}
      {/* The approval card and the composer belong to the chat: the other tabs get the full height. */}
      {session.state === "awaiting-approval" && open && (
        <div className="approval-slot" hidden={shownTab !== "chat"}>
          <ApprovalCard
            session={session}
            entries={entries}
            onRequestChanges={() => setPreset((p) => ({ role: "business-manager", seq: (p?.seq ?? 0) + 1 }))}
          />
        </div>
      )}
      <div className="composer-slot" hidden={shownTab !== "chat"}>
        <Composer session={session} settings={settings} preset={preset} />
      </div>
    </div>
  );

  return (
    <ModuleWordsContext.Provider value={showsModules(workspaceModules, session)}>
      <section
        className="session-screen"
        aria-labelledby="session-title"
        data-narrow={narrow || undefined}
        data-details={detailsInDrawer ? "drawer" : "side"}
      >
        <SessionSidebar
          currentId={session.id}
          collapsed={railCollapsed}
          onToggle={() => setRailChoice(!railCollapsed)}
        />
        <div className="session-main">
          <div className="session-top">
            <div className="screen-head">
              <div className="session-heading">
                <h1 id="session-title" title={session.title || undefined}>
                  {session.title || "Untitled session"}
                </h1>
                <div className="session-meta">
                  <SessionBadges session={session} />
                  <SetupBadge setup={session.setup} />
                  <RelativeTime value={session.createdAt} prefix="created " />
                  <SessionIssueLink issue={session.issue} />
                  {session.model && <span className="muted small">{session.model}</span>}
                  <ReviewStates session={session} />
                  <NothingChanged session={session} />
                </div>
              </div>
              <div className="actions">
                {open && (
                  <button
                    type="button"
                    className="btn btn-small"
                    aria-pressed={previewOpen}
                    onClick={showPreview}
                    data-testid="preview-button"
                  >
                    Preview
                  </button>
                )}
                {lifecycleOf(session) === null && !session.deliveredAt && <UpdateButton session={session} />}
                {lifecycleOf(session) === null && <EjectButton session={session} />}
                <SessionActions session={session} onRemoved={() => navigate(paths.dashboard)} />
                {detailsInDrawer && (
                  <button
                    type="button"
                    className="btn btn-small"
                    aria-expanded={detailsOpen}
                    onClick={() => setDetailsOpen(true)}
                    title="Modules, checkpoints, handoffs, usage and the brief"
                    data-testid="details-button"
                  >
                    Details
                  </button>
                )}
              </div>
            </div>
            {error && <ErrorMessage error={error} onRetry={retry} />}
          </div>

          <div className="session-body">
            <div className="session-work">
              {/* The work stays mounted where it is whether or not the preview docks beside it. */}
              <SplitPane label="Resize the preview" start={work} end={previewSplit ? previewCard : null} />
            </div>
            {!detailsInDrawer && (
              <aside className="session-side" aria-label="Session details" data-testid="session-side">
                {details}
              </aside>
            )}
          </div>
        </div>
        {detailsInDrawer && detailsOpen && (
          <Drawer title="Session details" onClose={() => setDetailsOpen(false)} testId="session-drawer">
            {details}
          </Drawer>
        )}
      </section>
    </ModuleWordsContext.Provider>
  );
}
