// View logic of the deployments: how a phase is styled, what a contract waits for, how the
// sync state reads, search and filters, live changes applied to the list, the optimistic
// release and its rollback, a TTL countdown. Pure functions over plain data, unit tested; the
// components only render what these return.

import type { SyncState, SyncSummary } from "../ipc";

/** The facts of a row this module reads (the generated `DeploymentRow` has them all). */
export interface Row {
  kind: string;
  name: string;
  description: string | null;
  phase: string;
  waiting: boolean;
  contracts: { phase: string; count: number }[];
  /** How many of its contracts drifted (the world disagrees with their records). */
  drifting: number;
  sync: SyncSummary;
  syncMessage: string | null;
  writtenHere: boolean;
  writer: string | null;
  /** Another account keeps its record: shown as that record says, changed only there. */
  readOnly: boolean;
  expiresAt: string | null;
  endedAt: string | null;
  recordUri: string | null;
  /** The object's uid and write count: the higher version of the same object is the newer. */
  uid: string;
  version: number;
}

/** The sync words of the list and the reconciler's sync states: the core's types, generated. */
export type { SyncState, SyncSummary };

/** A contract as the detail shows it (the generated `ContractView`). */
export interface Contract {
  name: string;
  state: string;
  releaseRequestedAt: string | null;
  phase: string | null;
  winner: string | null;
  receipt: string | null;
  message: string | null;
  drift?: { detail: string; since: string; fix: string } | null;
}

/** What the owner can do about a drift, in words (the button is the contract's own). */
export function driftFix(fix: string): string {
  switch (fix) {
    case "release":
      return "Release it (and request it again if you still need it).";
    case "keeper":
      return "The cluster's gateway keeps this record and releases the contract of a node it lost: nothing to click here.";
    default:
      return "";
  }
}

/** How a phase looks: steady (a resting state), waiting (something is in motion), bad, final. */
export type PhaseTone = "steady" | "waiting" | "bad" | "final";

const TONES: Record<string, PhaseTone> = {
  pending: "waiting",
  staged: "steady",
  deploying: "waiting",
  deployed: "steady",
  releasing: "waiting",
  released: "final",
  degraded: "bad",
  ending: "waiting",
  deleting: "waiting",
  ended: "final",
  requesting: "waiting",
  failed: "bad",
};

/** The tone of a deployment's or a contract's phase. */
export function phaseTone(phase: string | null): PhaseTone {
  return (phase && TONES[phase]) || "waiting";
}

/** A phase as a word for people: `deploying` → `Deploying`. */
export function phaseLabel(phase: string | null): string {
  if (!phase) return "Not looked at yet";
  return phase.charAt(0).toUpperCase() + phase.slice(1);
}

/** What a contract waits for, in words that follow "Waiting for", or `undefined` when it waits
 * for nothing. The controller's own words lose their leading "waiting for" and their times
 * read as countdowns from `nowMs` (see `withCountdowns`). */
export function waitingFor(contract: Contract, nowMs = Date.now()): string | undefined {
  if (contract.phase === null) return "the controller to look at it";
  const told = contract.message ? withCountdowns(contract.message.replace(/^waiting for /i, ""), nowMs) : undefined;
  switch (contract.phase) {
    case "requesting":
      return told ?? "bids from the market, then the provider to start the guest";
    case "releasing":
      return told ?? "the provider to confirm the release";
    case "staged":
      return contract.state === "requested" ? "the request to be sent" : undefined;
    case "deployed":
      return contract.state === "released" ? "the release to be sent" : undefined;
    default:
      return undefined;
  }
}

/** What the owner can do with a contract now. */
export function contractActions(contract: Contract): ("request" | "release" | "releaseAgain" | "stage")[] {
  switch (contract.phase) {
    case "released":
      return [];
    case "failed":
      return contract.state === "released" ? ["releaseAgain"] : ["release"];
    case "releasing":
      return ["releaseAgain"];
    case "deployed":
    case "requesting":
      return contract.state === "released" ? ["releaseAgain"] : ["release"];
    default:
      return contract.state === "requested" ? ["release", "stage"] : ["request"];
  }
}

const SYNC_LABELS: Record<SyncSummary, string> = {
  inSync: "In sync",
  publishing: "Publishing",
  pulling: "Pulled",
  conflict: "Conflict",
  offline: "Waiting to sync",
  invalid: "Record invalid",
  gone: "Record gone",
  ending: "Ending",
  ended: "Ended",
};

