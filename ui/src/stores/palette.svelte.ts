// The command palette's entries that follow what is open: the deployment shown offers its
// request, release, edit and inspect here (with their shortcuts) while it is shown, and takes
// them back when it closes. The palette lists them before the window's fixed actions.

import type { PaletteItem } from "../lib/palette";

/** A palette entry and what choosing it does. */
export interface PaletteAction extends PaletteItem {
  run: () => void;
}

class PaletteContext {
  actions: PaletteAction[] = $state.raw([]);

  /** Offers `actions` until the returned function is called. */
  offer(actions: PaletteAction[]): () => void {
    this.actions = actions;
    return () => {
      if (this.actions === actions) this.actions = [];
    };
  }
}

export const paletteContext = new PaletteContext();
