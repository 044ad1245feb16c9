// Test helper: renders UI inside the StoreProvider with a given Backend.
import { render } from "@testing-library/react";
import type { ReactElement } from "react";
import type { Backend } from "../api/backend";
import { StoreProvider } from "../state/store";

export function renderWithStore(ui: ReactElement, backend: Backend) {
  return render(<StoreProvider backend={backend}>{ui}</StoreProvider>);
}
