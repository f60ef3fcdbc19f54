// The window's one view of the owner's clusters: loaded when the controller starts, then kept
// live by the gateway feed's change events (and read again when a member's handle is known), with the kubeconfigs saved here read again at each
// change, when the section opens and every minute while the window is shown, and checked against the clusters listed
// (drift). The Clusters section and the notices
// read it; nothing else asks for the clusters. The rules (what drift is, what is told) are the
// pure functions of lib/.

import {
  clusters,
  errorText,
  forgetKubeconfig,
  IpcError,
  kubeconfigs,
  onClustersChanged,
  onControllerRunning,
  onIdentityNamed,
  type ClustersView,
  type KubeconfigView,
} from "../ipc";
import { kubeconfigDrift } from "../lib/clusters";
import { tickWhileVisible } from "../lib/ticker";

/** How often the kubeconfigs saved here are checked again while nothing else changes. */
const KEPT_CHECK_MS = 60_000;

/** Where the view stands. */
export type BoardStatus = "loading" | "ready" | "signed-out" | "no-gateway" | "failed";

class ClusterBoard {
  view: ClustersView | undefined = $state.raw();
  status: BoardStatus = $state("loading");
  failure = $state("");
  /** The kubeconfigs saved here. */
  kept: readonly KubeconfigView[] = $state.raw([]);
  /** Whether they were read at least once since the start. */
  keptRead = $state(false);
  /** The kept kubeconfigs checked against the clusters shown, live or as last seen: a
   * kubeconfig's own trouble (expired, its file gone) needs no gateway. (Those of clusters not
   * shown are orphans, which the section lists only while the gateway is live: a cluster
   * missing from a cached list is not gone.) */
  readonly drift = $derived(
    kubeconfigDrift(
      this.kept,
      (this.view?.clusters ?? []).map((row) => row.name),
    ),
  );
  #started = false;

  /** Loads and follows the shell's events; the first call starts, later ones do nothing. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    void this.#load();
    void onClustersChanged((next) => {
      this.view = next;
      this.status = "ready";
      void this.readKept();
    });
    // A member shown by its DID has its handle now: read the clusters again (named).
    void onIdentityNamed(() => {
      if (this.status === "ready") void this.#load();
    });
    void onControllerRunning((started) => {
      if (started) void this.#load();
      else this.status = "signed-out";
    });
    // A kubeconfig also stops working on its own (it expires, its file is removed): looked at
    // again every minute while the window is shown, and at once when it is shown again.
    tickWhileVisible(KEPT_CHECK_MS, () => {
      if (this.status === "ready") void this.readKept();
    });
  }

  /** Reads the kubeconfigs saved here again (after one was saved or removed). */
  async readKept(): Promise<void> {
    try {
      this.kept = await kubeconfigs();
    } catch {
      this.kept = [];
    }
    this.keptRead = true;
  }

  /** Removes the kubeconfig at `path` (one saved here) and reads them again; why not, if not. */
  async forget(path: string): Promise<string | undefined> {
    let failed: string | undefined;
    try {
      await forgetKubeconfig(path);
    } catch (error) {
      failed = errorText(error);
    }
    await this.readKept();
    return failed;
  }

  async #load(): Promise<void> {
    try {
      this.view = await clusters();
      this.status = "ready";
      void this.readKept();
    } catch (error) {
      const code = error instanceof IpcError ? error.code : undefined;
      if (code === "signed-out" || code === "no-gateway") this.status = code;
      else {
        this.status = "failed";
        this.failure = error instanceof Error ? error.message : String(error);
      }
    }
  }
}

/** The clusters, shared by the whole window. */
export const clusterBoard = new ClusterBoard();
