// Windowing for long lists: which rows a scrolled viewport shows, so a list of thousands
// renders only the few dozen rows in view. Fixed row height; pure arithmetic, unit tested.

export interface Viewport {
  /** The list's scroll offset, in pixels. */
  scrollTop: number;
  /** The visible height, in pixels. */
  height: number;
}

export interface Window {
  /** The first row rendered. */
  start: number;
  /** One past the last row rendered. */
  end: number;
  /** The space above the first rendered row, in pixels. */
  before: number;
  /** The space below the last rendered row, in pixels. */
  after: number;
}

/** The rows to render for `count` rows of `rowHeight` pixels, with `overscan` extra each side. */
export function visibleWindow(viewport: Viewport, count: number, rowHeight: number, overscan = 8): Window {
  if (count <= 0 || rowHeight <= 0) return { start: 0, end: 0, before: 0, after: 0 };
  const first = Math.floor(Math.max(0, viewport.scrollTop) / rowHeight);
  const shown = Math.ceil(Math.max(0, viewport.height) / rowHeight) + 1;
  const start = Math.min(count, Math.max(0, first - overscan));
  const end = Math.min(count, first + shown + overscan);
  return { start, end, before: start * rowHeight, after: (count - end) * rowHeight };
}

/** The scroll offset that brings row `index` into view, from `scrollTop`. */
export function scrollToRow(index: number, viewport: Viewport, rowHeight: number): number {
  const top = index * rowHeight;
  if (top < viewport.scrollTop) return top;
  const bottom = top + rowHeight;
  if (bottom > viewport.scrollTop + viewport.height) return bottom - viewport.height;
  return viewport.scrollTop;
}
