// The one module through which the window talks to Rust. Everything here is typed by the
// generated `bindings.ts` (from the Rust commands; never edit it by hand); the rest of the UI
// imports from this module only, never from `@tauri-apps/api` or the bindings directly.

import {
  commands,
  events,
  type AccountDto as Account,
  type ActivityEvent_Serialize as ActivityEvent,
  type AppInfo,
  type Applied_Serialize as Applied,
  type BidView_Serialize as BidView,
  type ClusterRow_Serialize as ClusterRow,
  type ClustersView_Serialize as ClustersView,
  type JobView,
  type SavedKubeconfig_Serialize as SavedKubeconfig,
  type KubeconfigView_Serialize as KubeconfigView,
  type MarketKeyView_Serialize as MarketKeyView,
  type ChangeAsked,
  type NodeInfraView_Serialize as NodeInfraView,
  type CommandError,
  type ErrorCode,
  type ContractIntent,
  type ContractView_Serialize as ContractView,
  type DemoAccount,
  type DeploymentChange_Serialize as DeploymentChange,
  type DeploymentDetail_Serialize as DeploymentDetail,
  type DeploymentRow_Serialize as DeploymentRow,
  type DeploymentView_Serialize as DeploymentView,
  type GuestEventView_Serialize as GuestEventView,
  type IndexHealth_Serialize as IndexHealth,
  type Keep,
  type Kind,
  type LiveStatus_Serialize as LiveStatus,
  type PhaseChangeView_Serialize as PhaseChangeView,
  type ProblemDto as Problem,
  type SecretView_Serialize as SecretView,
  type GuestSecret_Serialize as GuestSecret,
  type RecordView_Serialize as RecordView,
  type Session,
  type SyncState,
  type SyncSummary,
  type SyncView_Serialize as SyncView,
  type TimelineEntry_Serialize as TimelineEntry,
  type UpdateView_Serialize as UpdateView,
} from "./bindings";
import { isPermissionGranted, requestPermission, sendNotification } from "@tauri-apps/plugin-notification";

export type {
  Account,
  ActivityEvent,
  AppInfo,
  Applied,
  BidView,
  ClusterRow,
  ClustersView,
  JobView,
  SavedKubeconfig,
  KubeconfigView,
  MarketKeyView,
  ChangeAsked,
  NodeInfraView,
  CommandError,
  ErrorCode,
  ContractIntent,
  ContractView,
  DemoAccount,
  DeploymentChange,
  DeploymentDetail,
  DeploymentRow,
  DeploymentView,
  GuestEventView,
  IndexHealth,
  Keep,
  Kind,
  LiveStatus,
  PhaseChangeView,
  Problem,
  SecretView,
  GuestSecret,
  RecordView,
  Session,
  SyncState,
  SyncSummary,
  SyncView,
  TimelineEntry,
  UpdateView,
};

/** A failed command as the UI handles it: branch on `code`, show `message` (and `problems`). */
export class IpcError extends Error {
  readonly code: ErrorCode;
  readonly problems: Problem[];
  constructor(error: CommandError) {
    super(error.message);
    this.code = error.code;
    this.problems = error.problems ?? [];
  }
}

