// Tests for the query-backed store: events write the cache without refetches, resync refetches, an older answer never overwrites an event, transcripts merge by id, live views, and an event re-renders only the views reading what changed.
import { act, render, screen, waitFor } from "@testing-library/react";
import { useRef } from "react";
import { describe, expect, it } from "vitest";
import type { KilnEvent, LiveView, PreviewView, TranscriptEntry } from "../api/types";
import { makeLive, fakeBackend, makeEntry, makePreview, makeSession } from "../test/fixtures";
import { renderWithStore } from "../test/render";
import { useLive } from "./live";
import { FIRST_ENTRIES, keys, makeQueryClient } from "./queries";
import { useSession, useSessions, useTranscript } from "./sessions";
import { StoreProvider, useBackend } from "./store";
import { usePreview } from "./usePreview";

let eventId = 0;
const ev = (body: KilnEvent["body"]): KilnEvent => ({ id: ++eventId, at: "2025-01-01T00:00:00Z", body });
const calls = (backend: ReturnType<typeof fakeBackend>, command: string) =>
  backend.call.mock.calls.filter(([c]) => c === command).length;

/** A promise resolved from outside, for an answer that is still on its way. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function SessionTitle({ id }: { id: string }) {
  const { session } = useSession(id);
  return <p data-testid={`title-${id}`}>{session ? `${session.title} (${session.state})` : "loading"}</p>;
}

function Transcript({ id }: { id: string }) {
  const { entries } = useTranscript(id);
  return <p data-testid={`transcript-${id}`}>{entries ? entries.map((e) => e.id).join(",") : "loading"}</p>;
}

describe("store", () => {
  it("a session event updates the session and the list without a refetch", async () => {
    const backend = fakeBackend({
      get_session: () => makeSession(),
      list_sessions: () => [makeSession(), makeSession({ id: "s2", title: "Other" })],
    });
    function Both() {
      const { sessions } = useSessions();
      return (
        <>
          <SessionTitle id="s1" />
          <p data-testid="list">{sessions.map((s) => `${s.id}:${s.state}`).join(" ")}</p>
        </>
      );
    }
    renderWithStore(<Both />, backend);
    await waitFor(() => expect(screen.getByTestId("title-s1")).toHaveTextContent("Add coupons to the cart (planning)"));
    await waitFor(() => expect(screen.getByTestId("list")).toHaveTextContent("s1:planning"));
    const before = backend.call.mock.calls.length;

    act(() =>
      backend.emit(
        ev({ type: "session", session: makeSession({ state: "editing", updatedAt: "2025-01-01T10:05:00Z" }) }),
      ),
    );
    expect(screen.getByTestId("title-s1")).toHaveTextContent("(editing)");
    expect(screen.getByTestId("list")).toHaveTextContent("s1:editing");
    // A session the list did not hold joins it.
    act(() =>
      backend.emit(ev({ type: "session", session: makeSession({ id: "s3", createdAt: "2025-01-03T00:00:00Z" }) })),
    );
    expect(screen.getByTestId("list").textContent?.startsWith("s3:planning")).toBe(true);
    expect(backend.call.mock.calls.length).toBe(before);
  });

  it("keeps a session event newer than a list answer that was on its way", async () => {
    const list = deferred<ReturnType<typeof makeSession>[]>();
    const backend = fakeBackend({ list_sessions: () => list.promise });
    function List() {
      const { sessions } = useSessions();
      return <p data-testid="list">{sessions.map((s) => `${s.id}:${s.state}`).join(" ")}</p>;
    }
    renderWithStore(<List />, backend);
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("list_sessions", {}));
    act(() =>
      backend.emit(
        ev({ type: "session", session: makeSession({ state: "editing", updatedAt: "2025-01-01T10:05:00Z" }) }),
      ),
    );
    await act(async () => list.resolve([makeSession(), makeSession({ id: "s2" })]));
    await waitFor(() => expect(screen.getByTestId("list")).toHaveTextContent("s1:editing"));
    expect(screen.getByTestId("list")).toHaveTextContent("s2:planning");
  });

  it("an operation's answer older than a session event that came first does not overwrite it", async () => {
    const backend = fakeBackend({ get_session: () => makeSession() });
    function Probe() {
      const { dispatch } = useBackend();
      return (
        <>
          <SessionTitle id="s1" />
          <button
            type="button"
            onClick={() =>
              dispatch({
                type: "sessionUpserted",
                session: makeSession({ state: "review", updatedAt: "2025-01-01T10:01:00Z" }),
              })
            }
          >
            answer
          </button>
        </>
      );
    }
    renderWithStore(<Probe />, backend);
    await waitFor(() => expect(screen.getByTestId("title-s1")).toHaveTextContent("(planning)"));
    act(() =>
      backend.emit(
        ev({ type: "session", session: makeSession({ state: "editing", updatedAt: "2025-01-01T10:05:00Z" }) }),
      ),
    );
    act(() => screen.getByText("answer").click());
    expect(screen.getByTestId("title-s1")).toHaveTextContent("(editing)");
  });

  it("a resync refetches what is shown", async () => {
    let title = "First";
    const backend = fakeBackend({ get_session: () => makeSession({ title }), get_transcript: () => [makeEntry(1)] });
    renderWithStore(
      <>
        <SessionTitle id="s1" />
        <Transcript id="s1" />
      </>,
      backend,
    );
    await waitFor(() => expect(screen.getByTestId("title-s1")).toHaveTextContent("First"));
    await waitFor(() => expect(screen.getByTestId("transcript-s1")).toHaveTextContent("1"));
    const states = calls(backend, "get_state");
    title = "Second";
    backend.handle({ get_transcript: () => [makeEntry(2)] });

    act(() => backend.emit(ev({ type: "resync" })));
    await waitFor(() => expect(screen.getByTestId("title-s1")).toHaveTextContent("Second"));
    await waitFor(() => expect(screen.getByTestId("transcript-s1")).toHaveTextContent("1,2"));
    // The transcript asks only for what follows the last entry held; the app state is fetched again too.
    expect(backend.call).toHaveBeenLastCalledWith("get_transcript", { sessionId: "s1", after: 1 });
    expect(calls(backend, "get_state")).toBe(states + 1);
  });

  it("a get_preview answer that was on its way when a preview event came does not overwrite the event", async () => {
    const answer = deferred<PreviewView>();
    const backend = fakeBackend({
      start_preview: () => makePreview({ state: "starting" }),
      get_preview: () => answer.promise,
    });
    function Card() {
      const { preview, start } = usePreview("s1", true);
      return (
        <>
          <button type="button" onClick={() => void start()}>
            start
          </button>
          <p data-testid="preview">{preview?.state ?? "none"}</p>
        </>
      );
    }
    renderWithStore(<Card />, backend);
    act(() => screen.getByText("start").click());
    await waitFor(() => expect(screen.getByTestId("preview")).toHaveTextContent("starting"));

    // A resync asks get_preview again; a preview event comes before its (older) answer.
    act(() => backend.emit(ev({ type: "resync" })));
    await waitFor(() => expect(backend.call).toHaveBeenCalledWith("get_preview", { sessionId: "s1" }));
    act(() => backend.emit(ev({ type: "preview", preview: makePreview({ state: "ready" }) })));
    expect(screen.getByTestId("preview")).toHaveTextContent("ready");
    await act(async () => answer.resolve(makePreview({ state: "starting" })));
    await act(async () => {});
    expect(screen.getByTestId("preview")).toHaveTextContent("ready");
  });

  it("a start answer that comes after a newer preview event does not overwrite it", async () => {
    const answer = deferred<PreviewView>();
    const backend = fakeBackend({ start_preview: () => answer.promise });
    function Card() {
      const { preview, start, busy } = usePreview("s1", true);
      return (
        <>
          <button type="button" onClick={() => void start()}>
            start
          </button>
          <p data-testid="preview">{preview?.state ?? "none"}</p>
          <p data-testid="busy">{busy ?? "idle"}</p>
        </>
      );
    }
    renderWithStore(<Card />, backend);
    act(() => screen.getByText("start").click());
    await waitFor(() => expect(screen.getByTestId("busy")).toHaveTextContent("start_preview"));
    act(() => backend.emit(ev({ type: "preview", preview: makePreview({ state: "ready" }) })));
    await act(async () => answer.resolve(makePreview({ state: "starting" })));
    await waitFor(() => expect(screen.getByTestId("busy")).toHaveTextContent("idle"));
    expect(screen.getByTestId("preview")).toHaveTextContent("ready");
  });

  it("a long transcript shows its newest entries first, then puts the older ones before them", async () => {
    const all = Array.from({ length: FIRST_ENTRIES + 5 }, (_, i) => makeEntry(i + 1));
    const older = deferred<TranscriptEntry[]>();
    const backend = fakeBackend({
      get_transcript: (args) => {
        if (args.last) return all.slice(-args.last);
        if (args.before) return older.promise;
        return all;
      },
    });
    renderWithStore(<Transcript id="s1" />, backend);
    const newest = all.slice(-FIRST_ENTRIES).map((e) => e.id);
    await waitFor(() => expect(screen.getByTestId("transcript-s1")).toHaveTextContent(newest.join(",")));
    expect(screen.getByTestId("transcript-s1").textContent?.startsWith("6,")).toBe(true);
    expect(backend.call).toHaveBeenCalledWith("get_transcript", { sessionId: "s1", before: 6 });

    // An entry that arrives meanwhile stays, after the older ones come in front.
    act(() => backend.emit(ev({ type: "transcript", entry: makeEntry(FIRST_ENTRIES + 6) })));
    await act(async () => older.resolve(all.slice(0, 5)));
    const whole = [...all.map((e) => e.id), FIRST_ENTRIES + 6].join(",");
    await waitFor(() => expect(screen.getByTestId("transcript-s1")).toHaveTextContent(whole));
  });

  it("a short transcript is whole in its first answer and asks for nothing older", async () => {
    const backend = fakeBackend({ get_transcript: () => [makeEntry(1), makeEntry(2)] });
    renderWithStore(<Transcript id="s1" />, backend);
    await waitFor(() => expect(screen.getByTestId("transcript-s1")).toHaveTextContent("1,2"));
    expect(calls(backend, "get_transcript")).toBe(1);
  });

  it("transcript events append in id order without duplicates, also while the first fetch is on its way", async () => {
    const first = deferred<TranscriptEntry[]>();
    const backend = fakeBackend({ get_transcript: () => first.promise });
    renderWithStore(<Transcript id="s1" />, backend);
    await waitFor(() =>
      expect(backend.call).toHaveBeenCalledWith("get_transcript", { sessionId: "s1", last: FIRST_ENTRIES }),
    );

    // Before the first answer: entry 3 waits for it (the answer may or may not hold it).
    act(() => backend.emit(ev({ type: "transcript", entry: makeEntry(3) })));
    expect(screen.getByTestId("transcript-s1")).toHaveTextContent("loading");
    await act(async () => first.resolve([makeEntry(1), makeEntry(2)]));
    await waitFor(() => expect(screen.getByTestId("transcript-s1")).toHaveTextContent("1,2,3"));

    act(() => {
      backend.emit(ev({ type: "transcript", entry: makeEntry(5) }));
      backend.emit(ev({ type: "transcript", entry: makeEntry(4) }));
      backend.emit(ev({ type: "transcript", entry: makeEntry(5) }));
      backend.emit(ev({ type: "transcript", entry: makeEntry(3) }));
      // Another session's entry stays out of this transcript.
      backend.emit(ev({ type: "transcript", entry: makeEntry(6, { sessionId: "s2" }) }));
    });
    expect(screen.getByTestId("transcript-s1")).toHaveTextContent(/^1,2,3,4,5$/);
  });

  it("keeps the latest live view per session and clears it with an empty one", async () => {
    const backend = fakeBackend();
    function Live({ id }: { id: string }) {
      const live = useLive(id);
      return (
        <p data-testid={`live-${id}`}>
          {live ? `${live.phase}:${live.text ?? ""}:${live.status?.reason ?? ""}:${live.output ?? ""}` : "none"}
        </p>
      );
    }
    const { client } = renderWithStore(
      <>
        <Live id="s1" />
        <Live id="s2" />
      </>,
      backend,
    );
    const view = (over: Partial<LiveView>): LiveView => makeLive(over);
    const emitLive = (live: LiveView) => backend.emit(ev({ type: "live", live }));
    // Connected (the app state is held), so the events stream.
    await waitFor(() => expect(client.getQueryData(keys.app)).toBeDefined());
    act(() => emitLive(view({ text: "Adding" })));
    act(() => emitLive(view({ text: "Adding coupons" })));
    expect(screen.getByTestId("live-s1")).toHaveTextContent("turn:Adding coupons::");
    expect(screen.getByTestId("live-s2")).toHaveTextContent("none");
    act(() =>
      emitLive(
        view({
          phase: "planning",
          status: {
            kind: "retrying",
            message: "overloaded",
            attempt: 2,
            maxAttempts: 10,
            reason: "overloaded",
            httpStatus: 529,
          },
        }),
      ),
    );
    expect(screen.getByTestId("live-s1")).toHaveTextContent("planning::overloaded:");
    act(() => emitLive(view({})));
    expect(screen.getByTestId("live-s1")).toHaveTextContent("none");
    // A running command's output alone is held, and an entry reaching the transcript leaves it.
    act(() => emitLive(view({ output: "tick 1" })));
    act(() =>
      backend.emit(
        ev({ type: "transcript", entry: makeEntry(8, { sessionId: "s1", kind: "tool", text: "**execute** `x`" }) }),
      ),
    );
    expect(screen.getByTestId("live-s1")).toHaveTextContent("turn:::tick 1");
    act(() => emitLive(view({})));
    expect(screen.getByTestId("live-s1")).toHaveTextContent("none");
    // The text reaches the transcript: its live copy goes with that event, before the engine's clear.
    act(() => emitLive(view({ text: "Done." })));
    act(() =>
      backend.emit(ev({ type: "transcript", entry: makeEntry(9, { sessionId: "s1", kind: "agent", text: "Done." }) })),
    );
    expect(screen.getByTestId("live-s1")).toHaveTextContent("none");
  });

  it("an event about one session re-renders only the views reading it", async () => {
    const backend = fakeBackend({
      get_session: (args) => makeSession({ id: args.sessionId }),
      get_transcript: (args) => [makeEntry(1, { sessionId: args.sessionId })],
    });
    const renders = { a: 0, b: 0, backend: 0 };
    function Counted({ id, name }: { id: string; name: "a" | "b" }) {
      renders[name]++;
      const { entries } = useTranscript(id);
      return <p data-testid={`count-${id}`}>{entries?.length ?? 0}</p>;
    }
    function BackendOnly() {
      renders.backend++;
      const { connection } = useBackend();
      const mounted = useRef(true);
      return <p data-testid="conn">{mounted.current ? connection.status : ""}</p>;
    }
    const client = makeQueryClient();
    render(
      <StoreProvider backend={backend} client={client}>
        <Counted id="s1" name="a" />
        <Counted id="s2" name="b" />
        <BackendOnly />
      </StoreProvider>,
    );
    await waitFor(() => expect(screen.getByTestId("conn")).toHaveTextContent("connected"));
    await waitFor(() => expect(screen.getByTestId("count-s1")).toHaveTextContent("1"));
    await waitFor(() => expect(screen.getByTestId("count-s2")).toHaveTextContent("1"));
    await waitFor(() => expect(client.isFetching()).toBe(0));
    const before = { ...renders };

    act(() => backend.emit(ev({ type: "transcript", entry: makeEntry(2, { sessionId: "s1" }) })));
    act(() => backend.emit(ev({ type: "session", session: makeSession({ id: "s1", state: "editing" }) })));
    expect(screen.getByTestId("count-s1")).toHaveTextContent("2");
    expect(renders.a).toBeGreaterThan(before.a);
    expect(renders.b).toBe(before.b);
    expect(renders.backend).toBe(before.backend);
    expect(client.getQueryData(keys.session("s1"))).toMatchObject({ state: "editing" });
  });

  it("a removed session's query says so, and its transcript goes", async () => {
    const backend = fakeBackend({ get_session: () => makeSession(), get_transcript: () => [makeEntry(1)] });
    function Removed() {
      const { session, removed } = useSession("s1");
      return <p data-testid="removed">{removed ? "removed" : session ? "here" : "loading"}</p>;
    }
    const { client } = renderWithStore(<Removed />, backend);
    await waitFor(() => expect(screen.getByTestId("removed")).toHaveTextContent("here"));
    act(() => backend.emit(ev({ type: "sessionRemoved", sessionId: "s1" })));
    expect(screen.getByTestId("removed")).toHaveTextContent("removed");
    expect(client.getQueryData(keys.transcript("s1"))).toBeUndefined();
  });
});
