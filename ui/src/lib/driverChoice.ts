// Which drivers a picker offers and how it names them: the ACP agents (`acp:*`) only once found, or when already chosen, each by its name ("Gemini CLI (ACP)"); the others by their id, as before.
import type { DriverStatus } from "../api/types";

/** What a picker needs of a driver's status (an older engine sends no name). */
type Choice = Pick<DriverStatus, "id" | "available"> & { name?: string | null };

/** Whether the driver is an ACP agent (a preset or the custom command line). */
export function isAcp(id: string): boolean {
  return id.startsWith("acp:");
}

/** The driver's name where the engine gives one, else its id. */
export function driverLabel(driver: Pick<Choice, "id" | "name">): string {
  return driver.name?.trim() || driver.id;
}

/**
 * The drivers a picker lists: every non-ACP driver (an unavailable one says so), and the ACP
 * agents that are installed, plus `chosen` whatever its state, so a pick never silently
 * changes.
 */
export function pickable<T extends Choice>(drivers: T[], chosen?: string): T[] {
  return drivers.filter((d) => !isAcp(d.id) || d.available || d.id === chosen);
}
