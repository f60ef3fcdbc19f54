// The one module through which the window talks to Rust. Everything here is typed by the
// generated `bindings.ts` (from the Rust commands; never edit it by hand); the rest of the UI
// imports from this module only, never from `@tauri-apps/api` or the bindings directly.

import {
  commands,
  type AccountDto as Account,
  type AppInfo,
  type CommandError,
  type DemoAccount,
  type Session,
} from "./bindings";

export type { Account, AppInfo, CommandError, DemoAccount, Session };

/** A failed command as the UI handles it: branch on `code`, show `message`. */
export class IpcError extends Error {
  readonly code: string;
  constructor(error: CommandError) {
    super(error.message);
    this.code = error.code;
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