/** What went wrong, in words: the message, then each problem at its place with its fix. */
export function errorText(error: unknown): string {
  if (error instanceof IpcError && error.problems.length > 0) {
    const problems = error.problems.map((problem) => `${problem.path || "/"}: ${problem.message} ${problem.fix}`);
    return `${error.message}: ${problems.join("; ")}`;
  }
  return error instanceof Error ? error.message : String(error);
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

/** Tells the shell the window's first screen has come to life (hydrated, taking clicks). */
export async function uiInteractive(): Promise<void> {
  await commands.uiInteractive();
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

/** This device's market key and how the owner's live DID document stands with it (read now). */
export async function marketKey(): Promise<MarketKeyView> {
  return unwrap(await commands.marketKey());
}

/** Asks the owner's server, through the browser, to let the app change the DID document. */
export async function grantIdentity(): Promise<MarketKeyView> {
  return unwrap(await commands.grantIdentity());
}

/** Has the owner's PDS email them the code the change needs. */
export async function requestMarketKeyCode(): Promise<void> {
  unwrap(await commands.requestMarketKeyCode());
}

/** Publishes this device's key (or removes the market key) with the emailed code. */
export async function changeMarketKey(code: string, change: ChangeAsked): Promise<MarketKeyView> {
  return unwrap(await commands.changeMarketKey(code, change));
}

/** Every deployment of the signed-in account. */
export async function deployments(): Promise<DeploymentRow[]> {
  return unwrap(await commands.deployments());
}

/** How the index at `self` stands: its count, the deployments waiting for room in a full one,
 * and why it is not written when another client's index is there. */
export async function indexHealth(): Promise<IndexHealth> {
  return unwrap(await commands.indexHealth());
}

/** Calls `handle` when the authorization server ended the session (read the session again). */
export async function onSessionEnded(handle: () => void): Promise<() => void> {
  return events.sessionEnded.listen(() => handle());
}

/** Calls `handle` when the index at `self` changes how it stands (its count, what waits, why it
 * is not written). */
export async function onIndexHealthChanged(handle: (health: IndexHealth) => void): Promise<() => void> {
  return events.indexHealthChanged.listen((event) => handle(event.payload));
}

/** Whether edits made on the owner's other devices arrive live or by polling, and why. */
export async function liveStatus(): Promise<LiveStatus> {
  return unwrap(await commands.liveStatus());
}

/** The URL Settings keeps for following the owner's repo instead of their PDS (null: their PDS). */
export async function liveSource(): Promise<string | null> {
  return unwrap(await commands.liveSource());
}

/** Follows the owner's repo at `url` from now on (empty: their PDS); refused, naming every
 * problem, when the network's policy does not allow it. Resolves to what is kept now. */
export async function setLiveSource(url: string): Promise<string | null> {
  return unwrap(await commands.setLiveSource(url));
}

/** Calls `handle` when edits start arriving live or by polling; resolves to the function that
 * stops it. */
export async function onLiveStatusChanged(handle: (status: LiveStatus) => void): Promise<() => void> {
  return events.liveStatusChanged.listen((event) => handle(event.payload));
}

/** One deployment with its contracts, record and controller state, or null when gone. */
export async function deployment(kind: Kind, name: string): Promise<DeploymentView | null> {
  return unwrap(await commands.deployment(kind, name));
}

/** The deployment's record as the repo holds it now, beside this device's declaration. */
export async function deploymentRecord(kind: Kind, name: string): Promise<RecordView | null> {
  return unwrap(await commands.deploymentRecord(kind, name));
}

/** Creates or edits a deployment from its declaration (JSON text); refused with every problem. */
export async function declareDeployment(declaration: string): Promise<DeploymentRow> {
  return unwrap(await commands.declareDeployment(declaration));
}

/** Stages, requests or releases one contract. */
export async function setContract(kind: Kind, name: string, contract: string, intent: ContractIntent): Promise<void> {
  unwrap(await commands.setContract(kind, name, contract, intent));
}

/** Sets a deployment's secret (a new one, or a rotation); the value goes to the keychain only. */
export async function setSecret(kind: Kind, name: string, secret: string, value: string, contracts: string[]): Promise<void> {
  unwrap(await commands.setSecret(kind, name, secret, value, contracts));
}

/** Takes a secret off a deployment and forgets its value. */
export async function removeSecret(kind: Kind, name: string, secret: string): Promise<void> {
  unwrap(await commands.removeSecret(kind, name, secret));
}

/** A secret's value from the keychain: only on the owner's explicit ask. */
export async function revealSecret(kind: Kind, name: string, secret: string): Promise<string> {
  return unwrap(await commands.revealSecret(kind, name, secret));
}

/** Ends a deployment; its record stays, ended. */
export async function endDeployment(kind: Kind, name: string): Promise<void> {
  unwrap(await commands.endDeployment(kind, name));
}

/** Opens the receipt of a deployment's contract in the owner's browser (the shell opens only
 * the link it made for that receipt, and only at `host`, the host the owner confirmed). */
export async function openReceipt(kind: Kind, name: string, contract: string, host: string): Promise<void> {
  unwrap(await commands.openReceipt(kind, name, contract, host));
}

/** Answers a conflict: keep this device's declaration, or take the record's. */
export async function resolveConflict(kind: Kind, name: string, keep: Keep): Promise<void> {
  unwrap(await commands.resolveConflict(kind, name, keep));
}

/** Ends a deployment whose record was changed elsewhere in fields only creation sets, for a
 * successor declared as the record is; resolves to the successor's row. */
export async function succeedDeployment(kind: Kind, name: string): Promise<DeploymentRow> {
  return unwrap(await commands.succeedDeployment(kind, name));
}

/** Calls `handle` with every deployment change; resolves to the function that stops it. */
export async function onDeploymentChanged(handle: (change: DeploymentChange) => void): Promise<() => void> {
  return events.deploymentChanged.listen((event) => handle(event.payload));
}

/** Calls `handle` when deployment changes were lost on the way to the window (it must list
 * again); resolves to the function that stops it. */
export async function onDeploymentsStale(handle: () => void): Promise<() => void> {
  return events.deploymentsStale.listen(() => handle());
}

/** Calls `handle` when a bidder or winner shown by its DID has its handle now (an open
 * deployment reads again); resolves to the function that stops it. */
export async function onIdentityNamed(handle: () => void): Promise<() => void> {
  return events.identityNamed.listen(() => handle());
}

/** Calls `handle` with every controller step; resolves to the function that stops it. */
export async function onControllerActivity(handle: (step: ActivityEvent) => void): Promise<() => void> {
  return events.controllerActivity.listen((event) => handle(event.payload));
}

/** Calls `handle` when the account's controller starts (`true`) or stops (`false`). */
export async function onControllerRunning(handle: (running: boolean) => void): Promise<() => void> {
  return events.controllerRunning.listen((event) => handle(event.payload));
}

/** The owner's clusters as the gateway's feed last described them. */
export async function clusters(): Promise<ClustersView> {
  return unwrap(await commands.clusters());
}

/** Creates a cluster; resolves to its phase. */
export async function createCluster(name: string): Promise<string> {
  return unwrap(await commands.createCluster(name));
}

/** Starts (`up`) or stops a cluster's control plane; resolves to its phase. */
export async function controlPlane(name: string, up: boolean): Promise<string> {
  return unwrap(await commands.controlPlane(name, up));
}

/** Deletes a cluster (it drains, then goes); resolves to its phase. */
export async function deleteCluster(name: string): Promise<string> {
  return unwrap(await commands.deleteCluster(name));
}

/** Revokes every grant of an identity on a cluster. */
export async function revokeIdentity(name: string, did: string): Promise<void> {
  unwrap(await commands.revokeIdentity(name, did));
}

/** Saves a kubeconfig (mode 0600) for `ttlSeconds` (null: the default) or without expiry. */
export async function saveKubeconfig(
  name: string,
  ttlSeconds: number | null,
  noExpiry: boolean,
  path: string,
): Promise<SavedKubeconfig> {
  return unwrap(await commands.saveKubeconfig(name, ttlSeconds, noExpiry, path));
}

/** The record the gateway keeps for a cluster's nodes: each node's contract, and drift. */
export async function nodeInfra(name: string): Promise<NodeInfraView | null> {
  return unwrap(await commands.nodeInfra(name));
}

/** The kubeconfigs saved here (kept across restarts), each with what no longer works. */
export async function kubeconfigs(): Promise<KubeconfigView[]> {
  return unwrap(await commands.kubeconfigs());
}

/** Removes a kubeconfig file this installation saved, and forgets it. */
export async function forgetKubeconfig(path: string): Promise<void> {
  unwrap(await commands.forgetKubeconfig(path));
}

/** Applies one object (YAML or JSON) server-side, or dry-runs it. */
export async function applyManifest(cluster: string, manifest: string, dryRun: boolean, force: boolean): Promise<Applied> {
  return unwrap(await commands.applyManifest(cluster, manifest, dryRun, force));
}

/** A Job now, with its last log lines. */
export async function job(cluster: string, namespace: string, name: string): Promise<JobView> {
  return unwrap(await commands.job(cluster, namespace, name));
}

/** Calls `handle` whenever the owner's clusters (or the connection to the gateway) change. */
export async function onClustersChanged(handle: (view: ClustersView) => void): Promise<() => void> {
  return events.clustersChanged.listen((event) => handle(event.payload));
}

/** What the window shows of updates now. */
export async function updateStatus(): Promise<UpdateView> {
  return commands.updateStatus();
}

/** Asks for a newer release now; resolves to what is then shown. */
export async function checkForUpdate(): Promise<UpdateView> {
  return commands.checkForUpdate();
}

/** Installs the downloaded release and restarts into it. */
export async function installUpdate(): Promise<void> {
  unwrap(await commands.installUpdate());
}

/** Calls `handle` with what the window shows of updates whenever it changes. */
export async function onUpdateChanged(handle: (view: UpdateView) => void): Promise<() => void> {
  return events.updateChanged.listen((event) => handle(event.payload));
}

let desktopAllowed: Promise<boolean> | undefined;

/** Shows a desktop notification (the notification plugin); the system's permission is asked
 * once, where a system asks (macOS). Resolves to whether it was sent; never rejects. */
export async function notifyDesktop(notification: { title: string; body: string }): Promise<boolean> {
  desktopAllowed ??= (async () => (await isPermissionGranted()) || (await requestPermission()) === "granted")();
  try {
    if (!(await desktopAllowed)) return false;
    sendNotification(notification);
    return true;
  } catch {
    return false;
  }
}

/** Asks the owner where to save a kubeconfig, in the system's own save dialog (opened by Rust:
 * the window has no dialog permission), starting at `suggested` (a path in `~/.kube/`).
 * Resolves to the chosen path, which `saveKubeconfig` then accepts, or `undefined` when the
 * owner cancels. */
export async function chooseKubeconfigPath(suggested: string): Promise<string | undefined> {
  return unwrap(await commands.chooseKubeconfigPath(suggested)) ?? undefined;
}
