// View logic of the Activity view: one line per controller step, what it says in words, and
// the filter (text, failures only). Pure functions, unit tested.

/** A controller step as the shell sends it (the generated `ActivityEvent`). */
export interface Step {
  at: string;
  kind: string;
  name: string | null;
  what:
    | { type: "started" }
    | { type: "finished"; nextInMs: number | null }
    | { type: "failed"; error: string; failures: number; retryInMs: number | null }
    | { type: "cutOff" }
    | { type: "resynced"; objects: number }
    | { type: "resyncFailed"; error: string }
    | { type: "wrote"; uri: string; cid: string }
    | { type: "deleted"; uri: string };
}

/** How many steps the view keeps (the oldest go first). */
export const KEPT_STEPS = 500;

/** The steps with `step` added at the top, at most [`KEPT_STEPS`] of them. */
export function remember<S extends Step>(steps: readonly S[], step: S): S[] {
  return [step, ...steps].slice(0, KEPT_STEPS);
}

function seconds(ms: number): string {
  return ms < 1000 ? "at once" : `in ${Math.round(ms / 1000)} s`;
}

/** The step in words. */
export function describeStep(step: Step): string {
  const what = step.what;
  switch (what.type) {
    case "started":
      return "looked at";
    case "finished":
      return what.nextInMs === null ? "in order" : `in order; looks again ${seconds(what.nextInMs)}`;
    case "failed":
      return `failed (${what.failures}×): ${what.error}${what.retryInMs === null ? "" : `; retries ${seconds(what.retryInMs)}`}`;
    case "cutOff":
      return "stopped at shutdown";
    case "resynced":
      return `all ${what.objects} looked at again`;
    case "resyncFailed":
      return `could not be listed: ${what.error}`;
    case "wrote":
      return `record written: ${what.uri}`;
    case "deleted":
      return `record deleted: ${what.uri}`;
  }
}

/** The at-uri of the record a step wrote or deleted, if it is one. */
export function writtenRecord(step: Step): string | undefined {
  return step.what.type === "wrote" || step.what.type === "deleted" ? step.what.uri : undefined;
}

const DEPLOYMENT_COLLECTIONS: Record<string, string> = {
  "computer.socialweb.infra": "Infra",
  "computer.socialweb.ephemeralInfra": "EphemeralInfra",
};

/**
 * The deployment a record at-uri most likely belongs to: its kind by collection, its name by
 * record key (a successor key names another); the caller checks the row's `recordUri`.
 */