/** The sync state as a word for the list. */
export function syncLabel(sync: SyncSummary): string {
  return SYNC_LABELS[sync];
}

const SYNC_STATE_LABELS: Record<SyncState["state"], string> = {
  publishing: "Publishing",
  published: "Published",
  pulled: "Pulled from the repo",
  following: "Following the writer's record",
  pushed: "Edit written for the writer",
  writeFailed: "Write failed, retrying",
  offline: "Repo unreachable",
  conflict: "Conflict",
  changedElsewhere: "Changed elsewhere",
  recordInvalid: "Record invalid",
  recordEnded: "Record ended",
  recordGone: "Record gone",
  reservedKey: "Reserved key",
};

/** The reconciler's last sync outcome, in words for the detail. */
export function syncStateLabel(state: SyncState | null | undefined): string {
  return state ? SYNC_STATE_LABELS[state.state] : "—";
}

/** What a record changed elsewhere in fields only creation sets changed, a line each; empty for
 * any other sync state. */
export function genesisLines(state: SyncState | null | undefined): string[] {
  if (state?.state !== "changedElsewhere") return [];
  return state.changes.map(
    (change) => `${change.field} of contract ${change.contract}: ${change.ours} here, ${change.theirs} in the record`,
  );
}

/** Whether the sync state needs the owner (a conflict, an invalid or gone record). */
export function syncNeedsOwner(sync: SyncSummary): boolean {
  return sync === "conflict" || sync === "invalid" || sync === "gone";
}

/** `2 deployed · 1 requesting`, or `No contracts`. */
export function contractSummary(row: Row): string {
  if (row.contracts.length === 0) return "No contracts";
  return row.contracts.map((group) => `${group.count} ${group.phase}`).join(" · ");
}

/** What the list shows: a search over name and description, and filters by kind and phase. */
export interface ListFilter {
  search: string;
  kind: "all" | "Infra" | "EphemeralInfra";
  phase: "all" | string;
}

/** The phase filter's choice that keeps the deployments with a drifted contract. */
export const DRIFTING = "drifting";

export const NO_FILTER: ListFilter = { search: "", kind: "all", phase: "all" };

/** The rows the filter keeps, in their order. */
export function filterRows<R extends Row>(rows: readonly R[], filter: ListFilter): R[] {
  const needle = filter.search.trim().toLowerCase();
  return rows.filter(
    (row) =>
      (filter.kind === "all" || row.kind === filter.kind) &&
      (filter.phase === "all" || row.phase === filter.phase || (filter.phase === DRIFTING && row.drifting > 0)) &&
      (needle === "" ||
        row.name.toLowerCase().includes(needle) ||
        (row.description ?? "").toLowerCase().includes(needle)),
  );
}

/** A change of one deployment as the shell sends it (`row` null: it left the store). */
export interface Change<R extends Row> {
  kind: string;
  name: string;
  row: R | null;
}

function sameDeployment(a: { kind: string; name: string }, b: { kind: string; name: string }): boolean {
  return a.kind === b.kind && a.name === b.name;
}

function byName(a: Row, b: Row): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0;
}

/** The list after `change`: the row replaced, added in name order, or removed. */
export function applyChange<R extends Row>(rows: readonly R[], change: Change<R>): readonly R[] {
  const index = rows.findIndex((row) => sameDeployment(row, change));
  if (change.row === null) {
    return index < 0 ? rows : [...rows.slice(0, index), ...rows.slice(index + 1)];
  }
  if (index >= 0) {
    if (olderThan(change.row, rows[index]!)) return rows;
    const next = [...rows];
    next[index] = change.row;
    return next;
  }
  const next = [...rows];
  next.splice(insertionPoint(rows, change.row), 0, change.row);
  return next;
}

/** Whether `row` is an older state of the same object than `shown` (it arrived late). */
export function olderThan(row: Row, shown: Row): boolean {
  return row.uid === shown.uid && row.version < shown.version;
}

/** The list as loaded, with the changes that arrived while it loaded applied on top: the list
 * may have been read before or after each of them, and the versions tell which is newer. */
export function settleLoad<R extends Row>(loaded: readonly R[], arrived: readonly Change<R>[]): readonly R[] {
  return arrived.reduce((rows, change) => applyChange(rows, change), loaded);
}

/** Where `row` goes in `rows` (sorted by name, then kind): a binary search, so a new row costs
 * one copy of the list and no sort. */
