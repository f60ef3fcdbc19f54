// The local sandbox's atproto PDS: a PLC directory and a real @atproto/pds, both on loopback,
// for the tests and for `cargo xtask run`. Plainly a local sandbox: every key and password here
// is made up on this machine and never leaves it.
//
// Usage: node pds.mjs [--data <dir>] [--pds-port N] [--plc-port N] [--listen-port N]
//                     [--account handle:password]...
//
// Without --data the sandbox is throwaway: free ports, a temporary data directory removed at
// exit (the tests). With --data it persists in <dir>: its secrets, the PDS's repos and the
// PLC's operations survive a restart, on fixed ports (2583 and 2582 unless given), so a
// session signed in yesterday still works today (`cargo xtask run`). Accounts asked for on the
// command line are created when they do not exist yet.
//
// The app's hosted client metadata document (crates/atproto/oauth-client-metadata.json, which a
// release build presents as its client id) is answered from this checkout whenever the PDS
// fetches its URL: the sandbox can sign in the way a release build does, without the network.
//
// The PDS sends its mail (the tokens of PLC operations, email confirmations) through a small
// SMTP server on loopback (mailbox.mjs) that writes each mail as a JSON file in
// <data>/mail, the ready line's "mailbox": a test reads the token there, as an owner reads
// their inbox. Nothing leaves the machine.
//
// Prints exactly one JSON line on stdout once ready:
//   {"pdsUrl", "plcUrl", "serviceDid", "adminPassword", "dataDirectory", "mailbox",
//    "accounts": [{"handle", "did", "password"}]}
// Stops cleanly on SIGTERM, SIGINT, or when stdin closes.

process.env.LOG_ENABLED = process.env.SWDESK_PDS_LOG ? "true" : "false";
process.env.LOG_DESTINATION = process.env.SWDESK_PDS_LOG || "/dev/null";

import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as pds from "@atproto/pds";
import { Secp256k1Keypair } from "@atproto/crypto";
import * as plc from "@did-plc/server";
import { startMailbox } from "./mailbox.mjs";

/** How often a persistent sandbox saves the PLC's operations when they changed. */
const PLC_SAVE_INTERVAL_MS = 2000;

function parseArgs(argv) {
  const options = { accounts: [], data: null, pdsPort: null, plcPort: null, listenPort: null };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${flag} wants a value`);
    switch (flag) {
      case "--account": {
        const [handle, password] = value.split(":");
        if (!handle || !password) throw new Error("--account wants handle:password");
        options.accounts.push({ handle, password });
        break;
      }
      case "--data":
        options.data = value;
        break;
      case "--pds-port":
        options.pdsPort = Number(value);
        break;
      case "--plc-port":
        options.plcPort = Number(value);
        break;
      case "--listen-port":
        options.listenPort = Number(value);
        break;
      default:
        throw new Error(`unknown argument ${flag}`);
    }
  }
  return options;
}

/** A port the kernel had free, for a sandbox started by hand without ports. The Rust harness
 * passes both ports (`swdesk_devnet::ports`): a port let go here comes from the ephemeral range,
 * where a parallel test's outgoing connection may take it before the PDS listens. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The sandbox's settings: made up once, and kept in a persistent sandbox. */
async function settings(options) {
  const file = options.data && join(options.data, "sandbox.json");
  if (file && existsSync(file)) return JSON.parse(await readFile(file, "utf8"));
  const rotationKey = await Secp256k1Keypair.create({ exportable: true });
  const made = {
    pdsPort: options.pdsPort ?? (options.data ? 2583 : await freePort()),
    plcPort: options.plcPort ?? (options.data ? 2582 : await freePort()),
    jwtSecret: randomBytes(24).toString("hex"),
    dpopSecret: randomBytes(32).toString("hex"),
    adminPassword: randomBytes(12).toString("hex"),
    rotationKeyHex: Buffer.from(await rotationKey.export()).toString("hex"),
  };
  if (file) await writeFile(file, JSON.stringify(made, null, 2), { mode: 0o600 });
  return made;
}

/** The PLC directory, its operations replayed from `opsFile` when there is one. */
async function startPlc(port, opsFile) {
  const db = plc.Database.mock();
  if (opsFile && existsSync(opsFile)) {
    const saved = JSON.parse(await readFile(opsFile, "utf8"));
    for (const [did, ops] of Object.entries(saved)) {
      for (const op of ops) await db.validateAndAddOp(did, op);
    }
  }
  const server = plc.PlcServer.create({ db, port });
  await server.start();
  const save = async () => {
    if (!opsFile) return;
    const ops = Object.fromEntries(
      Object.entries(db.contents).map(([did, indexed]) => [did, indexed.map((entry) => entry.operation)]),
    );
    await writeFile(opsFile, JSON.stringify(ops));
  };
  return { server, save, url: `http://localhost:${port}`, count: () => Object.values(db.contents).reduce((sum, ops) => sum + ops.length, 0) };
}

/** The committed client metadata document a release build presents as its client id. */
const HOSTED_CLIENT_METADATA = join(
  dirname(fileURLToPath(import.meta.url)),
  "../../../crates/atproto/oauth-client-metadata.json",
);

