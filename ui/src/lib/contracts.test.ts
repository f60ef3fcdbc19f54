import { describe, expect, it } from "vitest";
import {
  receiptHost,
  absoluteTime,
  askedRows,
  bidRows,
  changeRows,
  contractLead,
  costLabel,
  guestEventLabel,
  historyRows,
  linkedRows,
  proofBadge,
  relativeTime,
  whoLabel,
  type Bid,
} from "./contracts";

const NOW = Date.parse("2027-01-15T08:10:00Z");

function bid(bidder: string, receivedAt: string, overrides: Partial<Bid> = {}): Bid {
  return {
    bidder,
    bidderHandle: null,
    uri: `at://${bidder}/com.publicdomainrelay.temp.market.bid/1`,
    receivedAt,
    cost: "0.35",
    won: false,
    refused: null,
    ...overrides,
  };
}

describe("bids", () => {
  it("lists bids as they arrived, by handle when verified, the winner marked", () => {
    const rows = bidRows([
      bid("did:plc:dear", "2027-01-15T08:00:02Z"),
      bid("did:plc:cheap", "2027-01-15T08:00:01Z", { bidderHandle: "cheap.test", cost: "0.2", won: true }),
    ]);
    expect(rows.map((row) => row.who)).toEqual(["@cheap.test", "did:plc:dear"]);
    expect(rows[0]).toMatchObject({ did: "did:plc:cheap", cost: "0.2", won: true, received: "2027-01-15 08:00:01 UTC" });
    expect(rows[1]?.won).toBe(false);
  });

  it("keeps a refused bid in the table with why it does not count", () => {
    const why = "did:plc:stranger was not asked for a proposal";
    const rows = bidRows([
      bid("did:plc:stranger", "2027-01-15T08:00:03Z", { cost: null, refused: why }),
      bid("did:plc:cheap", "2027-01-15T08:00:01Z", { won: true }),
    ]);
    expect(rows.map((row) => [row.did, row.won, row.refused])).toEqual([
      ["did:plc:cheap", true, null],
      ["did:plc:stranger", false, why],
    ]);
  });

  it("marks each bid proven or unproven, with the whole check on hover", () => {
    const unproven = "unproven: its PDS answers sync.getRecord with JSON, not a CAR; signed with a key the author's DID document lists";
    const rows = bidRows([
      bid("did:plc:public", "2027-01-15T08:00:02Z", { checked: { proven: false, summary: unproven } }),
      bid("did:plc:ours", "2027-01-15T08:00:01Z", { checked: { proven: true, summary: "proven by its repo's signed commit (rev 3l)" } }),
      bid("did:plc:stranger", "2027-01-15T08:00:03Z", { refused: "not signed" }),
    ]);
    expect(rows.map((row) => row.proof?.label ?? null)).toEqual(["proven", "unproven", null]);
    expect(rows[1]?.proof).toEqual({ label: "unproven", tone: "waiting", title: unproven });
    expect(proofBadge(null)).toBeNull();
  });

  it("lists a receipt's linked records, unknown collections shown as received", () => {
    const rows = linkedRows({
      proven: true,
      summary: "proven",
      linked: [
        {
          link: "bid.config",
          uri: "at://did:plc:b/com.publicdomainrelay.temp.compute.config.wif.simple/1",
          cid: "bafyc",
          collection: "com.publicdomainrelay.temp.compute.config.wif.simple",
          known: false,
          proven: false,
          value: '{"$type":"com.publicdomainrelay.temp.compute.config.wif.simple","issuer":"x"}',
        },
        { link: "payload", uri: "at://did:plc:b/x/2", cid: "bafyp", collection: "x", known: true, proven: null, value: "not read: gone" },
      ],
    });
    expect(rows.map((row) => [row.link, row.unknown !== null, row.proof])).toEqual([
      ["bid.config", true, "unproven"],
      ["payload", false, "not read"],
    ]);
    expect(rows[0]?.text).toContain('\n  "issuer": "x"');
    expect(rows[1]?.text).toBe("not read: gone");
    expect(linkedRows(null)).toEqual([]);
  });

  it("says free for a zero price and no price when the bid names none", () => {
    expect(costLabel("0")).toBe("free");
    expect(costLabel("0.000")).toBe("free");
    expect(costLabel(null)).toBe("no price");
    expect(costLabel("1.5")).toBe("1.5");
  });

  it("shows an unresolved identity as its DID", () => {
    expect(whoLabel("did:plc:x", null)).toBe("did:plc:x");
    expect(whoLabel("did:plc:x", "x.test")).toBe("@x.test");
  });
});

describe("guest events", () => {
  it("reads the kinds it knows in words, with their detail", () => {
    const at = "2027-01-15T08:00:05Z";
    expect(guestEventLabel({ kind: "vm.onNetwork", at, detail: "10.0.0.7", uri: "u" })).toBe(
      "on the network at 10.0.0.7",
    );
    expect(guestEventLabel({ kind: "vm.started", at, detail: null, uri: "u" })).toBe("guest started");
    expect(guestEventLabel({ kind: "org.example.other", at, detail: null, uri: "u" })).toBe("org.example.other");
  });
});

describe("times", () => {
  it("shows absolute times in UTC and relative ones from now", () => {
    expect(absoluteTime("2027-01-15T08:00:05.123Z")).toBe("2027-01-15 08:00:05 UTC");
    expect(absoluteTime("soon")).toBe("soon");
    expect(relativeTime("2027-01-15T08:10:00Z", NOW)).toBe("just now");
    expect(relativeTime("2027-01-15T08:09:48Z", NOW)).toBe("12 s ago");
    expect(relativeTime("2027-01-15T08:05:00Z", NOW)).toBe("5 min ago");
    expect(relativeTime("2027-01-15T05:00:00Z", NOW)).toBe("3 h ago");
    expect(relativeTime("2027-01-13T08:10:00Z", NOW)).toBe("2 d ago");
    expect(relativeTime("2027-01-15T08:11:00Z", NOW)).toBe("in 1 min");
    expect(relativeTime("not a time", NOW)).toBe("");
  });
});

