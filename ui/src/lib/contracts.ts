// View logic of a contract's run on the market: the bids as a table (who, cost, when, the
// winner marked, how far each record was checked), the guest's events in words, phase changes and the deployment's timeline with
// relative and absolute times. Pure functions over plain data, unit tested; ContractCard and
// DeploymentDetail only render what these return.

import { phaseLabel, phaseTone, type PhaseTone } from "./deployments";

/** A bid as the detail carries it (the generated `BidView`). */
export interface Bid {
  bidder: string;
  bidderHandle: string | null;
  uri: string;
  receivedAt: string;
  cost: string | null;
  won: boolean;
  refused: string | null;
  checked?: Check | null;
}

/** What was verified of a peer's record (the generated `CheckView`). */
export interface Check {
  proven: boolean;
  summary: string;
  linked?: Linked[];
}

/** A record a peer's record links to (the generated `LinkedView`). */
export interface Linked {
  link: string;
  uri: string;
  cid: string;
  collection: string;
  known: boolean;
  proven: boolean | null;
  value: string;
}

/** One linked record as the card lists it. */
export interface LinkedRow {
  key: string;
  link: string;
  collection: string;
  /** `null` for a collection this app has a lexicon for; else says it has none. */
  unknown: string | null;
  proof: "proven" | "unproven" | "not read";
  uri: string;
  cid: string;
  /** The value pretty-printed when it is whole JSON, else as kept (cut, or why not read). */
  text: string;
}

/** The linked records of a check, each with its proof and its value readable. */
export function linkedRows(check: Check | null | undefined): LinkedRow[] {
  return (check?.linked ?? []).map((linked) => ({
    key: `${linked.link} ${linked.uri}`,
    link: linked.link,
    collection: linked.collection,
    unknown: linked.known ? null : "no lexicon here: shown as received",
    proof: linked.proven === null ? "not read" : linked.proven ? "proven" : "unproven",
    uri: linked.uri,
    cid: linked.cid,
    text: prettyJson(linked.value),
  }));
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** How a record was checked, as a badge: its label, tone and the whole check on hover. */
export interface ProofBadge {
  label: "proven" | "unproven";
  tone: "steady" | "waiting";
  title: string;
}

/** A check as a badge: `proven`, or `unproven` in the waiting tone (its PDS served no proof, so
 * its content id is the PDS's word); `null` for a record not fetched. */
export function proofBadge(check: Check | null | undefined): ProofBadge | null {
  if (!check) return null;
  return check.proven
    ? { label: "proven", tone: "steady", title: check.summary }
    : { label: "unproven", tone: "waiting", title: check.summary };
}

/** A guest event as the detail carries it (the generated `GuestEventView`). */
export interface GuestEvent {
  kind: string;
  at: string;
  detail: string | null;
  uri: string;
}

/** A phase change (the generated `PhaseChangeView`), or a timeline entry with its contract. */
export interface PhaseChange {
  phase: string;
  at: string;
  message: string | null;
  contract?: string;
}

/** One row of the bids table. */
export interface BidRow {
  key: string;
  who: string;
  did: string;
  /** The bidder's verified handle, when known. */
  handle: string | null;
  cost: string;
  received: string;
  won: boolean;
  /** Why the bid does not count (its author, signature, RFP or terms did not check out). */
  refused: string | null;
  /** How far its record was checked, when it was fetched. */
  proof: ProofBadge | null;
}

/** One row of a history or of the timeline. */
export interface ChangeRow {
  key: string;
  contract: string | undefined;
  phase: string;
  tone: PhaseTone;
  relative: string;
  absolute: string;
  at: string;
  message: string | null;
}

/** A cost for people: `0.25`, `free` for zero, `no price` when the bid names none. */
export function costLabel(cost: string | null): string {
  if (cost === null) return "no price";
  return Number(cost) === 0 ? "free" : cost;
}

/** The host a receipt's link opens (the winner's PDS, its choice, not the app's), shown to the
 * owner before the browser goes there; `undefined` without a readable link. */
export function receiptHost(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).hostname || undefined;
  } catch {
    return undefined;
  }
}

/** Who someone is: the verified handle as `@handle`, else the DID itself. */
export function whoLabel(did: string, handle: string | null): string {
  return handle ? `@${handle}` : did;
}

/** The bids in the order they arrived, the winner marked. */
export function bidRows(bids: readonly Bid[]): BidRow[] {
  return [...bids]
    .sort((a, b) => Date.parse(a.receivedAt) - Date.parse(b.receivedAt))
    .map((bid) => ({
      key: bid.uri,
      who: whoLabel(bid.bidder, bid.bidderHandle),
      did: bid.bidder,
      handle: bid.bidderHandle,
      cost: costLabel(bid.cost),
      received: absoluteTime(bid.receivedAt),
      won: bid.won,
      refused: bid.refused,
      proof: proofBadge(bid.checked),
    }));
}

/** A bidder the RFP went to, and what it did (the generated `AskedView`). */
export interface Asked {
  bidder: string;
  bidderHandle: string | null;
  answer: string;
  cost: string | null;
  reason: string | null;
}

