// The sandbox PDS's outgoing mail, kept where the tests (and the owner of a kept sandbox) can
// read it: a small SMTP server on loopback that the PDS sends through, writing each mail it
// receives as one JSON file in a folder. Nothing is relayed anywhere: the sandbox's accounts
// have made-up addresses (`<handle>@example.test`), and their mail stays on this machine.
//
// A mail file is `<received ms>-<n>.json`: {"receivedAt", "from", "to": [..], "subject",
// "text"}, written under a temporary name and renamed, so a reader never sees half of one.

import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

/** The largest mail kept; the PDS's are a few kilobytes. */
const MAX_MAIL_BYTES = 1024 * 1024;

/** Starts the mailbox on a free loopback port, writing into `folder`.
 * Returns {smtpUrl, folder, close}. */
export async function startMailbox(folder) {
  await mkdir(folder, { recursive: true });
  let received = 0;
  const server = new SMTPServer({
    // Loopback only, no login and no TLS: what a local test mail catcher is.
    authOptional: true,
    disabledCommands: ["AUTH", "STARTTLS"],
    size: MAX_MAIL_BYTES,
    logger: false,
    onData(stream, session, callback) {
      keep(stream, session, folder, ++received).then(() => callback(), callback);
    },
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.server.address();
  return {
    smtpUrl: `smtp://127.0.0.1:${port}`,
    folder,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Parses one mail and writes it as a file of its own. */
async function keep(stream, session, folder, n) {
  const mail = await simpleParser(stream);
  const entry = {
    receivedAt: new Date().toISOString(),
    from: session.envelope.mailFrom?.address ?? null,
    to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
    subject: mail.subject ?? "",
    text: mail.text ?? "",
  };
  const name = `${Date.now()}-${String(n).padStart(6, "0")}`;
  const temporary = join(folder, `.${name}.tmp`);
  await writeFile(temporary, JSON.stringify(entry, null, 2));
  await rename(temporary, join(folder, `${name}.json`));
}
