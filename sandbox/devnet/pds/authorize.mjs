#!/usr/bin/env node
// A person at the sandbox PDS's authorization page, played by Debian's Chromium (driven with
// playwright-core): opens the URL it is given, signs in, and approves (or denies) the request,
// then waits until the browser has landed on the app's redirect (its loopback listener, or its
// own link, handed to the desktop with xdg-open). Used by the tests as the
// "system browser", directly or as $BROWSER. Any other page (a record link the app opens) is
// loaded and its text written down, so a test can see what the owner would have seen.
//
// Usage: authorize.mjs <url>
// Environment:
//   SWDESK_AUTHORIZE_USERNAME, SWDESK_AUTHORIZE_PASSWORD  the account to sign in with
//   SWDESK_AUTHORIZE_DECISION  "approve" (default) or "deny"
//   SWDESK_BROWSER_PAGES       a file the other pages are appended to, a JSON line each
//                              ({"url", "status", "text"})
//   SWDESK_CHROMIUM            the browser binary (default /usr/bin/chromium)
// Exits 0 once the redirect was reached (or the other page loaded); 1 with the reason on
// stderr otherwise.

import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { chromium } from "playwright-core";

const STEP_TIMEOUT_MS = 30_000;
const AUTHORIZE_PATH = "/oauth/authorize";
/** The app's own sign-in link, which a release build's sign-in may return through. */
const APP_LINK = "computer.socialweb.desk:";

async function main() {
  const url = process.argv[2];
  if (!url) throw new Error("usage: authorize.mjs <url>");
  if (new URL(url).pathname !== AUTHORIZE_PATH) return showPage(url);
  const username = process.env.SWDESK_AUTHORIZE_USERNAME;
  const password = process.env.SWDESK_AUTHORIZE_PASSWORD;
  const decision = process.env.SWDESK_AUTHORIZE_DECISION ?? "approve";
  if (!username || !password) {
    throw new Error("an authorization page needs SWDESK_AUTHORIZE_USERNAME and _PASSWORD");
  }
  const browser = await launch();
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    await page.goto(url);
    await signIn(page, username, password);
    // The redirect is a navigation to the app: its loopback listener, or its own link (which
    // headless Chromium only tries and drops: the desktop's handler is started here instead).
    const redirected = page.waitForRequest(
      (request) => request.isNavigationRequest() && isAppRedirect(request.url()),
    );
    const button = decision === "deny" ? /^(deny|deny access|decline)$/i : /^(authorize|accept|allow)$/i;
    await page.getByRole("button", { name: button }).first().click();
    const target = (await redirected).url();
    if (target.startsWith(APP_LINK)) await openAppLink(target);
    else await page.waitForURL((url) => url.hostname === "127.0.0.1");
  } finally {
    await browser.close();
  }
}

/** Whether `url` is the app's: its loopback listener or its own link. */
function isAppRedirect(url) {
  return url.startsWith(APP_LINK) || (url.startsWith("http:") && new URL(url).hostname === "127.0.0.1");
}

/** Opens the app's link as a desktop browser does: with `xdg-open`, which starts the handler
 * the desktop entries name (the app, which hands the link to its running instance). $BROWSER
 * is this script: it is emptied, so that xdg-open never falls back to it. */
function openAppLink(url) {
  return new Promise((resolve, reject) => {
    const opener = spawn("xdg-open", [url], {
      env: { ...process.env, BROWSER: "" },
      stdio: ["ignore", "inherit", "inherit"],
    });
    opener.on("error", reject);
    opener.on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`xdg-open could not open the app's link (exit ${code})`)),
    );
  });
}

/** Headless Chromium, as Debian installs it. */
function launch() {
  return chromium.launch({
    executablePath: process.env.SWDESK_CHROMIUM ?? "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Loads a page that is not an authorization page and writes down what it showed. */
async function showPage(url) {
  const browser = await launch();
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    const response = await page.goto(url);
    const text = await page.locator("body").innerText();
    const pages = process.env.SWDESK_BROWSER_PAGES;
    if (pages) appendFileSync(pages, `${JSON.stringify({ url, status: response?.status(), text })}\n`);
  } finally {
    await browser.close();
  }
}

async function signIn(page, username, password) {
  const usernameField = page.locator("input[name=username]");
  await usernameField.waitFor();
  if (!(await usernameField.isEditable()) && (await usernameField.inputValue()) !== username) {
    // The page locked the identifier to the app's login hint; a person can still sign in
    // as someone else (another tab, another device): unlock the field as they would.
    await usernameField.evaluate((field) => {
      field.removeAttribute("disabled");
      field.removeAttribute("readonly");
    });
  }
  if (await usernameField.isEditable()) await usernameField.fill(username);
  await page.locator("input[name=password]").fill(password);
  await page.getByRole("button", { name: /^(sign in|next|continue)$/i }).first().click();
}

main().catch((error) => {
  process.stderr.write(`authorize.mjs: ${error.stack ?? error}\n`);
  process.exit(1);
});
