// Whether edits made on the owner's other devices arrive live or by polling, in words for the
// account area. The mode and the reason come from the controller (`LiveStatus`): `live` when the
// repo's stream is open, `connecting`, or `polling` with why there is no stream; `source` is the
// relay Settings names instead of the owner's PDS, if any.

import type { LiveStatus } from "../ipc";

/** The short word beside "Signed in". */
export function liveLabel(status: LiveStatus | null): string {
  switch (status?.mode) {
    case "live":
      return "live";
    case "connecting":
      return "connecting…";
    case "polling":
      return "polling";
    default:
      return "";
  }
}

/** The sentence in the account menu: what "live" or "polling" means now, and why. */
export function liveSentence(status: LiveStatus | null): string {
  switch (status?.mode) {
    case "live":
      return "Live: edits from your other devices show here within a second.";
    case "connecting":
      return "Connecting to your repo's live stream…";
    case "polling":
      return `Polling every 30 s: ${status.why ?? "no live stream"}.`;
    default:
      return "Not following your repo yet.";
  }
}

/** Which stream the app follows: the owner's PDS, or the relay named in Settings. */
export function liveSourceLine(status: LiveStatus | null): string {
  return status?.source ? `Following ${status.source} (set in Settings)` : "Following your PDS";
}