/** Answers the PDS's fetch of the hosted client id from `file`; every other fetch goes out as
 * before. (The PDS looks `globalThis.fetch` up at each call; a discoverable client id must be
 * an https URL on a public-looking host, which no loopback server can be.) */
function serveHostedClientMetadata(file) {
  if (!existsSync(file)) return;
  const document = readFileSync(file, "utf8");
  const clientId = JSON.parse(document).client_id;
  const upstream = globalThis.fetch;
  globalThis.fetch = function (input, init) {
    const url = input instanceof Request ? input.url : String(input);
    if (url !== clientId) return upstream.call(this, input, init);
    const headers = { "content-type": "application/json" };
    return Promise.resolve(new Response(document, { status: 200, headers }));
  };
}

/** The PDS, named by `http://localhost:<pdsPort>` (its public URL, in every DID document and
 * DPoP proof) and listening there, or on `listenPort` when a test puts a fault-injecting
 * proxy on the public port in front of it. `internal` is where the harness itself calls it. */
async function startPds(config, plcUrl, dataDirectory, listenPort, smtpUrl) {
  const env = {
    devMode: true,
    port: config.pdsPort,
    hostname: "localhost",
    serviceHandleDomains: [".test"],
    dataDirectory,
    blobstoreDiskLocation: join(dataDirectory, "blobs"),
    didPlcUrl: plcUrl,
    inviteRequired: false,
    disableSsrfProtection: true,
    rateLimitsEnabled: false,
    jwtSecret: config.jwtSecret,
    dpopSecret: config.dpopSecret,
    adminPassword: config.adminPassword,
    plcRotationKeyK256PrivateKeyHex: config.rotationKeyHex,
    emailSmtpUrl: smtpUrl,
    emailFromAddress: "pds@localhost.test",
  };
  serveHostedClientMetadata(HOSTED_CLIENT_METADATA);
  const cfg = pds.envToCfg(env);
  if (listenPort) cfg.service.port = listenPort;
  const server = await pds.PDS.create(cfg, pds.envToSecrets(env));
  await server.start();
  const internal = `http://localhost:${listenPort ?? config.pdsPort}`;
  return { server, url: `http://localhost:${config.pdsPort}`, internal };
}

/** The account, created unless it already exists (a persistent sandbox's second start). */
async function ensureAccount(pdsUrl, { handle, password }) {
  const known = await fetch(`${pdsUrl}/xrpc/com.atproto.identity.resolveHandle?handle=${handle}`);
  if (known.ok) return { handle, did: (await known.json()).did, password };
  const response = await fetch(`${pdsUrl}/xrpc/com.atproto.server.createAccount`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ handle, password, email: `${handle}@example.test` }),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(`createAccount ${handle}: ${body.error}: ${body.message}`);
  return { handle: body.handle, did: body.did, password };
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const persistent = options.data !== null;
  const dataDirectory = persistent ? options.data : await mkdtemp(join(tmpdir(), "swdesk-pds-"));
  await mkdir(join(dataDirectory, "pds"), { recursive: true });
  let plcServer;
  let pdsServer;
  let mailbox;
  let stopping = false;
  const stop = async (code) => {
    if (stopping) return;
    stopping = true;
    await pdsServer?.server.destroy().catch(() => {});
    await plcServer?.save().catch(() => {});
    await plcServer?.server.destroy().catch(() => {});
    await mailbox?.close().catch(() => {});
    if (!persistent) await rm(dataDirectory, { recursive: true, force: true });
    process.exit(code);
  };
  process.on("SIGTERM", () => stop(0));
  process.on("SIGINT", () => stop(0));
  process.stdin.on("end", () => stop(0));
  process.stdin.on("close", () => stop(0));
  process.stdin.resume();

  try {
    const config = await settings({ ...options, data: persistent ? dataDirectory : null });
    const opsFile = persistent ? join(dataDirectory, "plc-ops.json") : null;
    plcServer = await startPlc(config.plcPort, opsFile);
    mailbox = await startMailbox(join(dataDirectory, "mail"));
    const pdsDirectory = join(dataDirectory, "pds");
    pdsServer = await startPds(config, plcServer.url, pdsDirectory, options.listenPort, mailbox.smtpUrl);
    const accounts = [];
    for (const account of options.accounts) accounts.push(await ensureAccount(pdsServer.internal, account));
    if (persistent) {
      await plcServer.save();
      let saved = plcServer.count();
      setInterval(() => {
        if (plcServer.count() !== saved) plcServer.save().then(() => (saved = plcServer.count()));
      }, PLC_SAVE_INTERVAL_MS).unref();
    }
    process.stdout.write(
      JSON.stringify({
        pdsUrl: pdsServer.url,
        plcUrl: plcServer.url,
        serviceDid: pdsServer.server.ctx.cfg.service.did,
        adminPassword: config.adminPassword,
        dataDirectory,
        mailbox: mailbox.folder,
        accounts,
      }) + "\n",
    );
  } catch (error) {
    process.stderr.write(`the sandbox PDS could not start: ${error.stack ?? error}\n`);
    await stop(1);
  }
}

main();
