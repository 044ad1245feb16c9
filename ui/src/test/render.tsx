// Test helper: renders UI inside the StoreProvider with a given Backend and a fresh query client (no retries) per render.
import { notifyManager, type QueryClient } from "@tanstack/react-query";
import { render } from "@testing-library/react";
import type { ReactElement } from "react";
import type { Backend } from "../api/backend";
import { makeQueryClient } from "../state/queries";
import { StoreProvider } from "../state/store";

// Query observers hear of cache writes at once, so a test sees the rendered result right after act().
notifyManager.setScheduler((notify) => notify());

/** `client`: pass one to look into the cache; by default each render gets its own. */
export function renderWithStore(ui: ReactElement, backend: Backend, client: QueryClient = makeQueryClient()) {
  return {
    client,
    ...render(
      <StoreProvider backend={backend} client={client}>
        {ui}
      </StoreProvider>,
    ),
  };
}
