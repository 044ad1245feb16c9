// Whether a session speaks of modules at all: only where the repository has more than one (or the session makes a new one). In a single-package repository "module", "primary" and the module chips on every row are noise.
import { createContext, useContext } from "react";
import type { ModuleInfo, SessionView } from "../api/types";

export const ModuleWordsContext = createContext(true);

/** Modules are worth naming: the workspace has several, or the session works on several or makes one. */
export function showsModules(workspaceModules: ModuleInfo[], session: Pick<SessionView, "modules">): boolean {
  return workspaceModules.length > 1 || session.modules.length > 1 || session.modules.some((m) => m.kind === "new");
}

export function useModuleWords(): boolean {
  return useContext(ModuleWordsContext);
}

/** A module's id as a chip, where modules are worth naming; nothing otherwise. */
export function ModuleId({ id }: { id: string | null | undefined }) {
  const shown = useModuleWords();
  if (!id || !shown) return null;
  return <code className="module-id">{id}</code>;
}
