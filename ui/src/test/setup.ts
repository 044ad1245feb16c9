// Vitest setup: jest-dom matchers, a patient async timeout, and DOM cleanup between tests.
import "@testing-library/jest-dom/vitest";
import { cleanup, configure } from "@testing-library/react";
import { afterEach } from "vitest";

// CI machines are 2 cores shared with cargo: a re-render can take over the default 1 s.
configure({ asyncUtilTimeout: 5000 });

afterEach(() => {
  cleanup();
  window.location.hash = "";
  window.history.replaceState(null, "", "/");
});
