// The window's top-level sections, their order in the navigation and their keyboard shortcuts.
// Pure data and functions: the navigation component and the shortcut handler both read it.

export type SectionId = "deployments" | "clusters" | "activity" | "settings";

export interface Section {
  id: SectionId;
  title: string;
  /** The key pressed with Ctrl (Cmd on macOS) to open the section. */
  key: string;
  /** One line under the title, saying what the section is for. */
  summary: string;
}

export const SECTIONS: readonly Section[] = [
  {
    id: "deployments",
    title: "Deployments",
    key: "1",
    summary: "Every Infra and EphemeralInfra you declared or follow, and the phase of each contract.",
  },
  {
    id: "clusters",
    title: "Clusters",
    key: "2",
    summary: "Your tenant Kubernetes clusters and the nodes behind them.",
  },
  {
    id: "activity",
    title: "Activity",
    key: "3",
    summary: "What the embedded controller did, and every record it wrote.",
  },
  {
    id: "settings",
    title: "Settings",
    key: ",",
    summary: "This installation: the network it talks to, where it keeps its data.",
  },
];

export const DEFAULT_SECTION: SectionId = "deployments";

/** The keyboard event's facts that matter for shortcuts (a subset of `KeyboardEvent`). */
export interface ShortcutKey {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  shiftKey: boolean;
}

/** Whether the platform's command modifier is Cmd (macOS) rather than Ctrl. */
export function usesMetaKey(platform: string): boolean {
  return /mac|iphone|ipad/i.test(platform);
}

/**
 * The section a shortcut opens, or `undefined` when the key press is not a section shortcut.
 * Only the platform's command modifier alone counts: Ctrl+Shift+1 is left to the page.
 */
export function sectionForShortcut(event: ShortcutKey, metaIsCommand: boolean): SectionId | undefined {
  const command = metaIsCommand ? event.metaKey && !event.ctrlKey : event.ctrlKey && !event.metaKey;
  if (!command || event.altKey || event.shiftKey) return undefined;
  return SECTIONS.find((section) => section.key === event.key)?.id;
}

/** How a shortcut is written for the user, e.g. `Ctrl+1` or `⌘1`. */
export function shortcutLabel(key: string, metaIsCommand: boolean): string {
  return metaIsCommand ? `⌘${key}` : `Ctrl+${key}`;
}

export function sectionById(id: SectionId): Section {
  const section = SECTIONS.find((candidate) => candidate.id === id);
  if (!section) throw new Error(`unknown section ${id}`);
  return section;
}
