// Backend for the Tauri desktop app: invoke() for commands, a Channel for events, the dialog plugin.
import { Channel, invoke } from "@tauri-apps/api/core";
import { open } from "@tauri-apps/plugin-dialog";
import { type ArgsOf, type Backend, type Command, type ResultOf, toKilnError } from "./backend";
import type { KilnEvent } from "./types";

/** What the Tauri backend needs from @tauri-apps; injectable so tests can run without a webview. */
export interface TauriDeps {
  invoke: (command: string, args: Record<string, unknown>) => Promise<unknown>;
  createChannel: (onMessage: (event: KilnEvent) => void) => unknown;
  openDialog: (options: { directory: true; multiple: false }) => Promise<string | string[] | null>;
}

const defaultDeps: TauriDeps = {
  invoke: (command, args) => invoke(command, args),
  createChannel: (onMessage) => new Channel<KilnEvent>(onMessage),
  openDialog: (options) => open(options),
};

export function createTauriBackend(deps: TauriDeps = defaultDeps): Backend {
  let lastSeenId: number | null = null;

  async function call<C extends Command>(command: C, args: ArgsOf<C>): Promise<ResultOf<C>> {
    try {
      return (await deps.invoke(command, { args })) as ResultOf<C>;
    } catch (e) {
      throw toKilnError(e);
    }
  }

  function subscribe(onEvent: (event: KilnEvent) => void, _onReachable?: unknown, since?: number): () => void {
    let active = true;
    const channel = deps.createChannel((event) => {
      if (!active) return;
      if (lastSeenId === null || event.id > lastSeenId) lastSeenId = event.id;
      onEvent(event);
    });
    deps.invoke("subscribe", { channel, since: lastSeenId ?? since ?? null }).catch((e: unknown) => {
      console.error("kiln: could not subscribe to engine events", toKilnError(e));
    });
    return () => {
      active = false;
    };
  }

  async function pickFolder(): Promise<string | null> {
    const picked = await deps.openDialog({ directory: true, multiple: false });
    if (Array.isArray(picked)) return picked[0] ?? null;
    return picked;
  }

  return { kind: "tauri", call, subscribe, pickFolder };
}