function insertionPoint(rows: readonly Row[], row: Row): number {
  let low = 0;
  let high = rows.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (byName(rows[middle]!, row) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** A release shown before the shell confirms it, and how to undo it if refused. */
export interface PendingRelease<C extends Contract> {
  deployment: string;
  contract: string;
  previous: C;
}

/** The contracts with `name` shown as releasing at once (optimistic), and what undoes it. */
export function releaseOptimistically<C extends Contract>(
  deployment: string,
  contracts: readonly C[],
  name: string,
  now: string,
): { contracts: C[]; pending: PendingRelease<C> | undefined } {
  const previous = contracts.find((contract) => contract.name === name);
  if (!previous) return { contracts: [...contracts], pending: undefined };
  const releasing: C = { ...previous, state: "released", releaseRequestedAt: now, phase: "releasing" };
  return {
    contracts: contracts.map((contract) => (contract.name === name ? releasing : contract)),
    pending: { deployment, contract: name, previous },
  };
}

/** The contracts with a refused release put back as they were. */
export function rollBack<C extends Contract>(contracts: readonly C[], pending: PendingRelease<C>): C[] {
  return contracts.map((contract) => (contract.name === pending.contract ? pending.previous : contract));
}

/** What the release confirmation says will happen. */
export function releaseConfirmation(deployment: string, contract: Contract, writtenHere: boolean): string {
  const guest = contract.winner ? ` rented from ${contract.winner}` : "";
  const who = writtenHere
    ? "This device releases it."
    : "Another device writes this deployment: the release is written to the record, and that device releases it.";
  return `Release contract “${contract.name}” of ${deployment}? The guest${guest} is torn down and cannot be brought back. ${who}`;
}

/** `in 4 min 05 s`, `in 2 h 10 min`, or `expired`, from now to `expiresAt`. */
export function countdown(expiresAt: string, nowMs: number): string {
  const left = Math.floor((Date.parse(expiresAt) - nowMs) / 1000);
  if (Number.isNaN(left)) return "";
  if (left <= 0) return "expired";
  const hours = Math.floor(left / 3600);
  const minutes = Math.floor((left % 3600) / 60);
  const seconds = left % 60;
  if (hours > 0) return `in ${hours} h ${String(minutes).padStart(2, "0")} min`;
  return `in ${minutes} min ${String(seconds).padStart(2, "0")} s`;
}

/** How many ms from `nowMs` until `countdown(expiresAt, …)` reads otherwise: the next second
 * while under an hour is left, the next minute before that; `undefined` once it says `expired`
 * (or cannot read `expiresAt`), since then it never changes again. */
export function countdownChangesIn(expiresAt: string, nowMs: number): number | undefined {
  const leftMs = Date.parse(expiresAt) - nowMs;
  const left = Math.floor(leftMs / 1000);
  if (Number.isNaN(left) || left <= 0) return undefined;
  const step = left >= 3600 ? 60 : 1;
  return leftMs - Math.floor(left / step) * step * 1000 + 1;
}

/** The soonest any of the countdowns to `expiries` reads otherwise (`countdownChangesIn`). */
export function soonestCountdownChange(expiries: readonly string[], nowMs: number): number | undefined {
  return soonest(expiries.map((at) => countdownChangesIn(at, nowMs)));
}

/** Every time written in `value` (a view as the app sent it: its fields, and the times inside
 * its texts, such as a contract's "next try at …"), in RFC 3339 as written. */
export function timesIn(value: unknown): string[] {
  if (typeof value === "string") return [...value.matchAll(TIME_IN_TEXT)].map((found) => found[0].replace(/^at /, ""));
  if (Array.isArray(value)) return value.flatMap(timesIn);
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(timesIn);
  return [];
}

/** How many ms from `nowMs` until some text the window writes of one of `times` may read
 * otherwise, whichever way it is written ("in 4 min 05 s", "3 min ago", "2 h ago"): a time
 * ahead when its countdown does (`countdownChangesIn`); a time gone by each second within the
 * hour, at its next whole minute beyond (the finest step any text of it shows then);
 * `undefined` with no time at all, since then no text moves. */
export function soonestTimeTextChange(times: readonly string[], nowMs: number): number | undefined {
  return soonest(
    times.map((at) => {
      const gapMs = Date.parse(at) - nowMs;
      if (Number.isNaN(gapMs)) return undefined;
      if (gapMs > 0) return countdownChangesIn(at, nowMs) ?? gapMs + 1;
      const elapsedMs = -gapMs;
      return elapsedMs < 3_600_000 ? 1000 : 60_000 - (elapsedMs % 60_000) + 1;
    }),
  );
}

/** The least of `waits`, leaving out the `undefined` ones; `undefined` when none is left. */
function soonest(waits: readonly (number | undefined)[]): number | undefined {
  const known = waits.filter((ms) => ms !== undefined);
  return known.length > 0 ? Math.min(...known) : undefined;
}

/** An RFC 3339 time in the controller's words, with the "at" before it if any. */
const TIME_IN_TEXT = /(?:\bat )?\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})/g;

