// The shortcuts of an open deployment: its primary actions by keyboard, shown in their
// buttons' tooltips and in the command palette. Ctrl (Cmd on macOS) with R requests a contract,
// with Shift+R releases one (through its confirmation, as the button does), with E edits the
// deployment and with I inspects its record. A contract action goes to the contract whose card
// holds the focus when it offers that action, else to the first contract that does. Pure
// functions, unit tested.

import { contractActions, type Contract } from "./deployments";

export type DeploymentAction = "request" | "release" | "edit" | "inspect";

interface Chord {
  key: string;
  shift: boolean;
}

export const DEPLOYMENT_SHORTCUTS: Readonly<Record<DeploymentAction, Chord>> = {
  request: { key: "r", shift: false },
  release: { key: "r", shift: true },
  edit: { key: "e", shift: false },
  inspect: { key: "i", shift: false },
};

/** The key facts of a press (a subset of `KeyboardEvent`). */
export interface Press {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  shiftKey: boolean;
}

/** The deployment action `press` asks for, or `undefined`. */
export function deploymentShortcut(press: Press, metaIsCommand: boolean): DeploymentAction | undefined {
  const command = metaIsCommand ? press.metaKey && !press.ctrlKey : press.ctrlKey && !press.metaKey;
  if (!command || press.altKey) return undefined;
  const key = press.key.toLowerCase();
  const found = Object.entries(DEPLOYMENT_SHORTCUTS).find(
    ([, chord]) => chord.key === key && chord.shift === press.shiftKey,
  );
  return found?.[0] as DeploymentAction | undefined;
}

/** How the shortcut of `action` reads: `Ctrl+Shift+R`, or `⌘⇧R` on macOS. */
export function shortcutText(action: DeploymentAction, metaIsCommand: boolean): string {
  const chord = DEPLOYMENT_SHORTCUTS[action];
  const key = chord.key.toUpperCase();
  if (metaIsCommand) return `⌘${chord.shift ? "⇧" : ""}${key}`;
  return `Ctrl+${chord.shift ? "Shift+" : ""}${key}`;
}

/** The `aria-keyshortcuts` value of `action` (`Control+Shift+R`). */
export function ariaShortcut(action: DeploymentAction, metaIsCommand: boolean): string {
  const chord = DEPLOYMENT_SHORTCUTS[action];
  return `${metaIsCommand ? "Meta" : "Control"}+${chord.shift ? "Shift+" : ""}${chord.key.toUpperCase()}`;
}

/** The contract a request or release by shortcut acts on: the focused one (`focused`, its
 * name) when it offers the action, else the first that does; `undefined` when none does. */
export function shortcutContract<C extends Contract>(
  contracts: readonly C[],
  action: "request" | "release",
  focused: string | undefined,
): C | undefined {
  const offers = (contract: C) => contractActions(contract).includes(action);
  return contracts.find((contract) => contract.name === focused && offers(contract)) ?? contracts.find(offers);
}
