#!/usr/bin/python3
# The desktop tests' hand on a top-level X window by its title, as a window manager would have it
# (there is none on Xvfb): `close TITLE` sends the ICCCM WM_DELETE_WINDOW client message (what a
# window manager sends when the user clicks the close button, so the app sees a close request it
# may refuse), `state TITLE` prints "viewable" when such a window is mapped, else "hidden", and
# `click TITLE FX FY` clicks the point at fractions FX, FY of its width and height with the XTEST
# extension (a real pointer click: a native dialog's button, say). Needs python3-xlib
# (scripts/deps). Exits 1 when no window of that title takes WM_DELETE_WINDOW.
#   DISPLAY=:5 tests/desktop/x11window.py close Kiln
#   DISPLAY=:5 tests/desktop/x11window.py click "Quit Kiln" 0.25 0.85
import sys

from Xlib import X, display, protocol
from Xlib.ext import xtest


def windows(d, title):
    """The top-level windows named `title` that take WM_DELETE_WINDOW (the app's own frames)."""
    delete = d.intern_atom("WM_DELETE_WINDOW")
    found = []
    for window in d.screen().root.query_tree().children:
        try:
            if window.get_wm_name() == title and delete in (window.get_wm_protocols() or []):
                found.append(window)
        except Exception:  # a window gone meanwhile
            continue
    return found


def main():
    if not (len(sys.argv) == 3 and sys.argv[1] in ("close", "state") or len(sys.argv) == 5 and sys.argv[1] == "click"):
        sys.exit("usage: x11window.py close|state TITLE | click TITLE FX FY")
    action, title = sys.argv[1], sys.argv[2]
    d = display.Display()
    found = windows(d, title)
    if not found:
        sys.exit(f"no window named {title!r} takes WM_DELETE_WINDOW")
    if action == "state":
        viewable = any(w.get_attributes().map_state == X.IsViewable for w in found)
        print("viewable" if viewable else "hidden")
        return
    if action == "click":
        window = next(w for w in found if w.get_attributes().map_state == X.IsViewable)
        # Without a window manager a top-level window's parent is the root: its geometry is in
        # screen coordinates.
        g = window.get_geometry()
        x, y = g.x + int(g.width * float(sys.argv[3])), g.y + int(g.height * float(sys.argv[4]))
        xtest.fake_input(d, X.MotionNotify, x=x, y=y)
        d.sync()
        xtest.fake_input(d, X.ButtonPress, 1)
        xtest.fake_input(d, X.ButtonRelease, 1)
        d.sync()
        print(f"clicked at {x},{y}")
        return
    protocols = d.intern_atom("WM_PROTOCOLS")
    delete = d.intern_atom("WM_DELETE_WINDOW")
    for window in found:
        event = protocol.event.ClientMessage(
            window=window, client_type=protocols, data=(32, [delete, X.CurrentTime, 0, 0, 0])
        )
        window.send_event(event, event_mask=X.NoEventMask)
    d.sync()
    print(f"sent WM_DELETE_WINDOW to {len(found)} window(s)")


main()
