// Tests for the @-autocomplete of modules: it opens on @, filters by id and directory, and takes arrows, Enter, Tab and Escape before the textarea's own keys.
import { fireEvent, render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { useRef, useState } from "react";
import { describe, expect, it, vi } from "vitest";
import type { ModuleInfo } from "../../api/types";
import { ModuleAutocomplete } from "./ModuleAutocomplete";

const mod = (id: string, directory: string): ModuleInfo => ({ id, directory, toolchain: "node", specStatus: null });
const modules = [
  mod("@shop/cart", "modules/cart"),
  mod("@shop/catalog", "modules/catalog"),
  mod("@shop/orders", "modules/orders"),
];

/** A textarea with its own Enter handler (as the composer's Enter-to-send). */
function Harness({ onEnter }: { onEnter: () => void }) {
  const ref = useRef<HTMLTextAreaElement>(null);
  const [value, setValue] = useState("");
  return (
    <>
      <textarea
        ref={ref}
        data-testid="text"
        value={value}
        onChange={(e) => setValue(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey) {
            e.preventDefault();
            onEnter();
          }
        }}
      />
      <ModuleAutocomplete inputRef={ref} value={value} onChange={setValue} modules={modules} />
    </>
  );
}

function setup() {
  const onEnter = vi.fn();
  render(<Harness onEnter={onEnter} />);
  const text = screen.getByTestId("text") as HTMLTextAreaElement;
  return { text, onEnter, user: userEvent.setup() };
}

const names = () => screen.getAllByTestId("module-option").map((o) => o.getAttribute("data-module"));
const selected = () =>
  screen
    .getAllByTestId("module-option")
    .find((o) => o.getAttribute("aria-selected") === "true")
    ?.getAttribute("data-module");

describe("ModuleAutocomplete", () => {
  it("opens on @ with every module, and narrows by what follows", async () => {
    const { text, user } = setup();
    await user.click(text);
    await user.type(text, "Add a wishlist to ");
    expect(screen.queryByTestId("module-autocomplete")).not.toBeInTheDocument();
    await user.type(text, "@");
    expect(names()).toEqual(["@shop/cart", "@shop/catalog", "@shop/orders"]);
    expect(text).toHaveAttribute("aria-expanded", "true");
    await user.type(text, "cat");
    expect(names()).toEqual(["@shop/catalog"]);
    await user.type(text, "zz");
    expect(screen.queryByTestId("module-autocomplete")).not.toBeInTheDocument();
  });

  it("moves with the arrows and inserts with Enter, which then does not send", async () => {
    const { text, onEnter, user } = setup();
    await user.click(text);
    await user.type(text, "Fix @");
    expect(selected()).toBe("@shop/cart");
    await user.keyboard("{ArrowDown}{ArrowDown}");
    expect(selected()).toBe("@shop/orders");
    expect(text).toHaveAttribute("aria-activedescendant", screen.getAllByTestId("module-option")[2].id);
    await user.keyboard("{ArrowDown}");
    expect(selected()).toBe("@shop/cart");
    await user.keyboard("{ArrowUp}");
    expect(selected()).toBe("@shop/orders");
    await user.keyboard("{Enter}");
    expect(text.value).toBe("Fix @shop/orders ");
    expect(onEnter).not.toHaveBeenCalled();
    expect(screen.queryByTestId("module-autocomplete")).not.toBeInTheDocument();
    // With the list closed, Enter is the textarea's again.
    await user.keyboard("{Enter}");
    expect(onEnter).toHaveBeenCalledTimes(1);
  });

  it("inserts with Tab, and with a click", async () => {
    const { text, user } = setup();
    await user.click(text);
    await user.type(text, "@ca");
    await user.keyboard("{ArrowDown}{Tab}");
    expect(text.value).toBe("@shop/catalog ");
    expect(text).toHaveFocus();
    await user.type(text, "and @or");
    fireEvent.click(screen.getByRole("option", { name: /@shop\/orders/ }));
    expect(text.value).toBe("@shop/catalog and @shop/orders ");
  });

  it("closes with Escape for this mention, without the Escape reaching anything else", async () => {
    const { text, user } = setup();
    const outer = vi.fn();
    document.addEventListener("keydown", outer);
    await user.click(text);
    await user.type(text, "@s");
    await user.keyboard("{Escape}");
    expect(screen.queryByTestId("module-autocomplete")).not.toBeInTheDocument();
    expect(outer).not.toHaveBeenCalledWith(expect.objectContaining({ key: "Escape" }));
    await user.type(text, "h");
    expect(screen.queryByTestId("module-autocomplete")).not.toBeInTheDocument();
    // A new mention opens it again.
    await user.type(text, " @");
    expect(screen.getByTestId("module-autocomplete")).toBeInTheDocument();
    document.removeEventListener("keydown", outer);
  });
});
