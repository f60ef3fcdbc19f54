// The window's one deployment list: listed when the controller starts (and again only when the
// shell says change events were lost), then kept live by each change event. The Deployments
// section, the notices and the command palette all read it; nothing else lists deployments.
// The rules (which load counts, how a change applies) are the pure functions of lib/.

import {
  deployments,
  IpcError,
  onControllerRunning,
  onDeploymentChanged,
  onDeploymentsStale,
  type DeploymentChange,
  type DeploymentRow,
} from "../ipc";
import { applyChange, settleLoad } from "../lib/deployments";
import { LatestLoad } from "../lib/loads";

/** Where the list stands. */
export type ListStatus = "loading" | "ready" | "signed-out" | "failed";

type Listener<T> = (value: T) => void;

class DeploymentList {
  // Rows are replaced whole on every change (never mutated), so they are kept raw: no deep
  // proxy for thousands of rows.
  rows: readonly DeploymentRow[] = $state.raw([]);
  status: ListStatus = $state("loading");
  failure = $state("");
  readonly #loads = new LatestLoad<DeploymentChange>();
  readonly #changed = new Set<Listener<DeploymentChange>>();
  readonly #listed = new Set<Listener<readonly DeploymentRow[]>>();
  #started = false;

  /** Lists and follows the shell's events; the first call starts, later ones do nothing. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    void this.#load();
    void onDeploymentChanged((change) => this.#apply(change));
    void onDeploymentsStale(() => void this.#load());
    void onControllerRunning((started) => {
      if (started) void this.#load();
      else this.#settle([], "signed-out");
    });
  }

  /** Calls `listener` with each change, after the list applied it. */
  onChange(listener: Listener<DeploymentChange>): () => void {
    this.#changed.add(listener);
    return () => this.#changed.delete(listener);
  }

  /** Calls `listener` with the whole list each time it is listed afresh (or emptied at
   * sign-out). */
  onListed(listener: Listener<readonly DeploymentRow[]>): () => void {
    this.#listed.add(listener);
    return () => this.#listed.delete(listener);
  }

  /** Shows `row` at once, as the declaration editor saved it (its change event follows; the
   * newer of the two is kept). */
  showSaved(row: DeploymentRow): void {
    this.rows = applyChange(this.rows, { kind: row.kind, name: row.name, row });
  }

  #apply(change: DeploymentChange): void {
    this.#loads.arrive(change);
    this.rows = applyChange(this.rows, change);
    for (const listener of this.#changed) listener(change);
    if (this.status !== "ready" && !this.#loads.underWay) void this.#load();
  }

  async #load(): Promise<void> {
    try {
      const loaded = await this.#loads.run(deployments);
      if (loaded) this.#settle(settleLoad(loaded.value, loaded.arrived), "ready");
    } catch (error) {
      if (error instanceof IpcError && error.code === "signed-out") this.#settle([], "signed-out");
      else {
        this.failure = error instanceof Error ? error.message : String(error);
        this.status = "failed";
      }
    }
  }

  #settle(rows: readonly DeploymentRow[], status: ListStatus): void {
    this.rows = rows;
    this.status = status;
    for (const listener of this.#listed) listener(rows);
  }
}

/** The list, shared by the whole window. */
export const deploymentList = new DeploymentList();
