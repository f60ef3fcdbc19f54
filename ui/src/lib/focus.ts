// Where the keyboard focus goes: the elements a Tab can reach inside a region, the next one
// for Tab or Shift+Tab (wrapping, so a dialog keeps the focus), and the one a dialog starts on.
// Pure functions over lists, unit tested; the modal layers (lib/modal.ts) use them.

/** What a Tab can reach (before checking visibility and `inert`). */
export const TABBABLE =
  'a[href], button:not([disabled]), input:not([disabled]):not([type="hidden"]), select:not([disabled]), textarea:not([disabled]), summary, [tabindex]:not([tabindex="-1"])';

/** The index Tab (or Shift+Tab, `backwards`) moves to from `current` (-1: nothing focused
 * among them) among `count` tabbable elements, wrapping at both ends; -1 when there are none. */
export function nextTabIndex(current: number, count: number, backwards: boolean): number {
  if (count === 0) return -1;
  if (current < 0) return backwards ? count - 1 : 0;
  return (current + (backwards ? -1 : 1) + count) % count;
}

/** The element a dialog starts on: the one marked `autofocus` among the candidates, else the
 * first field, else the first tabbable; `undefined` when none. */
export function initialFocus<E>(candidates: readonly E[], marked: (element: E) => boolean, isField: (element: E) => boolean): E | undefined {
  return candidates.find(marked) ?? candidates.find(isField) ?? candidates[0];
}
