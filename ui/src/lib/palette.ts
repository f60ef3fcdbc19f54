// The command palette (Ctrl/Cmd+K): every action the window offers and every deployment to
// jump to, matched against what the owner types. Matching is by words in order, each a prefix
// or substring of the label (so "rel web" finds "Release… web"), ranked by how early and how
// tightly it matches. Pure functions, unit tested.

/** One entry of the palette. */
export interface PaletteItem {
  id: string;
  label: string;
  /** A second line: what it does or where it leads. */
  hint?: string;
  /** The keys that do the same without the palette, e.g. `Ctrl+N`. */
  shortcut?: string;
}

/** The score of `label` for `query` (higher is better), or `undefined` when it does not match. */
export function score(label: string, query: string): number | undefined {
  const words = query.trim().toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return 0;
  const text = label.toLowerCase();
  let from = 0;
  let total = 0;
  for (const word of words) {
    const at = text.indexOf(word, from);
    if (at < 0) return undefined;
    const startsWord = at === 0 || /[\s\-_/.:›]/.test(text.charAt(at - 1));
    total += (startsWord ? 10 : 2) - Math.min(at - from, 8) * 0.5;
    from = at + word.length;
  }
  return total - label.length * 0.01;
}

/** The items matching `query`, best first (ties keep their order). */
export function rank<I extends PaletteItem>(items: readonly I[], query: string, limit = 50): I[] {
  return items
    .map((item, index) => ({ item, index, score: score(item.label, query) }))
    .filter((entry): entry is { item: I; index: number; score: number } => entry.score !== undefined)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, limit)
    .map((entry) => entry.item);
}

/** The next highlighted index after pressing ↑ (-1) or ↓ (+1), wrapping around. */
export function step(current: number, by: number, count: number): number {
  if (count === 0) return 0;
  return (((current + by) % count) + count) % count;
}
