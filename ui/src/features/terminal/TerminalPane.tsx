// One terminal on screen: xterm.js attached to the terminal's output stream (replay, then live), keys to write_terminal, its size fitted to the pane and sent with resize_terminal. Unmounting detaches; the terminal runs on.
import "@xterm/xterm/css/xterm.css";
import { FitAddon } from "@xterm/addon-fit";
import { WebLinksAddon } from "@xterm/addon-web-links";
import { type ITheme, Terminal } from "@xterm/xterm";
import { useEffect, useRef } from "react";
import { attachTerminal } from "../../api/terminal";
import { toKilnError, type KilnError } from "../../api/backend";
import type { TerminalView } from "../../api/types";
import { createInputBatcher } from "../../lib/terminalInput";
import { openExternal } from "../../lib/openExternal";
import { useBackend } from "../../state/store";
import { applyRefusedStyles } from "./cspStyles";

/** A resize waits this long for the pane to settle (dragging a divider resizes many times). */
const RESIZE_DELAY_MS = 150;

// The terminal stays dark in both themes: programs' colours assume a dark background.
const THEME: ITheme = {
  background: "#0c0e12",
  foreground: "#e4e7ec",
  cursor: "#f0883e",
  cursorAccent: "#0c0e12",
  selectionBackground: "rgba(108, 182, 255, 0.35)",
  black: "#1b1f27",
  red: "#f47067",
  green: "#57c283",
  yellow: "#e3b341",
  blue: "#6cb6ff",
  magenta: "#b083f0",
  cyan: "#39c5cf",
  white: "#c9d1d9",
  brightBlack: "#5f6775",
  brightRed: "#ff938a",
  brightGreen: "#7ee2a8",
  brightYellow: "#f2cc60",
  brightBlue: "#96d0ff",
  brightMagenta: "#d2a8ff",
  brightCyan: "#56d4dd",
  brightWhite: "#f0f3f6",
};

const FONT =
  'ui-monospace, "SF Mono", "Cascadia Code", "JetBrains Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace';

export interface TerminalPaneProps {
  terminal: TerminalView;
  /** A write, resize or the stream failed. */
  onError: (error: KilnError) => void;
}

export function TerminalPane({ terminal, onError }: TerminalPaneProps) {
  const { backend } = useBackend();
  const hostRef = useRef<HTMLDivElement>(null);
  // The effect runs once per terminal; these are read when needed, not captured.
  const latest = useRef({ terminal, onError });
  latest.current = { terminal, onError };
  const terminalId = terminal.id;

  useEffect(() => {
    const host = hostRef.current;
    if (!host) return;
    const first = latest.current.terminal;
    const fail = (e: unknown) => latest.current.onError(toKilnError(e));
    // Before xterm writes its first styles, so none is missed.
    const stopStyles = applyRefusedStyles(host);
    const term = new Terminal({
      cols: first.cols,
      rows: first.rows,
      fontFamily: FONT,
      fontSize: 13,
      lineHeight: 1.15,
      theme: THEME,
      cursorBlink: true,
      scrollback: 5000,
      disableStdin: first.state === "exited",
    });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.loadAddon(
      new WebLinksAddon((event, uri) => {
        event.preventDefault();
        openExternal(uri);
      }),
    );
    term.open(host);

    let exited = first.state === "exited";
    const input = createInputBatcher((data) => backend.call("write_terminal", { terminalId, data }), fail);
    const typed = term.onData((data) => {
      if (!exited) input.push(data);
    });

    // The engine's size, as last sent: a fit that changes nothing sends nothing.
    let sent = { cols: first.cols, rows: first.rows };
    let resizeTimer: ReturnType<typeof setTimeout> | undefined;
    const sendSize = () => {
      resizeTimer = undefined;
      if (exited || (term.cols === sent.cols && term.rows === sent.rows)) return;
      sent = { cols: term.cols, rows: term.rows };
      backend.call("resize_terminal", { terminalId, ...sent }).catch(fail);
    };
    const refit = () => {
      // A hidden pane (another tab) measures nothing useful.
      if (host.clientWidth === 0 || host.clientHeight === 0) return;
      fit.fit();
      if (resizeTimer !== undefined) clearTimeout(resizeTimer);
      resizeTimer = setTimeout(sendSize, RESIZE_DELAY_MS);
    };
    const observer = new ResizeObserver(refit);
    observer.observe(host);
    refit();

    const detach = attachTerminal(terminalId, (event) => {
      switch (event.type) {
        case "output":
          term.write(event.data);
          return;
        case "reset":
          term.reset();
          return;
        case "exit":
          // The list hears of the exit by event and shows its code above the screen.
          exited = true;
          term.options.disableStdin = true;
          term.options.cursorBlink = false;
          return;
        case "error":
          fail(event.error);
          return;
      }
    });
    term.focus();

    return () => {
      observer.disconnect();
      // A resize still waiting goes now: the terminal keeps the size it was last seen at.
      if (resizeTimer !== undefined) {
        clearTimeout(resizeTimer);
        sendSize();
      }
      detach();
      typed.dispose();
      term.dispose();
      stopStyles();
    };
  }, [backend, terminalId]);

  return (
    <div
      className="terminal-host"
      ref={hostRef}
      data-testid="terminal-screen"
      data-terminal-id={terminalId}
      data-state={terminal.state}
    />
  );
}
