// Test fixtures: sample workspace, sessions and transcript entries, plus a scriptable fake Backend.
import { notifyManager } from "@tanstack/react-query";
import { vi } from "vitest";

// Query observers hear of cache writes at once (not a timer later), so a test's act(() => emit(event)) is followed by the rendered result.
notifyManager.setScheduler((notify) => notify());
import type { ArgsOf, Backend, Command, ConnectResult, ResultOf } from "../api/backend";
import type {
  AppState,
  AttachmentView,
  CheckpointView,
  DetectionView,
  PermissionCard,
  FileDiff,
  GateResultView,
  KilnEvent,
  PreviewView,
  SessionView,
  SettingsView,
  TranscriptEntry,
  UsageTotals,
  WorkspaceView,
  LiveView,
} from "../api/types";

export const workspace: WorkspaceView = {
  root: "/home/dev/shop",
  name: "shop",
  isGit: true,
  configPath: "/home/dev/shop/kiln.toml",
  workflow: "specs",
  roles: [
    { id: "business-manager", name: "Business Manager" },
    { id: "ux-designer", name: "UX Designer" },
    { id: "frontend-engineer", name: "Frontend Engineer" },
    { id: "backend-engineer", name: "Backend Engineer" },
    { id: "agentic-engineer", name: "Agentic Engineer" },
  ],
  idPattern: null,
  modules: [
    { id: "@shop/cart", directory: "modules/cart", toolchain: "node", specStatus: null },
    { id: "@shop/api", directory: "modules/api", toolchain: "rust", specStatus: null },
  ],
};

export const appState: AppState = {
  version: "0.1.0",
  transport: "serve",
  mode: "loopback",
  workspace,
  recentWorkspaces: ["/home/dev/shop", "/home/dev/blog"],
  terminals: true,
  agentTerminals: true,
  lastEvent: 0,
};

export function makeSession(overrides: Partial<SessionView> = {}): SessionView {
  return {
    id: "s1",
    kind: "edit-module",
    modules: [
      { id: "@shop/cart", directory: "modules/cart", kind: "edit", joinedAt: "2025-01-01T10:00:00Z", baseSequence: 0 },
    ],
    title: "Add coupons to the cart",
    brief: "Let shoppers apply a coupon in @shop/cart",
    role: null,
    driver: null,
    model: null,
    resumeIds: {},
    autoContinue: false,
    chainDepth: 0,
    state: "planning",
    running: false,
    setup: "none",
    createdAt: "2025-01-01T10:00:00Z",
    updatedAt: "2025-01-01T10:00:00Z",
    deliveredAt: null,
    archivedAt: null,
    rejectedAt: null,
    deletedAt: null,
    attachments: [],
    checkpoints: [],
    screenshots: [],
    pendingRole: null,
    usage: { total: makeTotals(), byRole: [] },
    reviews: [],
    changed: true,
    issue: null,
    ...overrides,
  };
}

/** A session's live view: a turn with nothing streaming unless `overrides` say. */
export function makeLive(overrides: Partial<LiveView> = {}): LiveView {
  return { sessionId: "s1", phase: "turn", role: null, module: null, text: null, status: null, ...overrides };
}

export function makeTotals(overrides: Partial<UsageTotals> = {}): UsageTotals {
  return {
    turns: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costUsd: null,
    unknownCostTurns: 0,
    ...overrides,
  };
}

export function makeSettings(overrides: Partial<SettingsView> = {}): SettingsView {
  return {
    defaultDriver: "claude",
    commandPolicy: "workdir",
    commandsAllowed: true,
    confinement: {
      available: true,
      mechanism: "landlock",
      abi: 7,
      enforcement: "full",
      detail:
        "Commands run under Landlock (ABI 7): they may write only to the working copy, temporary directories, the agents' own state and the package caches.",
    },
    claudePath: null,
    codexPath: null,
    acpAgents: [],
    acpCustomEnvNames: [],
    mcpServers: [],
    openaiBaseUrl: null,
    openaiModel: null,
    openaiKeyFingerprint: null,
    plannerAgent: true,
    bridgeUrl: null,
    bridgeTokenFingerprint: null,
    delivery: {
      repository: null,
      reviewers: [],
      pushMode: "auto",
      remote: "origin",
      base: "main",
      branchPrefix: "kiln",
      apiUrl: "https://api.github.com",
      tokenFingerprint: null,
    },
    drivers: [
      {
        id: "claude",
        available: true,
        detail: "/usr/local/bin/claude",
        version: "2.0.14 (Claude Code)",
        signedIn: true,
      },
      {
        id: "codex",
        available: false,
        detail: "install it with `npm i -g @openai/codex`",
        version: null,
        signedIn: null,
      },
      {
        id: "openai-compatible",
        available: false,
        detail: "set the endpoint and model in Settings",
        version: null,
        signedIn: null,
      },
    ],
    ...overrides,
  };
}

