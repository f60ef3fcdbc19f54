#!/usr/bin/env node
// A person at the sandbox PDS's authorization page, played by Debian's Chromium (driven with
// playwright-core): opens the URL it is given, signs in, and approves (or denies) the request,
// then waits until the browser has landed on the app's redirect. Used by the tests as the
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

import { appendFileSync } from "node:fs";
import { chromium } from "playwright-core";

const STEP_TIMEOUT_MS = 30_000;
const AUTHORIZE_PATH = "/oauth/authorize";

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
    const redirected = page.waitForURL((target) => target.hostname === "127.0.0.1");
    const button = decision === "deny" ? /^(deny|deny access|decline)$/i : /^(authorize|accept|allow)$/i;
    await page.getByRole("button", { name: button }).first().click();
    await redirected;
    await page.waitForLoadState("load");
  } finally {
    await browser.close();
  }
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
