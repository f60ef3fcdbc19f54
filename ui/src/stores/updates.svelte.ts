// The window's one view of updates: read from the shell at start, then kept by its
// `update-changed` events. The sidebar's update bar and Settings read it; the wording is
// lib/updates.

import { checkForUpdate, errorText, installUpdate, onUpdateChanged, updateStatus, type UpdateView } from "../ipc";

class Updates {
  view: UpdateView = $state.raw({ state: "off" });
  /** Why the last install or check the owner asked for failed, if it did. */
  failure = $state("");
  busy = $state(false);
  #started = false;

  /** Reads and follows the shell's update state; the first call starts, later ones do nothing. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    void onUpdateChanged((next) => (this.view = next));
    void updateStatus().then((view) => (this.view = view));
  }

  /** Asks for a newer release now. */
  async check(): Promise<void> {
    await this.#run(async () => {
      this.view = await checkForUpdate();
    });
  }

  /** Installs the downloaded release; the app restarts into it. */
  async restart(): Promise<void> {
    await this.#run(installUpdate);
  }

  async #run(action: () => Promise<void>): Promise<void> {
    this.busy = true;
    this.failure = "";
    try {
      await action();
    } catch (error) {
      this.failure = errorText(error);
    } finally {
      this.busy = false;
    }
  }
}

export const updates = new Updates();
