// The desktop app's native side in the UI: the menu's actions (the `menu` event from
// src-tauri/src/menu.rs) and the update check, on start and from Help ▸ Check for Updates….
// Renders nothing in `kiln serve`.
import { listen } from "@tauri-apps/api/event";
import { useEffect, useState } from "react";
import { isTauri, toKilnError } from "../api";
import { navigate, paths } from "../router";
import { useStore } from "../state/store";
import { checkOnStart, pluginUpdater, type UpdaterDeps } from "../lib/updater";
import { UpdateDialog } from "../features/settings/UpdateDialog";

/** How the UI hears the menu: injectable for tests. Returns the unlisten function. */
export type MenuListener = (onItem: (id: string) => void) => Promise<() => void>;

const tauriMenu: MenuListener = (onItem) => listen<string>("menu", (event) => onItem(event.payload));

export interface DesktopTouchesProps {
  desktop?: boolean;
  listenMenu?: MenuListener;
  updater?: UpdaterDeps;
  startCheck?: boolean;
}

export function DesktopTouches({
  desktop = isTauri(),
  listenMenu = tauriMenu,
  updater = pluginUpdater,
  startCheck = checkOnStart(),
}: DesktopTouchesProps) {
  const { backend, dispatch, reloadApp } = useStore();
  // The update dialog: quiet for the start-up check, shown at once when asked for from the menu.
  const [update, setUpdate] = useState<{ quiet: boolean; key: number } | null>(
    desktop && startCheck ? { quiet: true, key: 0 } : null,
  );

  useEffect(() => {
    if (!desktop) return;
    async function openWorkspace() {
      try {
        const picked = await backend.pickFolder();
        if (!picked) return;
        const workspace = await backend.call("open_workspace", { path: picked });
        dispatch({ type: "workspaceChanged", workspace });
        navigate(paths.dashboard);
        void reloadApp();
      } catch (e) {
        // The Open Workspace screen shows the path field and the error's details.
        console.error("kiln: could not open the workspace", toKilnError(e));
        navigate(paths.workspace);
      }
    }
    let stop: (() => void) | null = null;
    let cancelled = false;
    listenMenu((id) => {
      switch (id) {
        case "open-workspace":
          void openWorkspace();
          break;
        case "settings":
          navigate(paths.settings);
          break;
        case "help":
          navigate(paths.help);
          break;
        case "check-updates":
          setUpdate((u) => ({ quiet: false, key: (u?.key ?? 0) + 1 }));
          break;
      }
    })
      .then((unlisten) => {
        if (cancelled) unlisten();
        else stop = unlisten;
      })
      .catch((e: unknown) => console.error("kiln: could not listen to the menu", e));
    return () => {
      cancelled = true;
      stop?.();
    };
  }, [desktop, listenMenu, backend, dispatch, reloadApp]);

  if (!desktop || !update) return null;
  return <UpdateDialog key={update.key} deps={updater} quiet={update.quiet} onClose={() => setUpdate(null)} />;
}
