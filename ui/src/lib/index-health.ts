// The account's index at `self` as the Deployments section shows it: the count in the header
// ("241 / 256 live") and, on each deployment the full index has no room for, what it waits for.
// The counts and the waiting list come from the controller's index writer (`IndexHealth`).

import type { IndexHealth } from "../ipc";

/** What identifies a row's record: its kind's record URI, once bound. */
export interface IndexedRow {
  recordUri: string | null;
}

/** "241 / 256 live", or null before the index was first read. */
export function liveCount(health: IndexHealth | null): string | null {
  if (health?.live == null) return null;
  return `${health.live} / ${health.maxLive} live`;
}

/** What the row waits for when the full index has no room for its record, else null. */
export function roomWait(row: IndexedRow, health: IndexHealth | null): string | null {
  // A waiting record is named `collection/rkey`, the whole tail of its `at://did/…` URI.
  const uri = row.recordUri;
  if (!health || !uri || !health.waitingForRoom.some((record) => uri.endsWith(`/${record}`))) return null;
  return `waiting: your index is full (${health.live ?? health.maxLive} live); end or release one`;
}
