import { describe, expect, it } from "vitest";
import type { ErrorCode } from "../ipc";
import { adviceFor, describeScope, initialOf, notGranted, sentence } from "./session";

describe("sign-in advice", () => {
  it("says what to do for every error code the shell sends", () => {
    const codes: ErrorCode[] = [
      "identity", "pds-unreachable", "auth-server-unsuitable", "unreachable", "refused", "denied",
      "callback-mismatch", "subject-mismatch", "timed-out", "browser", "keychain", "listener",
    ];
    const advice = codes.map(adviceFor);
    expect(advice.every((text) => text !== "Try again.")).toBe(true);
    expect(new Set(advice).size).toBe(codes.length);
  });

  it("falls back to a plain retry for a failure that carries no code", () => {
    expect(adviceFor(undefined)).toBe("Try again.");
  });
});

describe("granted scopes", () => {
  it("read as what they allow", () => {
    expect(describeScope("repo:computer.socialweb.infra")).toBe("Write computer.socialweb.infra records");
    expect(describeScope("rpc:computer.socialweb.k8s.getJob?aud=*")).toBe("Call computer.socialweb.k8s.getJob");
    expect(describeScope("transition:generic")).toMatch(/Broad access/);
    expect(describeScope("atproto")).toBe("Your identity (atproto)");
  });
});

describe("a grant narrower than asked", () => {
  const asked = [
    "atproto",
    "repo:computer.socialweb.infra",
    "repo:com.publicdomainrelay.temp.market.rfp",
    "rpc:com.publicdomainrelay.temp.cluster.getKubeconfig?aud=*",
    "rpc:com.publicdomainrelay.temp.market.submitRfp?aud=*",
  ];

  it("names each scope not granted with what will not work", () => {
    const granted = ["atproto", "repo:computer.socialweb.infra", "rpc:com.publicdomainrelay.temp.market.submitRfp?aud=did:web:bidder.test"];
    expect(notGranted(asked, granted)).toEqual([
      {
        scope: "repo:com.publicdomainrelay.temp.market.rfp",
        loss: "contracts cannot run on the market (com.publicdomainrelay.temp.market.rfp records cannot be written)",
      },
      {
        scope: "rpc:com.publicdomainrelay.temp.cluster.getKubeconfig?aud=*",
        loss: "clusters: the gateway's getKubeconfig cannot be called",
      },
    ]);
  });

  it("finds nothing missing in a whole, a broad or a wildcard grant", () => {
    expect(notGranted(asked, asked)).toEqual([]);
    expect(notGranted(asked, ["atproto", "transition:generic"])).toEqual([]);
    expect(notGranted(asked, ["atproto", "repo:*", "rpc:*"])).toEqual([]);
  });
});

describe("the avatar letter", () => {
  it("comes from the handle, else from the DID", () => {
    expect(initialOf("alice.test", "did:plc:xyz")).toBe("A");
    expect(initialOf(null, "did:plc:xyz")).toBe("X");
    expect(initialOf("", "did:web:")).toBe("?");
  });
});

describe("messages from the shell", () => {
  it("read as sentences", () => {
    expect(sentence("the handle x.test does not resolve")).toBe("The handle x.test does not resolve");
    expect(sentence("")).toBe("");
  });
});
