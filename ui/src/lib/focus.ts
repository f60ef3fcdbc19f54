// Focus in a modal dialog: it takes the focus when it opens, keeps Tab and Shift+Tab inside
// itself (wrapping at either end), and gives the focus back to what had it when it closes.
// `wrapTarget` is the pure rule (unit tested); `trapFocus` is the Svelte action over the DOM.

const FOCUSABLE =
  "a[href], button:not([disabled]), input:not([disabled]), textarea:not([disabled]), select:not([disabled]), summary, [tabindex]:not([tabindex='-1'])";

/**
 * Where Tab (or Shift+Tab, `backwards`) must go instead of its default, given the dialog's
 * focusable elements in order and the index of the one focused (-1: none inside): the other
 * end when it would leave the dialog, else `null` (the browser's own move stays inside).
 */
export function wrapTarget(count: number, focused: number, backwards: boolean): number | null {
  if (count === 0) return null;
  if (focused < 0) return backwards ? count - 1 : 0;
  if (backwards && focused === 0) return count - 1;
  if (!backwards && focused === count - 1) return 0;
  return null;
}

/** Svelte action: traps the focus in `node` while it is mounted, then returns it. */
export function trapFocus(node: HTMLElement) {
  const before = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  const focusables = () => [...node.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((element) => element.offsetParent !== null || element === document.activeElement);
  const first = node.querySelector<HTMLElement>("[data-autofocus]") ?? focusables()[0] ?? node;
  queueMicrotask(() => first.focus());
  function onkeydown(event: KeyboardEvent) {
    if (event.key !== "Tab") return;
    const all = focusables();
    const focused = all.indexOf(document.activeElement as HTMLElement);
    const target = wrapTarget(all.length, focused, event.shiftKey);
    if (target === null) return;
    event.preventDefault();
    all[target]?.focus();
  }
  node.addEventListener("keydown", onkeydown);
  return {
    destroy() {
      node.removeEventListener("keydown", onkeydown);
      if (before?.isConnected) before.focus();
    },
  };
}
