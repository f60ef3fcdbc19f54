// View logic of the session: what an error code tells the owner to do, how the granted scopes
// read. Pure functions, unit tested; the components only render what these return.

import type { ErrorCode } from "../ipc";

/** What the sign-in screen says after an error, by the error's code. */
export function adviceFor(code: ErrorCode | undefined): string {
  switch (code) {
    case "identity":
      return "Check the handle (like alice.bsky.social) or paste your DID.";
    case "pds-unreachable":
      return "Your PDS did not answer. Check your connection, or try again when it is back.";
    case "auth-server-unsuitable":
      return "Your PDS's sign-in server cannot sign in desktop apps. Ask its operator.";
    case "unreachable":
      return "The sign-in server did not answer. Check your connection and try again.";
    case "refused":
      return "The sign-in server refused the request. Try again; if it keeps failing, tell us.";
    case "denied":
      return "Access was not granted in the browser. Sign in again and choose Authorize.";
    case "callback-mismatch":
      return "The browser returned from another sign-in. Start again from this window.";
    case "subject-mismatch":
      return "You signed in as another account than the one you typed. Sign in again with that account.";
    case "timed-out":
      return "The browser did not come back in time. Start again and finish in the browser.";
    case "browser":
      return "No browser could be opened. Set a default browser and try again.";
    case "keychain":
      return "Your session is kept in the system keychain, which is not available. Install or unlock one (gnome-keyring or KWallet), then try again.";
    case "listener":
      return "This app could not listen for the browser's answer on 127.0.0.1. Check that local connections are allowed.";
    default:
      return "Try again.";
  }
}

/** A granted scope, in words an owner reads at a glance. */
export function describeScope(scope: string): string {
  if (scope === "atproto") return "Your identity (atproto)";
  if (scope === "transition:generic") return "Broad access to your repo (the server has no fine-grained scopes)";
  if (scope.startsWith("repo:")) return `Write ${scope.slice("repo:".length).split("?")[0]} records`;
  if (scope.startsWith("rpc:")) return `Call ${scope.slice("rpc:".length).split("?")[0]}`;
  return scope;
}

/** A scope asked for that the grant lacks, and what will not work without it. */
export interface Missing {
  scope: string;
  loss: string;
}

/** The scopes asked for that `granted` lacks, each with what will not work without it; none when
 * the grant is broad (`transition:generic`). A method granted for another audience than asked
 * counts as granted (the server narrowed where it may be called, not what). */
export function notGranted(requested: readonly string[], granted: readonly string[]): Missing[] {
  if (granted.includes("transition:generic")) return [];
  const grantedTargets = new Set(granted.map(target));
  const wildcard = (kind: string) => granted.includes(`${kind}:*`);
  return requested
    .filter((scope) => scope !== "atproto" && !grantedTargets.has(target(scope)))
    .filter((scope) => !wildcard(scope.split(":")[0] ?? ""))
    .map((scope) => ({ scope, loss: lossOf(scope) }));
}

/** A scope without its parameters (`rpc:x.y?aud=*` → `rpc:x.y`). */
function target(scope: string): string {
  return scope.split("?")[0] ?? scope;
}

/** What will not work without `scope`, in words. */
function lossOf(scope: string): string {
  const name = target(scope).replace(/^(repo|rpc):/, "");
  const method = name.split(".").pop() ?? name;
  if (name === "computer.socialweb.infra") return "Infra deployments and the index at self cannot be written";
  if (name === "computer.socialweb.ephemeralInfra") return "EphemeralInfra deployments cannot be written";
  if (name.startsWith("computer.socialweb.secret.")) return "secrets cannot reach your guests";
  if (name.startsWith("computer.socialweb.k8s.")) return `clusters: ${method} (manifests, Jobs) cannot be called`;
  if (name.startsWith("com.publicdomainrelay.temp.cluster.")) return `clusters: the gateway's ${method} cannot be called`;
  if (scope.startsWith("rpc:com.publicdomainrelay.temp.market.")) return `contracts: bidders cannot be reached (${method})`;
  if (name.startsWith("com.publicdomainrelay.temp.")) return `contracts cannot run on the market (${name} records cannot be written)`;
  return `${target(scope)} was not granted`;
}

/** The letter shown in the account's avatar. */
export function initialOf(handle: string | null | undefined, did: string): string {
  const source = handle ?? did.replace(/^did:[a-z]+:/, "");
  return (source.match(/[a-z0-9]/i)?.[0] ?? "?").toUpperCase();
}

/** A message from the shell as a sentence: its first letter capitalised. */
export function sentence(message: string): string {
  return message.charAt(0).toUpperCase() + message.slice(1);
}
