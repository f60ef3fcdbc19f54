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
