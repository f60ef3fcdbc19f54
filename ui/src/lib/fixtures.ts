// Test fixtures shared by the view-logic tests (imported by *.test.ts only, never by the app).

import type { Row } from "./deployments";

/** A deployment row named `name`: an Infra written here, staged, in sync, with `overrides`. */
export function row(name: string, overrides: Partial<Row> = {}): Row {
  return {
    kind: "Infra",
    name,
    description: null,
    phase: "staged",
    waiting: false,
    contracts: [],
    drifting: 0,
    sync: "inSync",
    syncMessage: null,
    writtenHere: true,
    writer: null,
    readOnly: false,
    expiresAt: null,
    endedAt: null,
    recordUri: null,
    uid: `uid-${name}`,
    version: 1,
    ...overrides,
  };
}
