// Entry point: picks the backend (Tauri or HTTP) and mounts the app.
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { createBackend } from "./api";
import { App } from "./App";
import { startTheme } from "./lib/theme";
import { StoreProvider } from "./state/store";
import "./styles.css";
import "./features/preview/preview.css";
import "./features/session/session.css";
import "./features/chat/chat.css";
import "./features/delivery/delivery.css";
import "./features/setup/setup.css";
import "./features/gates/gates.css";
import "./features/checkpoints/checkpoints.css";
import "./features/modules/modules.css";
import "./features/shortcuts/shortcuts.css";
import "./features/attention/attention.css";

startTheme();
const backend = createBackend();

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <StoreProvider backend={backend}>
      <App />
    </StoreProvider>
  </StrictMode>,
);
