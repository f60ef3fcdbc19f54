// View logic of the Clusters screens: phase tones and what a waiting phase waits for, the
// kubeconfig lifetime picker and its bounds, the file path, its expiry and the shell line, the dry-run
// diff, the delete confirmation. Pure functions, unit tested.

import { countdown, type PhaseTone } from "./deployments";

const CLUSTER_TONES: Record<string, PhaseTone> = {
  Ready: "steady",
  Initializing: "waiting",
  Draining: "waiting",
  Unavailable: "final",
};

/** The tone of a cluster's phase. */
export function clusterTone(phase: string): PhaseTone {
  return CLUSTER_TONES[phase] ?? "waiting";
}

/** What a cluster in `phase` waits for, or `undefined` when it waits for nothing. */
export function clusterWaitingFor(phase: string): string | undefined {
  switch (phase) {
    case "Initializing":
      return "the control plane to start and answer";
    case "Draining":
      return "its nodes to be released before it goes";
    default:
      return undefined;
  }
}

/** What a node in `phase` waits for. */
export function nodeWaitingFor(phase: string | null): string | undefined {
  switch (phase) {
    case null:
    case "Pending":
      return "a contract to rent its machine";
    case "Launched":
      return "the machine to join the cluster";
    case "Registered":
      return "the node to become ready";
    default:
      return undefined;
  }
}

export const MIN_TTL_SECONDS = 60;
export const MAX_TTL_SECONDS = 86_400;
export const DEFAULT_TTL_SECONDS = 28_800;

/** The lifetimes offered, in seconds, with their labels. */
export const TTL_CHOICES: readonly { seconds: number; label: string }[] = [
  { seconds: 3600, label: "1 hour" },
  { seconds: 28_800, label: "8 hours (default)" },
  { seconds: 86_400, label: "24 hours (longest)" },
];

/** Why a typed lifetime is refused, or `undefined` when it is allowed. */
export function ttlProblem(seconds: number): string | undefined {
  if (!Number.isInteger(seconds)) return "Type a whole number of seconds.";
  if (seconds < MIN_TTL_SECONDS) return `At least ${MIN_TTL_SECONDS} seconds.`;
  if (seconds > MAX_TTL_SECONDS) return `At most ${MAX_TTL_SECONDS} seconds (24 hours).`;
  return undefined;
}

/** The default file of a cluster's kubeconfig in `directory`. */
export function kubeconfigPath(directory: string, cluster: string): string {
  const separator = directory.includes("\\") && !directory.includes("/") ? "\\" : "/";
  return `${directory.replace(/[\\/]+$/, "")}${separator}socialweb-${cluster}.yaml`;
}

/** The line that points kubectl at the file, quoted for a POSIX shell. */
export function exportLine(path: string): string {
  return `export KUBECONFIG='${path.replace(/'/g, "'\\''")}'`;
}

/** One line of a diff: kept, added (only in the result) or removed (only in what was sent). */
export interface DiffLine {
  kind: "same" | "added" | "removed";
  text: string;
}

/** A line diff from `before` to `after` (longest common subsequence). */
export function diffLines(before: string, after: string): DiffLine[] {
  const a = before.split("\n");
  const b = after.split("\n");
  const lengths: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i]![j] = a[i] === b[j] ? lengths[i + 1]![j + 1]! + 1 : Math.max(lengths[i + 1]![j]!, lengths[i]![j + 1]!);
    }
  }
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      lines.push({ kind: "same", text: a[i]! });
      i++;
      j++;
    } else if (lengths[i + 1]![j]! >= lengths[i]![j + 1]!) {
      lines.push({ kind: "removed", text: a[i++]! });
    } else {
      lines.push({ kind: "added", text: b[j++]! });
    }
  }
  while (i < a.length) lines.push({ kind: "removed", text: a[i++]! });
  while (j < b.length) lines.push({ kind: "added", text: b[j++]! });
  return lines;
}

