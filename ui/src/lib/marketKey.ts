// View logic of the owner's market key: how the live DID document stands with this device's
// key, in words; which step of *Publish your market key* comes first; what a failed step
// means for the owner. Pure functions, unit tested; MarketKeyDialog and Settings render them.

import type { ErrorCode } from "../ipc";

/** How the live document stands (the generated `ListingView`). */
export type Listing =
  | { state: "listed" }
  | { state: "absent" }
  | { state: "other"; listed: string }
  | { state: "unread"; why: string };

/** The market key as the shell answers it (the generated `MarketKeyView`). */
export interface MarketKey {
  did: string;
  key: string;
  short: string;
  throughPds: boolean;
  listing: Listing;
  identityGranted: boolean;
  whyIdentity: string;
  didWebEntry: string | null;
}

/** The listing in one sentence, and whether it is good news. */
export function listingLine(listing: Listing): { text: string; tone: "steady" | "waiting" | "bad" } {
  switch (listing.state) {
    case "listed":
      return { text: "Your live DID document lists this key: strict market peers trust what this app signs for you.", tone: "steady" };
    case "absent":
      return { text: "Your live DID document lists no market key: strict market peers refuse what this app signs for you.", tone: "waiting" };
    case "other":
      return { text: `Your live DID document lists another key (${listing.listed}), not this device's.`, tone: "bad" };
    case "unread":
      return { text: `Your DID document could not be read now: ${listing.why}`, tone: "bad" };
  }
}

/** The first step of the flow: the extra grant (browser), or the emailed code. */
export function firstStep(key: MarketKey): "grant" | "email" | "didWeb" {
  if (!key.throughPds) return "didWeb";
  return key.identityGranted ? "email" : "grant";
}

/** A code the owner typed, trimmed; `null` when nothing was typed. */
export function typedCode(code: string): string | null {
  const trimmed = code.trim();
  return trimmed === "" ? null : trimmed;
}

/** What a failed step means for the owner, by the error's code. */
export function failureAdvice(code: ErrorCode | undefined): string {
  switch (code) {
    case "wrong-code":
      return "That is not the code your server emailed last, or it was used already. Nothing changed. Check the email and type the code again, or ask for a new one.";
    case "expired-code":
      return "The emailed code has expired. Nothing changed. Ask for a new code.";
    case "not-granted":
      return "Your server has not granted the change of your identity document. Continue in the browser first.";
    case "cancelled":
      return "The browser step was cancelled. Nothing changed.";
    default:
      return "Nothing changed. Try again in a moment.";
  }
}
