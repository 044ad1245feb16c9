// Tests for connecting to `kiln serve`: loopback's link with its token, the Connect screen in either mode, a session lost mid-use, Disconnect.
import { act, fireEvent, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { KilnError } from "./api/backend";
import type { AppState } from "./api/types";
import { App } from "./App";
import { appState, fakeBackend, makeSession, makeSettings } from "./test/fixtures";
import { renderWithStore } from "./test/render";

const selfHosted: AppState = { ...appState, mode: "self-hosted", connected: true };
const notConnected = () => new KilnError("NOT_CONNECTED", "connect first", { mode: "self-hosted" });

/** A self-hosted server: get_state answers NOT_CONNECTED until connect gets `good`. */
function selfHostedServer(good = "kiln_right") {
  let connected = false;
  const backend = fakeBackend({
    get_state: () => {
      if (!connected) throw notConnected();
      return selfHosted;
    },
  });
  backend.connect!.mockImplementation(async (token?: string) => {
    if (token !== good) throw new KilnError("TOKEN_INVALID", "unknown token");
    connected = true;
    return { connected: true, mode: "self-hosted" };
  });
  return { backend, drop: () => (connected = false) };
}

/** A loopback server: get_state answers NOT_CONNECTED (naming loopback) until connect gets its token `good`. */
function loopbackServer(good = "tok_right") {
  let connected = false;
  const backend = Object.assign(
    fakeBackend({
      get_state: () => {
        if (!connected) throw new KilnError("NOT_CONNECTED", "connect first", { mode: "loopback" });
        return { ...appState, connected: true };
      },
    }),
    { connected: () => connected },
  );
  backend.connect!.mockImplementation(async (token?: string) => {
    if (token !== good) throw new KilnError("TOKEN_INVALID", "unknown token");
    connected = true;
    return { connected: true, mode: "loopback" };
  });
  return { backend, drop: () => (connected = false) };
}

function typeToken(token: string) {
  fireEvent.change(screen.getByTestId("connect-token"), { target: { value: token } });
  fireEvent.click(screen.getByTestId("connect-submit"));
}

describe("connecting to kiln serve", () => {
  it("connects with the token of the link kiln serve printed, and takes it out of the address bar", async () => {
    const { backend } = loopbackServer();
    window.history.replaceState(null, "", "/?token=tok_right#/");
    renderWithStore(<App />, backend);

    expect(await screen.findByTestId("new-session")).toBeInTheDocument();
    expect(backend.connect).toHaveBeenCalledTimes(1);
    expect(backend.connect).toHaveBeenCalledWith("tok_right");
    expect(window.location.search).toBe("");
    expect(window.location.hash).toBe("#/");
    expect(screen.queryByTestId("connect-screen")).not.toBeInTheDocument();
    expect(screen.queryByTestId("mode-badge")).not.toBeInTheDocument();
  });

  it("tries the link's connect again when other tabs connecting at the same moment got it rate limited", async () => {
    const { backend } = loopbackServer();
    const connect = backend.connect!.getMockImplementation()!;
    backend
      .connect!.mockRejectedValueOnce({ code: "RATE_LIMITED", message: "too many connects under way" })
      .mockImplementation(connect);
    window.history.replaceState(null, "", "/?token=tok_right");
    renderWithStore(<App />, backend);

    expect(await screen.findByTestId("new-session", {}, { timeout: 3000 })).toBeInTheDocument();
    expect(backend.connect).toHaveBeenCalledTimes(2);
  });

  it("asks a loopback server opened without the link for its token", async () => {
    const { backend } = loopbackServer();
    renderWithStore(<App />, backend);

    const connect = await screen.findByTestId("connect-screen");
    expect(connect).toHaveTextContent("only to a browser with its token");
    expect(connect).toHaveTextContent("Server token");
    expect(screen.getByTestId("connect-hint")).toHaveTextContent("Open the link kiln serve printed");
    expect(backend.connect).not.toHaveBeenCalled();
    expect(screen.queryByTestId("mode-badge")).not.toBeInTheDocument();

    typeToken("tok_right");
    expect(await screen.findByTestId("new-session")).toBeInTheDocument();
    expect(backend.connect).toHaveBeenLastCalledWith("tok_right");
  });

  it("says a link's token was refused (the server restarted since), and asks for the new one", async () => {
    const { backend } = loopbackServer();
    window.history.replaceState(null, "", "/?token=tok_old#/");
    renderWithStore(<App />, backend);

    expect(await screen.findByTestId("connect-screen")).toBeInTheDocument();
    expect(screen.getByTestId("connect-note")).toHaveTextContent("restarted since");
    expect(window.location.search).toBe("");
    typeToken("tok_right");
    expect(await screen.findByTestId("new-session")).toBeInTheDocument();
  });

  it("asks a self-hosted server for a token, refuses a wrong one, then loads the app with the right one", async () => {
    const { backend } = selfHostedServer();
    renderWithStore(<App />, backend);

    expect(await screen.findByTestId("connect-screen")).toHaveTextContent("self-hosted");
    expect(screen.getByTestId("connect-screen")).toHaveTextContent(
      "Create a token on the server with kiln token create",
    );
    expect(screen.getByTestId("connect-token")).toHaveAttribute("type", "password");
    expect(screen.getByTestId("mode-badge")).toHaveTextContent("self-hosted");
    expect(screen.queryByTestId("disconnect")).not.toBeInTheDocument();
    expect(screen.getByTestId("connect-submit")).toBeDisabled();
    expect(backend.call).not.toHaveBeenCalledWith("list_sessions", expect.anything());

    typeToken("kiln_wrong");
    const error = await screen.findByTestId("connect-error");
    expect(error).toHaveTextContent("did not accept this token");
    expect(error).toHaveTextContent("TOKEN_INVALID");
    expect(backend.connect).toHaveBeenLastCalledWith("kiln_wrong");
    expect(screen.queryByTestId("new-session")).not.toBeInTheDocument();

    typeToken("kiln_right");
    expect(await screen.findByTestId("new-session")).toBeInTheDocument();
    expect(backend.connect).toHaveBeenLastCalledWith("kiln_right");
    expect(screen.queryByTestId("connect-screen")).not.toBeInTheDocument();
    expect(screen.getByTestId("mode-badge")).toHaveTextContent("self-hosted");
    expect(screen.getByTestId("disconnect")).toBeInTheDocument();
  });

  it("shows the wait a RATE_LIMITED answer asks for and holds the Connect button", async () => {
    const { backend } = selfHostedServer();
    backend.connect!.mockRejectedValue(new KilnError("RATE_LIMITED", "too many", { retryAfterSeconds: 30 }));
    renderWithStore(<App />, backend);
    await screen.findByTestId("connect-screen");

    typeToken("kiln_right");
    const error = await screen.findByTestId("connect-error");
    expect(error).toHaveTextContent(/Too many failed attempts.*Try again in (30|29) s/);
    expect(error).toHaveTextContent("RATE_LIMITED");
    expect(screen.getByTestId("connect-submit")).toBeDisabled();
  });

  it("returns to the Connect screen when a call answers NOT_CONNECTED, keeping the composer's text", async () => {
    const { backend, drop } = selfHostedServer();
    const session = makeSession({ state: "editing" });
    backend.handle({
      get_session: () => session,
      get_transcript: () => [],
      get_settings: () => makeSettings(),
      send_message: () => {
        drop();
        throw notConnected();
      },
    });
    window.location.hash = "#/session/s1";
    renderWithStore(<App />, backend);
    await screen.findByTestId("connect-screen");
    typeToken("kiln_right");

    const message = await screen.findByTestId("message");
    fireEvent.change(message, { target: { value: "Make the coupon field optional" } });
    fireEvent.click(screen.getByTestId("send"));

    expect(await screen.findByTestId("connect-screen")).toBeInTheDocument();
    expect(screen.getByTestId("connect-note")).toHaveTextContent("session ended");
    expect(screen.queryByTestId("message")).not.toBeInTheDocument();

    typeToken("kiln_right");
    expect(await screen.findByTestId("message")).toHaveValue("Make the coupon field optional");
  });

  it("shows the Connect screen again when a loopback browser session ends", async () => {
    const { backend, drop } = loopbackServer();
    backend.handle({
      get_settings: () => {
        if (!backend.connected()) throw new KilnError("NOT_CONNECTED", "connect first");
        return makeSettings();
      },
    });
    window.history.replaceState(null, "", "/?token=tok_right");
    renderWithStore(<App />, backend);
    await screen.findByTestId("new-session");

    drop(); // the cookie expired
    fireEvent.click(screen.getByTestId("settings"));
    await act(async () => window.dispatchEvent(new HashChangeEvent("hashchange")));

    expect(await screen.findByTestId("connect-screen")).toBeInTheDocument();
    expect(screen.getByTestId("connect-note")).toHaveTextContent("session ended");
    expect(backend.connect).toHaveBeenCalledTimes(1);
  });

  it("Disconnect ends the browser session and shows the Connect screen", async () => {
    const { backend } = selfHostedServer();
    renderWithStore(<App />, backend);
    await screen.findByTestId("connect-screen");
    typeToken("kiln_right");
    fireEvent.click(await screen.findByTestId("disconnect"));

    expect(await screen.findByTestId("connect-screen")).toBeInTheDocument();
    expect(backend.disconnect).toHaveBeenCalledTimes(1);
    expect(screen.getByTestId("connect-note")).toHaveTextContent("You disconnected");
    expect(screen.queryByTestId("header-workspace")).not.toBeInTheDocument();
    expect(screen.queryByTestId("disconnect")).not.toBeInTheDocument();
  });

  it("never shows connection UI on the desktop, whose backend has no connect", async () => {
    const backend = fakeBackend(
      {
        get_state: () => {
          throw notConnected();
        },
      },
      "tauri",
    );
    expect(backend.connect).toBeUndefined();
    renderWithStore(<App />, backend);
    expect(await screen.findByTestId("error")).toHaveTextContent("NOT_CONNECTED");
    expect(screen.queryByTestId("connect-screen")).not.toBeInTheDocument();
  });
});