export function makeAttachment(overrides: Partial<AttachmentView> = {}): AttachmentView {
  return { id: "a1", name: "shot.png", kind: "image", size: 2048, addedAt: "2025-01-01T10:02:00Z", ...overrides };
}

/** A fetch the command policy left to the operator, with one option (Allow once). */
export function makePermissionCard(overrides: Partial<PermissionCard> = {}): PermissionCard {
  return {
    id: "req-1",
    title: "Fetch https://example.com",
    kind: "fetch",
    locations: [],
    why: "",
    options: [{ id: "allow", name: "Allow once", kind: "allow_once" }],
    askedAt: "2025-01-01T10:00:00Z",
    ...overrides,
  };
}

export function makeEntry(id: number, overrides: Partial<TranscriptEntry> = {}): TranscriptEntry {
  return {
    id,
    sessionId: "s1",
    kind: "agent",
    module: null,
    role: null,
    text: `entry ${id}`,
    createdAt: "2025-01-01T10:00:00Z",
    ...overrides,
  };
}

export function makeCheckpoint(sequence: number, overrides: Partial<CheckpointView> = {}): CheckpointView {
  return {
    sequence,
    at: "2025-01-01T10:05:00Z",
    label: sequence === 0 ? "the starting point" : `Backend Engineer in @shop/cart (${sequence})`,
    role: sequence === 0 ? null : "backend-engineer",
    module: sequence === 0 ? null : "@shop/cart",
    current: false,
    ...overrides,
  };
}

/** A passed gate of @shop/cart (override module, gate, status, output…). */
export function makeGate(id: number, overrides: Partial<GateResultView> = {}): GateResultView {
  return {
    id,
    module: "@shop/cart",
    gate: "tests",
    command: "npm test",
    status: "passed",
    source: "package.json scripts.test",
    exitCode: 0,
    durationMs: 3200,
    outputHead: "ok 1 - adds an item\n",
    outputTail: "",
    at: "2025-01-01T10:20:00Z",
    note: "",
    ...overrides,
  };
}

/**
 * What detect_workspace answers for a workspace without kiln.toml: one node module whose tests
 * come from its package.json, lint not configured, node found and pnpm missing.
 */
export function makeDetection(overrides: Partial<DetectionView> = {}): DetectionView {
  return {
    root: "/home/dev/blog",
    configPath: null,
    workflow: "direct",
    modules: [
      {
        id: "blog",
        directory: ".",
        toolchain: "node",
        gates: [
          { gate: "dependencies", command: "npm ci --offline", source: "package-lock.json", hint: null },
          { gate: "typecheck", command: "npx tsc --noEmit", source: "tsconfig.json in the module", hint: null },
          { gate: "tests", command: "npm test", source: "package.json scripts.test", hint: null },
          {
            gate: "format",
            command: "npx prettier --check .",
            source: ".prettierrc at the repository root",
            hint: null,
          },
          {
            gate: "lint",
            command: null,
            source: "not detected",
            hint: "No linter configured: add an eslint config, or a lint command in kiln.toml.",
          },
        ],
      },
    ],
    toolchains: [
      { name: "node", found: "20.19.0", required: ">=20", ok: true, message: null },
      { name: "pnpm", found: null, required: "9", ok: false, message: "Install pnpm 9 (corepack enable pnpm)." },
    ],
    setup: { command: "npm ci --offline", source: "package-lock.json" },
    toml: '[workflow]\nmode = "direct"\n\n[session]\nsetup = "npm ci --offline"\n\n[gates.node]\ntests = "npm test"\n',
    environment: [
      { name: "LANG", value: "en_US.UTF-8", source: "your environment" },
      { name: "NPM_CONFIG_REGISTRY", value: "https://registry.npmjs.org/", source: "your environment" },
      { name: "NPM_TOKEN", value: null, source: "kiln.toml [environment] pass" },
      { name: "PUPPETEER_SKIP_DOWNLOAD", value: "1", source: "kiln.toml [environment] set" },
    ],
    configFiles: ["~/.npmrc"],
    ...overrides,
  };
}

