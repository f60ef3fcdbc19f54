import { describe, expect, it } from "vitest";
import {
  asOfLine,
  kubeconfigDrift,
  expiryLine,
  clusterTone,
  clusterWaitingFor,
  deleteConfirmed,
  revokeConfirmation,
  offersRevoke,
  diffLines,
  exportLine,
  jobToFollow,
  kubeconfigPath,
  nodeWaitingFor,
  ttlProblem,
} from "./clusters";

describe("cluster phases", () => {
  it("shows Initializing and Draining as waiting, with what for", () => {
    expect(clusterTone("Ready")).toBe("steady");
    expect(clusterTone("Initializing")).toBe("waiting");
    expect(clusterWaitingFor("Initializing")).toMatch(/control plane/);
    expect(clusterWaitingFor("Draining")).toMatch(/nodes/);
    expect(clusterWaitingFor("Ready")).toBeUndefined();
    expect(nodeWaitingFor(null)).toMatch(/contract/);
    expect(nodeWaitingFor("Ready")).toBeUndefined();
  });
});

describe("the kubeconfig", () => {
  it("allows lifetimes of 60 s to 24 h only", () => {
    expect(ttlProblem(60)).toBeUndefined();
    expect(ttlProblem(86_400)).toBeUndefined();
    expect(ttlProblem(59)).toMatch(/At least 60/);
    expect(ttlProblem(86_401)).toMatch(/At most/);
    expect(ttlProblem(1.5)).toMatch(/whole/);
  });

  it("names a file per cluster and quotes it for the shell", () => {
    expect(kubeconfigPath("/home/ada/.kube/", "dev")).toBe("/home/ada/.kube/socialweb-dev.yaml");
    expect(kubeconfigPath("C:\\Users\\ada\\.kube", "dev")).toBe("C:\\Users\\ada\\.kube\\socialweb-dev.yaml");
    expect(exportLine("/tmp/it's here.yaml")).toBe("export KUBECONFIG='/tmp/it'\\''s here.yaml'");
  });
});

describe("a saved kubeconfig's expiry", () => {
  it("reads as never, a countdown, or expired", () => {
    const now = Date.parse("2026-12-05T10:00:00Z");
    expect(expiryLine(null, now)).toBe("Never expires.");
    expect(expiryLine("2026-12-05T11:30:00Z", now)).toBe("Expires in 1 h 30 min.");
    expect(expiryLine("2026-12-05T09:59:00Z", now)).toBe("Expired.");
  });
});

describe("the dry run", () => {
  it("diffs what was sent against what the server would store", () => {
    const lines = diffLines('{\n  "a": 1\n}', '{\n  "a": 1,\n  "uid": "x"\n}');
    expect(lines.filter((line) => line.kind !== "same")).toEqual([
      { kind: "removed", text: '  "a": 1' },
      { kind: "added", text: '  "a": 1,' },
      { kind: "added", text: '  "uid": "x"' },
    ]);
    expect(diffLines("same", "same")).toEqual([{ kind: "same", text: "same" }]);
  });

  it("follows a Job after applying it, and nothing else", () => {
    expect(jobToFollow('{"kind": "Job", "metadata": {"name": "hello"}}')).toEqual({ namespace: "default", name: "hello" });
    expect(jobToFollow('{"kind": "ConfigMap", "metadata": {"name": "x"}}')).toBeUndefined();
    expect(jobToFollow("not json")).toBeUndefined();
  });
});

describe("deleting a cluster", () => {
  it("needs its exact name typed", () => {
    expect(deleteConfirmed("dev", "dev")).toBe(true);
    expect(deleteConfirmed("dev", " dev ")).toBe(true);
    expect(deleteConfirmed("dev", "de")).toBe(false);
  });
});

describe("revoking a member", () => {
  const member = { did: "did:plc:alice", name: "owner-1a2b" };

  it("says whose grants end and that their kubeconfigs stop working", () => {
    const { title, message } = revokeConfirmation("dev", member);
    expect(title).toBe("Revoke owner-1a2b?");
    expect(message).toContain("owner-1a2b (did:plc:alice)");
    expect(message).toContain("kubeconfigs issued to it stop working");
    expect(message).not.toContain("This is you");
  });

  it("names a member by its verified handle first", () => {
    const named = revokeConfirmation("dev", { did: "did:plc:bob", name: "member-9f", handle: "bob.test" });
    expect(named.title).toBe("Revoke @bob.test?");
    expect(named.message).toMatch(/^@bob\.test \(member-9f, did:plc:bob\)\. Every grant it holds on dev/);
  });

  it("never offers the signed-in owner to revoke themself", () => {
    expect(offersRevoke({ did: "did:plc:alice", name: "owner-1a2b", you: true })).toBe(false);
    expect(offersRevoke({ did: "did:plc:bob", name: null, you: false })).toBe(true);
    expect(offersRevoke({ did: "did:plc:bob", name: null })).toBe(true);
  });

  it("names a member without a name by its DID", () => {
    expect(revokeConfirmation("dev", { did: "did:plc:bob", name: null }).title).toBe("Revoke did:plc:bob?");
  });
});

describe("kubeconfig drift", () => {
  it("badges a listed cluster by its latest kubeconfig and lists gone clusters' files", () => {
    const kept = [
      { cluster: "dev", saved: { path: "/k/dev-old" }, problem: "its certificate has expired" },
      { cluster: "dev", saved: { path: "/k/dev" }, problem: null },
      { cluster: "prod", saved: { path: "/k/prod" }, problem: "its certificate has expired" },
      { cluster: "gone", saved: { path: "/k/gone" }, problem: "its cluster no longer exists" },
    ];
    const { byCluster, orphans } = kubeconfigDrift(kept, ["dev", "prod"]);
    expect([...byCluster]).toEqual([["prod", "its certificate has expired"]]);
    expect(orphans.map((entry) => entry.saved.path)).toEqual(["/k/gone"]);
  });
});

describe("clusters seen earlier", () => {
  it("says when they were last seen live, with the date when it was another day", () => {
    const seen = new Date(2026, 11, 5, 14, 2).toISOString();
    const later = new Date(2026, 11, 5, 16, 30).getTime();
    expect(asOfLine(seen, "reconnecting", later)).toBe("as of 14:02, the gateway is unreachable");
    expect(asOfLine(seen, "connecting", later)).toBe("as of 14:02, connecting to the gateway");
    const nextDay = new Date(2026, 11, 6, 9, 0).getTime();
    expect(asOfLine(seen, "failed", nextDay)).toBe("as of 2026-12-05 14:02, the gateway is unreachable");
  });
});
