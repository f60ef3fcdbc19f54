import { describe, expect, it } from "vitest";
import { idKind, kindLabel, shortId } from "./ids";

const RECEIPT = "at://did:plc:abcdefghijklmnopqrstuvwx/com.publicdomainrelay.temp.market.receipt/3lxyzabcdefgh2";
const CID = "bafyreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy";

describe("shortId", () => {
  it("cuts an at:// URI to its authority, the collection's last segment and the record key", () => {
    expect(shortId(RECEIPT)).toBe("at://did:plc:abcd…uvwx/receipt/3lxyzabc…fgh2");
    expect(shortId("at://did:plc:ab/app.bsky.feed.post/3l")).toBe("at://did:plc:ab/post/3l");
    expect(shortId("at://did:plc:abcdefghijklmnop")).toBe("at://did:plc:abcd…mnop");
  });

  it("keeps the start and the end of a CID", () => {
    expect(shortId(CID)).toBe("bafyrei…4s52zy");
  });

  it("keeps a DID's method and cuts its identifier", () => {
    expect(shortId("did:plc:abcdefghijklmnopqrstuvwx")).toBe("did:plc:abcd…uvwx");
    expect(shortId("did:web:localhost%3A2583")).toBe("did:web:localhost%3A2583");
    expect(shortId("did:web:a-very-long-subdomain.of.example.com")).toBe("did:web:a-very-long-….example.com");
  });

  it("leaves what is already short whole", () => {
    expect(shortId("node-0")).toBe("node-0");
    expect(shortId("a-rather-long-name-that-goes-on-and-on")).toBe("a-rather-long-…n-and-on");
  });

  it("tells two receipts of one author apart", () => {
    const other = RECEIPT.replace("3lxyzabcdefgh2", "3lxyzabcdefzz9");
    expect(shortId(other)).not.toBe(shortId(RECEIPT));
  });
});

describe("idKind", () => {
  it("names what is copied", () => {
    expect(idKind(RECEIPT)).toBe("uri");
    expect(idKind(CID)).toBe("cid");
    expect(idKind("did:plc:x")).toBe("did");
    expect(idKind("bafy")).toBe("text");
    expect(kindLabel(idKind(RECEIPT))).toBe("record URI");
    expect(kindLabel(idKind(CID))).toBe("content ID");
  });
});
