// Notices: what the owner is told without looking, when a contract of a deployment fails, is
// released or drifts, or when a kubeconfig saved here stops working (cluster drift). They are worked out from the list's rows as they change (contracts
// counted by phase, and drifted): a count of `failed`, `released` or drifted that grows on a
// deployment already known is a notice (one per deployment, however long the drift lasts); the first sight of a deployment (the list loading, another device's deployment
// arriving) is not. When the owner is not looking at the window (it is hidden, minimised or
// behind another), the same notices also go to the desktop, as one notification per batch.

import type { DeploymentChange, DeploymentRow } from "../ipc";
import { olderThan } from "./deployments";

/** One notice. */
export interface Notice {
  id: string;
  tone: "bad" | "steady";
  title: string;
  body: string;
  kind: string;
  name: string;
}

/** The rows last seen, by `kind/name`. */
export type Seen = Map<string, DeploymentRow>;

/** What is counted on a row and told when the count grows: a phase, or drift. */
const NOTIFIED: Record<string, { tone: Notice["tone"]; one: string; many: (n: number) => string }> = {
  failed: { tone: "bad", one: "A contract failed", many: (n) => `${n} contracts failed` },
  released: { tone: "steady", one: "A contract was released", many: (n) => `${n} contracts were released` },
  drifted: { tone: "bad", one: "A contract drifted", many: (n) => `${n} contracts drifted` },
};

/** How `Seen` keys a deployment. */
export function seenKey(kind: string, name: string): string {
  return `${kind}/${name}`;
}

function count(row: DeploymentRow | undefined, what: string): number {
  if (what === "drifted") return row?.drifting ?? 0;
  return row?.contracts.find((entry) => entry.phase === what)?.count ?? 0;
}

/** The rows of a fresh list, as the baseline later changes are compared with. */
export function seenFrom(rows: readonly DeploymentRow[]): Seen {
  return new Map(rows.map((row) => [seenKey(row.kind, row.name), row]));
}

/** The notices `change` brings, given what was `seen`; `seen` is updated to the change. A
 * change older than the row seen (it arrived after the list that already holds it) brings
 * none and is not kept. */
export function noticesFor(seen: Seen, change: DeploymentChange, at = Date.now()): Notice[] {
  const id = seenKey(change.kind, change.name);
  const before = seen.get(id);
  if (before && change.row && olderThan(change.row, before)) return [];
  if (change.row) seen.set(id, change.row);
  else seen.delete(id);
  if (!before || !change.row) return [];
  const after = change.row;
  return Object.entries(NOTIFIED).flatMap(([phase, words]) => {
    const grown = count(after, phase) - count(before, phase);
    if (grown <= 0) return [];
    return [
      {
        id: `${id}/${phase}/${at}`,
        tone: words.tone,
        title: grown === 1 ? words.one : words.many(grown),
        body: `${after.name} (${after.kind})`,
        kind: after.kind,
        name: after.name,
      },
    ];
  });
}

/** The clusters whose kubeconfig was last seen drifted; `undefined` before the first look (a
 * drift already there at start is not news). */
export type DriftSeen = ReadonlySet<string> | undefined;

/** The notices a drift check brings (one per cluster whose kubeconfig stopped working since
 * `seen`), and what to keep as seen. A kubeconfig's own trouble (expired, its file gone) needs
 * no gateway, so it is told whether the list is live or cached; but while the gateway is not
 * `live` nothing is forgotten: a cluster missing from a cached list has not recovered. */
export function clusterDriftNotices(
  seen: DriftSeen,
  drift: ReadonlyMap<string, string>,
  live: boolean,
  at = Date.now(),
): { notices: Notice[]; seen: DriftSeen } {
  const now = new Set(drift.keys());
  if (seen === undefined) return { notices: [], seen: now };
  const notices = [...drift]
    .filter(([cluster]) => !seen.has(cluster))
    .map(([cluster, why]) => ({
      id: `cluster/${cluster}/drift/${at}`,
      tone: "bad" as const,
      title: "A kubeconfig stopped working",
      body: `${cluster} (cluster): ${why}`,
      kind: CLUSTER,
      name: cluster,
    }));
  return { notices, seen: live ? now : new Set([...seen, ...now]) };
}

/** The `kind` of a notice about a cluster (the others name a deployment's kind). */
export const CLUSTER = "cluster";

/** What the desktop shows for notices told while the owner was away from the window. */
export interface DesktopNotification {
  title: string;
  body: string;
}

/** Whether the owner is looking at the window: it has the focus and is not hidden. */
export function lookingAtWindow(focused: boolean, hidden: boolean): boolean {
  return focused && !hidden;
}

/** The one desktop notification for `told` (none for nothing): a single notice as it is; several
 * as a count, with one line each, so a burst of releases does not flood the desktop. */
export function desktopNotification(told: readonly Notice[]): DesktopNotification | undefined {
  const [first] = told;
  if (!first) return undefined;
  if (told.length === 1) return { title: first.title, body: first.body };
  return {
    title: told.some((notice) => notice.kind === CLUSTER) ? `${told.length} updates` : `${told.length} contract updates`,
    body: told.map((notice) => `${notice.title}: ${notice.body}`).join("\n"),
  };
}
