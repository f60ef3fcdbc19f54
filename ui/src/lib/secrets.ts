// View logic of a deployment's secrets: where each stands with each contract's guest, in
// words ("sealed to guest key …q8z4, delivered 2 min ago" or what it waits for), the contracts
// field read from what the owner typed, and the confirmation of a removal. Values never pass
// through here. Pure functions, unit tested; SecretsPanel only renders what these return.

import { relativeTime } from "./contracts";

/** A secret as the detail carries it (the generated `SecretView`). */
export interface Secret {
  name: string;
  version: number;
  contracts: string[];
  guests: Guest[];
}

/** Where a secret stands with one contract's guest (the generated `GuestSecret`). */
export interface Guest {
  contract: string;
  guestKey: string | null;
  deliveredVersion: number | null;
  deliveredAt: string | null;
  waiting: string | null;
}

/** One guest line of a secret. */
export interface GuestLine {
  contract: string;
  text: string;
  tone: "steady" | "waiting";
}

/** Each receiving contract's guest, in words. */
export function guestLines(secret: Secret, nowMs: number): GuestLine[] {
  return secret.guests.map((guest) => {
    if (guest.waiting === null && guest.guestKey && guest.deliveredAt) {
      return {
        contract: guest.contract,
        text: `sealed to guest key ${guest.guestKey}, delivered ${relativeTime(guest.deliveredAt, nowMs)}`,
        tone: "steady",
      };
    }
    const text = guest.waiting ?? "waiting";
    const older = guest.deliveredVersion !== null ? ` (version ${guest.deliveredVersion} delivered before)` : "";
    return { contract: guest.contract, text: `${text}${older}`, tone: "waiting" };
  });
}

/** Who receives the secret, in words. */
export function receivers(secret: Secret): string {
  return secret.contracts.length === 0 ? "every contract" : secret.contracts.join(", ");
}

/** The contract names typed into the field: comma- or space-separated, blanks dropped. */
export function parseContracts(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
}

/** What removing a secret does, for the confirmation. */
export function removeConfirmation(deployment: string, secret: string): string {
  return `Remove the secret “${secret}” from ${deployment}? Its value is forgotten from your keychain and no guest gets it again; guests that opened it keep what they have.`;
}