/** A cluster's member as the window shows it (the generated `MemberRow`). */
export interface Member {
  did: string;
  name: string | null;
  handle?: string | null;
  /** The signed-in owner: never offered to revoke themself. */
  you?: boolean;
}

/** Whether the window offers to revoke `member`: anyone but the signed-in owner, whose own
 * grant the api refuses to revoke too (it would lock them out). */
export function offersRevoke(member: Member): boolean {
  return !member.you;
}

/** What revoking `member` on `cluster` does, in words, for the confirmation: the member by
 * handle first, then its name in the cluster and its DID. */
export function revokeConfirmation(cluster: string, member: Member): { title: string; message: string } {
  const handle = member.handle ? `@${member.handle}` : null;
  const details = [member.name, member.did].filter((part): part is string => !!part);
  const who = handle ? `${handle} (${details.join(", ")})` : member.name ? `${member.name} (${member.did})` : member.did;
  const effect = `Every grant it holds on ${cluster} is revoked: kubeconfigs issued to it stop working at once.`;
  return { title: `Revoke ${handle ?? member.name ?? member.did}?`, message: `${who}. ${effect}` };
}

/** Whether the typed confirmation allows deleting `cluster`. */
export function deleteConfirmed(cluster: string, typed: string): boolean {
  return typed.trim() === cluster;
}

/** A Job to follow after an apply: its namespace and name, when the object is a Job. */
export function jobToFollow(object: string): { namespace: string; name: string } | undefined {
  try {
    const value = JSON.parse(object);
    if (value?.kind !== "Job" || typeof value?.metadata?.name !== "string") return undefined;
    return { namespace: value.metadata.namespace ?? "default", name: value.metadata.name };
  } catch {
    return undefined;
  }
}

/** A manifest to start from: a Job that prints a greeting. */
export const EXAMPLE_JOB = `apiVersion: batch/v1
kind: Job
metadata:
  name: hello
  namespace: default
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: hello
          image: busybox
          args: ["hello from socialweb"]
`;

/** When a saved kubeconfig stops working, in words, at `nowMs`. */
export function expiryLine(expiresAt: string | null, nowMs: number): string {
  if (!expiresAt) return "Never expires.";
  return Date.parse(expiresAt) <= nowMs ? "Expired." : `Expires ${countdown(expiresAt, nowMs)}.`;
}

/** A kept kubeconfig as this module reads it (the generated `KubeconfigView` has it all). */
export interface Kept {
  cluster: string;
  saved: { path: string };
  problem: string | null;
}

/** What the kept kubeconfigs say against the clusters listed: each listed cluster whose latest
 * kubeconfig no longer works, with why (its drift badge), and the kubeconfigs of clusters no
 * longer listed that no longer work (to remove). */
export function kubeconfigDrift<K extends Kept>(
  kept: readonly K[],
  listed: readonly string[],
): { byCluster: Map<string, string>; orphans: K[] } {
  const latest = new Map<string, K>();
  for (const entry of kept) latest.set(entry.cluster, entry);
  const byCluster = new Map<string, string>();
  for (const [cluster, entry] of latest) {
    if (entry.problem && listed.includes(cluster)) byCluster.set(cluster, entry.problem);
  }
  const orphans = kept.filter((entry) => entry.problem && !listed.includes(entry.cluster));
  return { byCluster, orphans };
}

/** When the clusters shown were last seen live, while the gateway is not: "as of 14:02, the
 * gateway is unreachable" (with the date when it was another day). */
export function asOfLine(asOf: string, connection: string, nowMs: number): string {
  const seen = new Date(asOf);
  const now = new Date(nowMs);
  const two = (value: number) => String(value).padStart(2, "0");
  const time = `${two(seen.getHours())}:${two(seen.getMinutes())}`;
  const sameDay = seen.toDateString() === now.toDateString();
  const when = sameDay ? time : `${seen.getFullYear()}-${two(seen.getMonth() + 1)}-${two(seen.getDate())} ${time}`;
  const why = connection === "connecting" ? "connecting to the gateway" : "the gateway is unreachable";
  return `as of ${when}, ${why}`;
}
