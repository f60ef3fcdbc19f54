// Modal layers (the dialogs: the editor, a confirmation, the command palette, sign-in), as the
// WAI-ARIA dialog pattern asks: opening one moves the focus into it (its `data-autofocus`
// element, else its first field, else its first control), Tab and Shift+Tab stay inside it,
// everything else in the page is `inert`, and closing it gives the focus back to where it was.
// Escape closes only the top layer: one capturing listener hears it before any section does,
// so a confirmation over the deployment panel closes alone. Used as `use:modal={{ onclose }}`
// on a dialog's backdrop.

import { initialFocus, nextTabIndex, TABBABLE } from "./focus";

export interface ModalOptions {
  /** Closes the dialog (Escape). */
  onclose: () => void;
}

interface Layer {
  node: HTMLElement;
  options: ModalOptions;
  /** Where the focus was when it opened. */
  returnTo: HTMLElement | null;
  /** The elements this layer made inert (not those inert before). */
  madeInert: HTMLElement[];
}

const layers: Layer[] = [];

/** The elements a Tab reaches in `root`, in order: shown, not inert. */
export function tabbables(root: HTMLElement): HTMLElement[] {
  return Array.from(root.querySelectorAll<HTMLElement>(TABBABLE)).filter(
    (element) => !element.closest("[inert]") && element.getClientRects().length > 0,
  );
}

/** Makes inert every element of the page beside the path from `<body>` to `node`. */
function inertAround(node: HTMLElement): HTMLElement[] {
  const made: HTMLElement[] = [];
  for (let at: HTMLElement | null = node; at && at !== document.body; at = at.parentElement) {
    for (const sibling of Array.from(at.parentElement?.children ?? [])) {
      if (sibling !== at && sibling instanceof HTMLElement && !sibling.inert) {
        sibling.inert = true;
        made.push(sibling);
      }
    }
  }
  return made;
}

function onKeydown(event: KeyboardEvent) {
  const top = layers.at(-1);
  if (!top) return;
  if (event.key === "Escape") {
    event.preventDefault();
    event.stopImmediatePropagation();
    top.options.onclose();
  } else if (event.key === "Tab") {
    event.preventDefault();
    const reachable = tabbables(top.node);
    const at = reachable.indexOf(document.activeElement as HTMLElement);
    reachable[nextTabIndex(at, reachable.length, event.shiftKey)]?.focus();
  }
}

function focusInto(node: HTMLElement) {
  if (node.contains(document.activeElement)) return;
  const start = initialFocus(
    tabbables(node),
    (element) => element.hasAttribute("data-autofocus"),
    (element) => element instanceof HTMLInputElement || element instanceof HTMLTextAreaElement,
  );
  (start ?? node).focus();
}

/** Whether a modal layer is open (the page's own shortcuts then wait). */
export function modalOpen(): boolean {
  return layers.length > 0;
}

/** Makes `node` the top modal layer while it is in the page. */
export function modal(node: HTMLElement, options: ModalOptions) {
  const layer: Layer = {
    node,
    options,
    returnTo: document.activeElement instanceof HTMLElement ? document.activeElement : null,
    madeInert: inertAround(node),
  };
  if (layers.length === 0) window.addEventListener("keydown", onKeydown, true);
  layers.push(layer);
  queueMicrotask(() => focusInto(node));
  return {
    update(next: ModalOptions) {
      layer.options = next;
    },
    destroy() {
      layers.splice(layers.indexOf(layer), 1);
      for (const element of layer.madeInert) element.inert = false;
      if (layers.length === 0) window.removeEventListener("keydown", onKeydown, true);
      if (layer.returnTo?.isConnected && !layer.returnTo.closest("[inert]")) layer.returnTo.focus();
    },
  };
}

/** Moves the focus to what an action made (a new row, a contract's card) once the page shows
 * it and any dialog that asked for it has closed: `selector` is looked up after two frames. */
export function focusResult(selector: string) {
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      const target = document.querySelector<HTMLElement>(selector);
      if (target && !target.closest("[inert]")) target.focus();
    }),
  );
}
