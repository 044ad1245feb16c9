#!/usr/bin/python3
# A desktop panel's side of the tray, on the test's session bus (there is no panel on Xvfb):
#   tray_watcher.py             a StatusNotifierWatcher: tray icons (libayatana-appindicator, which
#                               Tauri's tray uses on Linux) register with it; it prints each as
#                               "registered SERVICE PATH", flushed, and runs until killed.
#   tray_watcher.py menu SERVICE PATH
#                               prints the item's menu as JSON: [{"id", "label", "enabled"}, ...]
#   tray_watcher.py click SERVICE PATH LABEL
#                               clicks the menu item labelled LABEL, as a panel does.
# Menus are read and clicked over com.canonical.dbusmenu. Needs python3-dbus and python3-gi
# (scripts/deps).
import json
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

WATCHER = "org.kde.StatusNotifierWatcher"


class Watcher(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, "/StatusNotifierWatcher")
        self.items = []

    @dbus.service.method(WATCHER, in_signature="s", out_signature="", sender_keyword="sender")
    def RegisterStatusNotifierItem(self, service, sender=None):
        # An item names its object path (libayatana) or its bus name; the sender is its service.
        path = service if service.startswith("/") else "/StatusNotifierItem"
        owner = sender if service.startswith("/") else service
        self.items.append(f"{owner}{path}")
        print(f"registered {owner} {path}", flush=True)
        self.StatusNotifierItemRegistered(f"{owner}{path}")

    @dbus.service.method(WATCHER, in_signature="s", out_signature="")
    def RegisterStatusNotifierHost(self, service):
        pass

    @dbus.service.signal(WATCHER, signature="s")
    def StatusNotifierItemRegistered(self, item):
        pass

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="ss", out_signature="v")
    def Get(self, interface, prop):
        return self.GetAll(interface)[prop]

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {
            "RegisteredStatusNotifierItems": dbus.Array(self.items, signature="s"),
            "IsStatusNotifierHostRegistered": dbus.Boolean(True),
            "ProtocolVersion": dbus.Int32(0),
        }


MENU = "com.canonical.dbusmenu"


def menu(service, path):
    """The item's menu object and its top-level entries (separators left out)."""
    bus = dbus.SessionBus()
    item = bus.get_object(service, path)
    menu_path = item.Get("org.kde.StatusNotifierItem", "Menu", dbus_interface=dbus.PROPERTIES_IFACE)
    obj = bus.get_object(service, menu_path)
    _, (_, _, children) = obj.GetLayout(0, -1, dbus.Array([], signature="s"), dbus_interface=MENU)
    entries = []
    for child in children:
        entry_id, props, _ = child
        if props.get("type") == "separator":
            continue
        label = str(props.get("label", "")).replace("_", "")
        entries.append({"id": int(entry_id), "label": label, "enabled": bool(props.get("enabled", True))})
    return obj, entries


def watch():
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    watcher = Watcher(bus)
    name = dbus.service.BusName(WATCHER, bus)
    print("watching", flush=True)
    loop = GLib.MainLoop()
    try:
        loop.run()
    finally:
        del name, watcher


def main():
    if len(sys.argv) == 1:
        return watch()
    if sys.argv[1] == "menu" and len(sys.argv) == 4:
        print(json.dumps(menu(sys.argv[2], sys.argv[3])[1]))
        return 0
    if sys.argv[1] == "click" and len(sys.argv) == 5:
        obj, entries = menu(sys.argv[2], sys.argv[3])
        found = [e for e in entries if e["label"] == sys.argv[4]]
        if not found:
            sys.exit(f"no menu item {sys.argv[4]!r} in {entries}")
        obj.Event(found[0]["id"], "clicked", dbus.Int32(0, variant_level=1), dbus.UInt32(0), dbus_interface=MENU)
        return 0
    sys.exit("usage: tray_watcher.py [menu SERVICE PATH | click SERVICE PATH LABEL]")


if __name__ == "__main__":
    sys.exit(main())
