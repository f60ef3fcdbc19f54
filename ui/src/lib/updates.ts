// What the window says of updates: one line for each state the shell reports, whether it
// warrants the sidebar's attention, and what the owner can do next. Pure, so every state's
// wording is tested.

import type { UpdateView } from "../ipc";

/** What the owner can do about an update from where it is shown. */
export type UpdateAction = "restart" | "check" | undefined;

/** How an update state is shown. */
export interface UpdateLine {
  text: string;
  /** Worth showing in the sidebar (a release ready, downloading, refused or failed). */
  prominent: boolean;
  tone: "info" | "ready" | "problem";
  action: UpdateAction;
}

/** `bytes` as MiB with one decimal. */
function mebibytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** How `view` is shown. */
export function updateLine(view: UpdateView): UpdateLine {
  switch (view.state) {
    case "off":
      return { text: "This development build checks for no updates", prominent: false, tone: "info", action: undefined };
    case "checking":
      return { text: "Checking for updates…", prominent: false, tone: "info", action: undefined };
    case "upToDate":
      return { text: `Up to date (${view.version})`, prominent: false, tone: "info", action: "check" };
    case "downloading": {
      const of = view.total === null ? "" : ` of ${mebibytes(view.total)}`;
      return {
        text: `Downloading version ${view.version}: ${mebibytes(view.received)}${of}`,
        prominent: true,
        tone: "info",
        action: undefined,
      };
    }
    case "ready":
      return { text: `Version ${view.version} is ready — restart to update`, prominent: true, tone: "ready", action: "restart" };
    case "refused":
      return {
        text: `Version ${view.version} was refused: ${view.reason}. This version keeps working.`,
        prominent: true,
        tone: "problem",
        action: "check",
      };
    case "unreachable":
      return { text: `Could not check for updates: ${view.reason}`, prominent: false, tone: "problem", action: "check" };
    case "installing":
      return { text: `Installing version ${view.version}…`, prominent: true, tone: "info", action: undefined };
    case "installFailed":
      return {
        text: `Version ${view.version} could not be installed: ${view.reason}. This version keeps working.`,
        prominent: true,
        tone: "problem",
        action: "check",
      };
  }
}
