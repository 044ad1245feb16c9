// Entry point: picks the backend (Tauri or HTTP), makes the query client (server state) and mounts the app.
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { createBackend } from "./api";
import { App } from "./App";
import { startTheme } from "./lib/theme";
import { makeQueryClient } from "./state/queries";
import { StoreProvider } from "./state/store";
import "./styles.css";
import "./features/preview/preview.css";
import "./features/chat/chat.css";
import "./features/session/session.css";
import "./features/delivery/delivery.css";
import "./features/setup/setup.css";
import "./features/gates/gates.css";
import "./features/checkpoints/checkpoints.css";
import "./features/screenshots/screenshots.css";
import "./features/modules/modules.css";
import "./features/shortcuts/shortcuts.css";
import "./features/attention/attention.css";
import "./features/terminal/terminal.css";
import "./features/groups/groups.css";
import "./features/issues/issues.css";
import "./features/changes/conflicts.css";

startTheme();
const backend = createBackend();
const client = makeQueryClient();

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <StoreProvider backend={backend} client={client}>
      <App />
    </StoreProvider>
  </StrictMode>,
);