/** A modified file with one hunk: line 2 replaced. */
export function makeFileDiff(path: string, overrides: Partial<FileDiff> = {}): FileDiff {
  return {
    path,
    oldPath: null,
    status: "modified",
    binary: false,
    tooLarge: false,
    additions: 1,
    deletions: 1,
    hunks: [
      {
        oldStart: 1,
        oldLines: 3,
        newStart: 1,
        newLines: 3,
        header: "@@ -1,3 +1,3 @@",
        lines: [
          { kind: "context", oldLine: 1, newLine: 1, text: "const a = 1;" },
          { kind: "delete", oldLine: 2, newLine: null, text: "const b = 2;" },
          { kind: "add", oldLine: null, newLine: 2, text: "const b = 3;" },
          { kind: "context", oldLine: 3, newLine: 3, text: "export { a, b };" },
        ],
      },
    ],
    ...overrides,
  };
}

/** The gateway's secret in makePreview's enter URL. */
export const PREVIEW_SECRET = "s3cr3t-AbC_9";

/** A running preview of s1 (state ready) on the gateway http://127.0.0.1:41234, with @shop/cart's first screen. */
export function makePreview(overrides: Partial<PreviewView> = {}): PreviewView {
  return {
    sessionId: "s1",
    kind: "command",
    state: "ready",
    origin: "http://127.0.0.1:41234",
    enterUrl: `http://127.0.0.1:41234/__kiln/enter?secret=${PREVIEW_SECRET}&to=%2F%3Fmodule%3Dcart`,
    port: 45678,
    message: null,
    log: ["> node shell/server.js --port 45678", "shop listening on 45678"],
    restarts: 0,
    data: "fixtures",
    bridge: null,
    moduleUrls: [{ moduleId: "@shop/cart", path: "/?module=cart" }],
    ...overrides,
  };
}

type Handlers = { [C in Command]?: (args: ArgsOf<C>) => ResultOf<C> | Promise<ResultOf<C>> };

export interface FakeBackend extends Backend {
  call: Backend["call"] & ReturnType<typeof vi.fn>;
  /** HTTP only (absent for "tauri"): resolves as connected in the app state's mode unless re-mocked. */
  connect?: NonNullable<Backend["connect"]> & ReturnType<typeof vi.fn>;
  disconnect?: NonNullable<Backend["disconnect"]> & ReturnType<typeof vi.fn>;
  /** Delivers an event to every subscriber; before the app has subscribed (it does once
   * connected), the event waits for the first subscriber instead of being lost. */
  emit: (event: KilnEvent) => void;
  /** Replaces or adds command handlers. */
  handle: (handlers: Handlers) => void;
}

/**
 * A fake Backend answering from handlers (defaults: get_state → appState, list_sessions → [], workspace_usage → none, get_gates → []).
 * The "http" kind also has connect and disconnect mocks, as `kiln serve` does.
 */
export function fakeBackend(handlers: Handlers = {}, kind: "tauri" | "http" = "http"): FakeBackend {
  const table: Handlers = {
    get_state: () => appState,
    list_sessions: () => [],
    workspace_usage: () => ({ total: makeTotals(), byRole: [] }),
    disk_usage: () => ({ storeBytes: 0, sessionsBytes: 0, sessions: [], measuredAt: "2025-01-01T00:00:00Z" }),
    get_gates: () => [],
    ...handlers,
  };
  const listeners = new Set<(e: KilnEvent) => void>();
  const pending: KilnEvent[] = [];
  const call = vi.fn(async (command: Command, args: unknown) => {
    const handler = table[command] as ((a: unknown) => unknown) | undefined;
    if (!handler) throw new Error(`fake backend: no handler for ${command}`);
    return handler(args);
  });
  const connection =
    kind === "http"
      ? {
          connect: vi.fn(
            async (): Promise<ConnectResult> => ({ connected: true, mode: appState.mode }),
          ) as FakeBackend["connect"],
          disconnect: vi.fn(async () => {}) as FakeBackend["disconnect"],
        }
      : {};
  return {
    kind,
    call: call as FakeBackend["call"],
    ...connection,
    subscribe: (onEvent) => {
      listeners.add(onEvent);
      for (const event of pending.splice(0)) onEvent(event);
      return () => listeners.delete(onEvent);
    },
    pickFolder: vi.fn(async () => (kind === "tauri" ? "/picked/folder" : null)),
    emit: (event) => {
      if (listeners.size) for (const l of listeners) l(event);
      else pending.push(event);
    },
    handle: (more) => Object.assign(table, more),
  };
}