describe("phase changes", () => {
  it("puts the newest first, equal times in the order given, with both times", () => {
    const rows = changeRows(
      [
        { phase: "requesting", at: "2027-01-15T08:00:00Z", message: "waiting for bids", contract: "vm" },
        { phase: "requesting", at: "2027-01-15T08:09:00Z", message: null, contract: "web" },
        { phase: "deployed", at: "2027-01-15T08:09:00Z", message: null, contract: "vm" },
      ],
      NOW,
    );
    expect(rows.map((row) => `${row.contract} ${row.phase}`)).toEqual([
      "web Requesting",
      "vm Deployed",
      "vm Requesting",
    ]);
    expect(rows[1]).toMatchObject({ tone: "steady", relative: "1 min ago", absolute: "2027-01-15 08:09:00 UTC" });
    expect(rows[2]?.message).toBe("waiting for bids");
    expect(new Set(rows.map((row) => row.key)).size).toBe(3);
  });

  it("shows a contract's history, carried oldest first, newest first", () => {
    const rows = historyRows(
      [
        { phase: "requesting", at: "2027-01-15T08:09:00Z", message: null },
        { phase: "deployed", at: "2027-01-15T08:09:00Z", message: null },
      ],
      NOW,
    );
    expect(rows.map((row) => row.phase)).toEqual(["Deployed", "Requesting"]);
  });
});

describe("receipt links", () => {
  it("shows the host the browser would go to, without port or path", () => {
    expect(receiptHost("http://localhost:2583/xrpc/com.atproto.repo.getRecord?repo=did%3Aplc%3Ab")).toBe("localhost");
    expect(receiptHost("https://pds.bidder.example/xrpc/x")).toBe("pds.bidder.example");
  });
  it("has no host without a readable link", () => {
    expect(receiptHost(null)).toBeUndefined();
    expect(receiptHost("not a url")).toBeUndefined();
  });
});

describe("askedRows", () => {
  const asked = [
    { bidder: "did:plc:free", bidderHandle: "free.test", answer: "bid", cost: "0", reason: null },
    { bidder: "did:plc:strict", bidderHandle: null, answer: "refused", cost: null, reason: "record is missing a valid badge.blue signature" },
    { bidder: "did:plc:silent", bidderHandle: null, answer: "noAnswer", cost: null, reason: null },
    { bidder: "did:plc:priced", bidderHandle: null, answer: "bidRefused", cost: null, reason: "priced free terms" },
  ];
  it("gives every bidder asked a row: its bid, its refusal and why, or no answer", () => {
    expect(askedRows(asked, false).map((row) => [row.who, row.answer, row.text])).toEqual([
      ["@free.test", "bid", "bid: free"],
      ["did:plc:strict", "refused", "refused the request: record is missing a valid badge.blue signature"],
      ["did:plc:silent", "noAnswer", "no answer"],
      ["did:plc:priced", "bidRefused", "bid refused here: priced free terms"],
    ]);
  });
  it("says no answer yet while the window is open", () => {
    expect(askedRows(asked, true)[2]?.text).toBe("no answer yet");
  });
});

describe("contractLead", () => {
  const history = [
    { phase: "requesting", at: "2027-01-15T08:00:00Z", message: null },
    { phase: "deployed", at: "2027-01-15T08:05:00Z", message: null },
  ];
  const events = [
    { kind: "vm.started", at: "2027-01-15T08:04:00Z", detail: null, uri: "at://g/e/1" },
    { kind: "vm.onNetwork", at: "2027-01-15T08:04:30Z", detail: "192.0.2.1", uri: "at://g/e/2" },
  ];
  const bids = [bid("did:plc:dear", "2027-01-15T08:01:00Z"), bid("did:plc:free", "2027-01-15T08:01:01Z", { cost: "0", won: true })];

  it("leads a deployed contract with where it runs, the winning price and since when", () => {
    const lead = contractLead({ phase: "deployed", events, bids, history }, NOW);
    expect(lead).toEqual({
      where: "On the network at 192.0.2.1",
      price: "free",
      since: { relative: "5 min ago", absolute: "2027-01-15 08:05:00 UTC", at: "2027-01-15T08:05:00Z" },
    });
  });

  it("names the latest address, and none once the guest no longer runs", () => {
    const moved = [...events, { kind: "vm.onNetwork", at: "2027-01-15T08:06:00Z", detail: "192.0.2.9", uri: "at://g/e/3" }];
    expect(contractLead({ phase: "deployed", events: moved, bids, history }, NOW).where).toBe("On the network at 192.0.2.9");
    const released = [...history, { phase: "released", at: "2027-01-15T08:09:00Z", message: null }];
    const lead = contractLead({ phase: "released", events, bids, history: released }, NOW);
    expect(lead.where).toBeNull();
    expect(lead.since?.relative).toBe("1 min ago");
  });

  it("says nothing it does not know", () => {
    expect(contractLead({ phase: null, events: [], bids: [], history: [] }, NOW)).toEqual({ where: null, price: null, since: null });
    expect(contractLead({ phase: "deployed", events, bids: [bid("did:plc:x", "2027-01-15T08:01:00Z", { won: true, cost: "0.25" })], history }, NOW).price).toBe("0.25");
  });
});
