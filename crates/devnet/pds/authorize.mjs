#!/usr/bin/env node
// A person at the sandbox PDS's authorization page, played by Debian's Chromium (driven with
// playwright-core): opens the URL it is given, signs in, and approves (or denies) the request,
// then waits until the browser has landed on the app's redirect. Used by the tests as the
// "system browser", directly or as $BROWSER.
//
// Usage: authorize.mjs <authorization url>
// Environment:
//   SWDESK_AUTHORIZE_USERNAME, SWDESK_AUTHORIZE_PASSWORD  the account to sign in with
//   SWDESK_AUTHORIZE_DECISION  "approve" (default) or "deny"
//   SWDESK_CHROMIUM            the browser binary (default /usr/bin/chromium)
// Exits 0 once the redirect was reached; 1 with the reason on stderr otherwise.

import { chromium } from "playwright-core";

const STEP_TIMEOUT_MS = 30_000;

async function main() {
  const url = process.argv[2];
  const username = process.env.SWDESK_AUTHORIZE_USERNAME;
  const password = process.env.SWDESK_AUTHORIZE_PASSWORD;
  const decision = process.env.SWDESK_AUTHORIZE_DECISION ?? "approve";
  if (!url || !username || !password) {
    throw new Error("usage: authorize.mjs <url>, with SWDESK_AUTHORIZE_USERNAME and _PASSWORD set");
  }
  const browser = await chromium.launch({
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
