// The one module through which the window talks to Rust. Everything here is typed by the
// generated `bindings.ts` (from the Rust commands; never edit it by hand); the rest of the UI
// imports from this module only, never from `@tauri-apps/api` or the bindings directly.

import {
  commands,
  events,
  type AccountDto as Account,
  type ActivityEvent_Serialize as ActivityEvent,
  type AppInfo,
  type CommandError,
  type ContractIntent,
  type ContractView_Serialize as ContractView,
  type DemoAccount,
  type DeploymentChange_Serialize as DeploymentChange,
  type DeploymentDetail_Serialize as DeploymentDetail,
  type DeploymentRow_Serialize as DeploymentRow,
  type DeploymentView_Serialize as DeploymentView,
  type Keep,
  type Kind,
  type ProblemDto as Problem,
  type Session,
  type SyncView_Serialize as SyncView,
} from "./bindings";

export type {
  Account,
  ActivityEvent,
  AppInfo,
  CommandError,
  ContractIntent,
  ContractView,
  DemoAccount,
  DeploymentChange,
  DeploymentDetail,
  DeploymentRow,
  DeploymentView,
  Keep,
  Kind,
  Problem,
  Session,
  SyncView,
};

/** A failed command as the UI handles it: branch on `code`, show `message` (and `problems`). */
export class IpcError extends Error {
  readonly code: string;
  readonly problems: Problem[];
  constructor(error: CommandError) {
    super(error.message);
    this.code = error.code;
    this.problems = error.problems ?? [];
  }
}

type Outcome<T> = { status: "ok"; data: T } | { status: "error"; error: CommandError };

function unwrap<T>(outcome: Outcome<T>): T {
  if (outcome.status === "error") throw new IpcError(outcome.error);
  return outcome.data;
}

/** Facts about this installation (version, network, directories). */
export async function appInfo(): Promise<AppInfo> {
  return unwrap(await commands.appInfo());
}

/** Tells the shell the window has painted for the first time. */
export async function uiReady(): Promise<void> {
  await commands.uiReady();
}

/** The session now; the first call restores the one kept in the keychain. */
export async function session(): Promise<Session> {
  return unwrap(await commands.session());
}

/** Signs in the handle or DID through the browser; resolves once the browser came back. */
export async function signIn(input: string): Promise<Account> {
  return unwrap(await commands.signIn(input));
}

/** Stops a sign-in that waits for the browser. */
export async function cancelSignIn(): Promise<boolean> {
  return commands.cancelSignIn();
}

/** Revokes the session and forgets it. */
export async function signOut(): Promise<void> {
  unwrap(await commands.signOut());
}

/** Every deployment of the signed-in account. */
export async function deployments(): Promise<DeploymentRow[]> {
  return unwrap(await commands.deployments());
}

/** One deployment with its contracts, record and controller state, or null when gone. */
export async function deployment(kind: Kind, name: string): Promise<DeploymentView | null> {
  return unwrap(await commands.deployment(kind, name));
}

/** Creates or edits a deployment from its declaration (JSON text); refused with every problem. */
export async function declareDeployment(declaration: string): Promise<DeploymentRow> {
  return unwrap(await commands.declareDeployment(declaration));
}

/** Stages, requests or releases one contract. */
export async function setContract(kind: Kind, name: string, contract: string, intent: ContractIntent): Promise<void> {
  unwrap(await commands.setContract(kind, name, contract, intent));
}

/** Ends a deployment; its record stays, ended. */
export async function endDeployment(kind: Kind, name: string): Promise<void> {
  unwrap(await commands.endDeployment(kind, name));
}

/** Answers a conflict: keep this device's declaration, or take the record's. */
export async function resolveConflict(kind: Kind, name: string, keep: Keep): Promise<void> {
  unwrap(await commands.resolveConflict(kind, name, keep));
}

/** Calls `handle` with every deployment change; resolves to the function that stops it. */
export async function onDeploymentChanged(handle: (change: DeploymentChange) => void): Promise<() => void> {
  return events.deploymentChanged.listen((event) => handle(event.payload));
}

/** Calls `handle` with every controller step; resolves to the function that stops it. */
export async function onControllerActivity(handle: (step: ActivityEvent) => void): Promise<() => void> {
  return events.controllerActivity.listen((event) => handle(event.payload));
}

/** Calls `handle` when the account's controller starts (`true`) or stops (`false`). */
export async function onControllerRunning(handle: (running: boolean) => void): Promise<() => void> {
  return events.controllerRunning.listen((event) => handle(event.payload));
}