/** One row of the bidders asked: who, and its answer in words. */
export interface AskedRow {
  key: string;
  who: string;
  did: string;
  /** The bidder's verified handle, when known. */
  handle: string | null;
  answer: "bid" | "refused" | "bidRefused" | "noAnswer";
  text: string;
}

/** Every bidder asked, each with its answer: its bid's price, its refusal of our request (or
 * ours of its bid) and why, or nothing (yet, while `open`). */
export function askedRows(asked: readonly Asked[], open: boolean): AskedRow[] {
  return asked.map((row) => {
    const answer = row.answer === "bid" || row.answer === "refused" || row.answer === "bidRefused" ? row.answer : "noAnswer";
    const why = row.reason ?? "no reason given";
    const text =
      answer === "bid"
        ? `bid: ${costLabel(row.cost)}`
        : answer === "refused"
          ? `refused the request: ${why}`
          : answer === "bidRefused"
            ? `bid refused here: ${why}`
            : open
              ? "no answer yet"
              : "no answer";
    return { key: row.bidder, who: whoLabel(row.bidder, row.bidderHandle), did: row.bidder, handle: row.bidderHandle, answer, text };
  });
}

/** A guest event in words: `vm.onNetwork` → `on the network at 10.0.0.7`. */
export function guestEventLabel(event: GuestEvent): string {
  const what =
    event.kind === "vm.started" ? "guest started" : event.kind === "vm.onNetwork" ? "on the network" : event.kind;
  return event.detail ? `${what} at ${event.detail}` : what;
}

/** `2027-01-15 08:00:05 UTC` from an RFC 3339 time (the text itself when it is not one). */
export function absoluteTime(at: string): string {
  const ms = Date.parse(at);
  if (Number.isNaN(ms)) return at;
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** `just now`, `12 s ago`, `5 min ago`, `3 h ago`, `2 d ago` (or `in …` for a future time). */
export function relativeTime(at: string, nowMs: number): string {
  const ms = Date.parse(at);
  if (Number.isNaN(ms)) return "";
  const seconds = Math.round((nowMs - ms) / 1000);
  const span = Math.abs(seconds);
  if (span < 2) return "just now";
  const amount =
    span < 60
      ? `${span} s`
      : span < 3600
        ? `${Math.floor(span / 60)} min`
        : span < 86400
          ? `${Math.floor(span / 3600)} h`
          : `${Math.floor(span / 86400)} d`;
  return seconds >= 0 ? `${amount} ago` : `in ${amount}`;
}

/** Phase changes newest first (equal times keep their given order), with their phase in words
 * and both times. */
export function changeRows(changes: readonly PhaseChange[], nowMs: number): ChangeRow[] {
  return [...changes]
    .map((change, index) => ({ change, index }))
    .sort((a, b) => Date.parse(b.change.at) - Date.parse(a.change.at) || a.index - b.index)
    .map(({ change, index }) => ({
      key: `${change.contract ?? ""}/${index}`,
      contract: change.contract,
      phase: phaseLabel(change.phase),
      tone: phaseTone(change.phase),
      relative: relativeTime(change.at, nowMs),
      absolute: absoluteTime(change.at),
      at: change.at,
      message: change.message,
    }));
}

/** A contract's history (oldest first, as carried) as rows, newest first. */
export function historyRows(history: readonly PhaseChange[], nowMs: number): ChangeRow[] {
  return changeRows([...history].reverse(), nowMs);
}

/** What a contract card leads with after its phase (the winner is shown between `where` and
 * `price`); each `null` when not known. */
export interface ContractLead {
  /** Where its guest runs while it does: `On the network at 192.0.2.1`. */
  where: string | null;
  /** The winning bid's price: `free`, `0.25`, `no price`. */
  price: string | null;
  /** Since when it is in its phase (its last change into it). */
  since: { relative: string; absolute: string; at: string } | null;
}

/** The phases in which a contract's guest runs (where it runs is worth leading with). */
const RUNNING = new Set(["deployed", "releasing"]);

/** A contract's lead: where it runs (its guest's latest address, while it runs), the price it
 * won at, and since when it is in its phase. */
export function contractLead(
  contract: {
    phase: string | null;
    events: readonly GuestEvent[];
    bids: readonly Bid[];
    history: readonly PhaseChange[];
  },
  nowMs: number,
): ContractLead {
  const address = [...contract.events].reverse().find((event) => event.kind === "vm.onNetwork" && event.detail)?.detail;
  const where = address && RUNNING.has(contract.phase ?? "") ? `On the network at ${address}` : null;
  const won = contract.bids.find((bid) => bid.won);
  const entered = [...contract.history].reverse().find((change) => change.phase === contract.phase);
  return {
    where,
    price: won ? costLabel(won.cost) : null,
    since: entered
      ? { relative: relativeTime(entered.at, nowMs), absolute: absoluteTime(entered.at), at: entered.at }
      : null,
  };
}