export function deploymentOfRecord(uri: string): { kind: string; name: string } | undefined {
  const [, , collection, rkey] = uri.replace(/^at:\/\//, "at/").split("/");
  const kind = collection ? DEPLOYMENT_COLLECTIONS[collection] : undefined;
  return kind && rkey && rkey !== "self" ? { kind, name: rkey } : undefined;
}

/** Whether the step is a record write (or delete). */
export function isRecordWrite(step: Step): boolean {
  return writtenRecord(step) !== undefined;
}

/** Whether the step is a failure. */
export function isFailure(step: Step): boolean {
  return step.what.type === "failed" || step.what.type === "resyncFailed";
}

/** Which steps a filter keeps: all, failures only, or record writes only. */
export type StepFilter = "all" | "failures" | "writes";

/** The steps the filter keeps: text over kind, name and description; failures or writes only. */
export function filterSteps<S extends Step>(steps: readonly S[], text: string, filter: StepFilter): S[] {
  const needle = text.trim().toLowerCase();
  return steps.filter(
    (step) =>
      (filter !== "failures" || isFailure(step)) &&
      (filter !== "writes" || isRecordWrite(step)) &&
      (needle === "" ||
        `${step.kind} ${step.name ?? ""} ${describeStep(step)}`.toLowerCase().includes(needle)),
  );
}

/** A deployment as the Activity view groups steps by it (a row of the deployments list). */
export interface DeploymentRef {
  kind: string;
  name: string;
  uid: string;
  recordUri?: string | null;
}

/** Routine steps: a look that found everything in order, or a periodic look at all. */
export function isRoutine(step: Step): boolean {
  return step.what.type === "started" || step.what.type === "finished" || step.what.type === "resynced";
}

/** The length of an object's uid (a canonical UUID) at the start of a contract's name. */
const UID_LENGTH = 36;
/** The prefixes of the names of the AtprotoRecord objects that write deployments' records. */
const RECORD_WRITER_PREFIXES: Record<string, string> = { "infra-": "Infra", "ephemeral-": "EphemeralInfra" };

/** Finds deployments by what steps name them with: kind and name, uid, record. */
export class DeploymentIndex {
  readonly #byName = new Map<string, DeploymentRef>();
  readonly #byUid = new Map<string, DeploymentRef>();
  readonly #byRecord = new Map<string, DeploymentRef>();

  constructor(deployments: readonly DeploymentRef[]) {
    for (const deployment of deployments) {
      this.#byName.set(`${deployment.kind}/${deployment.name}`, deployment);
      this.#byUid.set(deployment.uid, deployment);
      if (deployment.recordUri) this.#byRecord.set(deployment.recordUri, deployment);
    }
  }

  /**
   * The deployment `step` is about, as kind and name: the deployment itself, the object that
   * writes its record (`infra-<uid>`), one of its contracts (`<uid>-<contract>`), or a write of
   * its record; undefined for the rest (the index, the market, resyncs).
   */
  of(step: Step): { kind: string; name: string } | undefined {
    const name = step.name ?? "";
    switch (step.kind) {
      case "Infra":
      case "EphemeralInfra":
        return name ? { kind: step.kind, name } : undefined;
      case "AtprotoRecord": {
        const prefix = Object.keys(RECORD_WRITER_PREFIXES).find((start) => name.startsWith(start));
        return prefix ? this.#byUid.get(name.slice(prefix.length)) : undefined;
      }
      case "ComputeContract":
        return name.charAt(UID_LENGTH) === "-" ? this.#byUid.get(name.slice(0, UID_LENGTH)) : undefined;
    }
    const uri = writtenRecord(step);
    if (uri === undefined) return undefined;
    return this.#byRecord.get(uri) ?? deploymentOfRecord(uri);
  }

  /** What a step of a deployment's group is about, in a word or two. */
  subject(step: Step): string {
    switch (step.kind) {
      case "Infra":
      case "EphemeralInfra":
        return "declaration";
      case "AtprotoRecord":
        return "record";
      case "ComputeContract":
        return this.of(step) ? `contract ${(step.name ?? "").slice(UID_LENGTH + 1)}` : "contract";
      case "Record":
        return "repo";
    }
    return step.kind;
  }
}

/** One line of a group: a step shown, or a run of routine steps folded into one line. */
export type GroupEntry<S extends Step> =
  | { type: "step"; key: string; step: S }
  | { type: "folded"; key: string; steps: S[]; summary: string };

/** The steps about one deployment (or about none), newest first. */
export interface StepGroup<S extends Step> {
  /** `Kind/name`, or `other` for the steps about no one deployment. */
  key: string;
  deployment: { kind: string; name: string } | undefined;
  steps: S[];
  entries: GroupEntry<S>[];
}

/** The key of the group of steps about no one deployment. */
export const OTHER_GROUP = "other";

/** The words routine steps are folded under: how many, and what they were. */
export function foldSummary(steps: readonly Step[]): string {
  const kinds = [...new Set(steps.map((step) => (step.what.type === "finished" ? "in order" : describeStep(step))))];
  return `${steps.length} routine ${steps.length === 1 ? "step" : "steps"}: ${kinds.join(", ")}`;
}

/**
 * The steps grouped by the deployment they are about (groups in the order of their newest
 * step; the steps about none last), each run of routine steps in a group folded into one entry.
 * A fold's key stays while newer steps arrive (it is its oldest step's), so an open fold stays
 * open.
 */
export function groupSteps<S extends Step>(steps: readonly S[], index: DeploymentIndex): StepGroup<S>[] {
  const groups = new Map<string, StepGroup<S>>();
  for (const step of steps) {
    const deployment = index.of(step);
    const key = deployment ? `${deployment.kind}/${deployment.name}` : OTHER_GROUP;
    let group = groups.get(key);
    if (!group) {
      group = { key, deployment, steps: [], entries: [] };
      groups.set(key, group);
    }
    group.steps.push(step);
  }
  const ordered = [...groups.values()].sort((a, b) => Number(a.key === OTHER_GROUP) - Number(b.key === OTHER_GROUP));
  for (const group of ordered) group.entries = entriesOf(group.key, group.steps);
  return ordered;
}

function entriesOf<S extends Step>(groupKey: string, steps: readonly S[]): GroupEntry<S>[] {
  const entries: GroupEntry<S>[] = [];
  let run: S[] = [];
  const closeRun = () => {
    const oldest = run.at(-1);
    if (oldest) entries.push({ type: "folded", key: `${groupKey}|${stepKey(oldest)}`, steps: run, summary: foldSummary(run) });
    run = [];
  };
  for (const step of steps) {
    if (isRoutine(step)) {
      run.push(step);
      continue;
    }
    closeRun();
    entries.push({ type: "step", key: `${groupKey}|${stepKey(step)}`, step });
  }
  closeRun();
  return uniqueKeys(entries);
}

/** The entries with keys made unique (a suffix on repeats), counted from the oldest so that a
 *  key stays as newer steps arrive. */
function uniqueKeys<E extends { key: string }>(entries: E[]): E[] {
  const seen = new Map<string, number>();
  for (let at = entries.length - 1; at >= 0; at--) {
    const entry = entries[at]!;
    const repeats = seen.get(entry.key) ?? 0;
    seen.set(entry.key, repeats + 1);
    if (repeats > 0) entries[at] = { ...entry, key: `${entry.key}#${repeats}` };
  }
  return entries;
}

/** A step's identity for keys: when, which object, what. */
function stepKey(step: Step): string {
  return `${step.at}|${step.kind}|${step.name ?? ""}|${step.what.type}`;
}