/** `text` with each time in it as people read one: `closes at 2026-…Z` → `closes in 1 min 05 s`,
 * a time gone by as `3 min 10 s ago`. */
export function withCountdowns(text: string, nowMs: number): string {
  return text.replace(TIME_IN_TEXT, (found) => {
    const at = found.replace(/^at /, "");
    const ms = Date.parse(at);
    if (Number.isNaN(ms)) return found;
    if (ms > nowMs) return countdown(at, nowMs);
    const mirrored = new Date(2 * nowMs - ms + 999).toISOString();
    return `${countdown(mirrored, nowMs).replace(/^in /, "")} ago`;
  });
}

/** A new deployment's declaration as the editor starts it. */
export function newDeclaration(kind: "Infra" | "EphemeralInfra"): string {
  const spec: Record<string, unknown> = {
    description: "",
    contracts: [{ name: "web", state: "staged" }],
  };
  if (kind === "EphemeralInfra") {
    spec.ttlSeconds = 3600;
    spec.endWhen = "complete";
  }
  return JSON.stringify({ kind, metadata: { name: "" }, spec }, null, 2);
}

/** The fields the form edits, read from the declaration's JSON (or `undefined` if unreadable). */
export interface FormFields {
  kind: string;
  name: string;
  description: string;
  contracts: string[];
}

export function readForm(json: string): FormFields | undefined {
  try {
    const value = JSON.parse(json);
    return {
      kind: String(value.kind ?? ""),
      name: String(value.metadata?.name ?? ""),
      description: String(value.spec?.description ?? ""),
      contracts: Array.isArray(value.spec?.contracts)
        ? value.spec.contracts.map((contract: { name?: unknown }) => String(contract?.name ?? ""))
        : [],
    };
  } catch {
    return undefined;
  }
}

/**
 * The declaration with the form's fields written in, everything else kept; a new contract
 * name becomes a staged contract, a removed one goes.
 */
export function writeForm(json: string, fields: Omit<FormFields, "kind">): string {
  const value = JSON.parse(json);
  value.metadata = { ...(value.metadata ?? {}), name: fields.name };
  value.spec = { ...(value.spec ?? {}) };
  if (fields.description === "") delete value.spec.description;
  else value.spec.description = fields.description;
  const existing: { name: string }[] = Array.isArray(value.spec.contracts) ? value.spec.contracts : [];
  value.spec.contracts = fields.contracts
    .filter((name) => name.trim() !== "")
    .map((name) => existing.find((contract) => contract.name === name) ?? { name, state: "staged" });
  return JSON.stringify(value, null, 2);
}

/** A problem of a refused declaration, with a place for people: `/spec/contracts/0/name`. */
export interface Problem {
  path: string;
  message: string;
  fix: string;
}

/** Where a problem is, for people: by the editor's field label (`Name`, `Contracts › contract 2`),
 * else by its JSON path (`metadata › labels › a/b`), or `the declaration`. */
export function problemPlace(problem: Problem): string {
  if (problem.path === "") return "the declaration";
  const parts = problem.path
    .split("/")
    .slice(1)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
  const [top, field, index, ...rest] = parts;
  const label = top === "metadata" || top === "spec" ? FIELD_LABELS[field ?? ""] : undefined;
  if (!label) return parts.join(" › ");
  if (field !== "contracts" || index === undefined) return [label, ...parts.slice(2)].join(" › ");
  const position = Number(index);
  const contract = Number.isInteger(position) ? `contract ${position + 1}` : index;
  return [label, contract, ...rest].join(" › ");
}

/** The editor's labels of the declaration's fields, by their key under `metadata` or `spec`. */
const FIELD_LABELS: Readonly<Record<string, string>> = {
  name: "Name",
  description: "Description",
  contracts: "Contracts",
};
