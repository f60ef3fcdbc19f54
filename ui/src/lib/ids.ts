// Identifiers as people read them: an at:// URI, a CID or a DID cut to a short form that still
// tells one from another (the full value goes in the tooltip and on the clipboard), and what
// kind of identifier it is, for the copy button's label. Pure functions, unit tested; ShortId
// and Person only render what these return.

/** What kind of identifier a value is. */
export type IdKind = "uri" | "cid" | "did" | "text";

/** The kind of `value`: an at:// URI, a CID (`bafy…`, `bafk…`), a DID, or other text. */
export function idKind(value: string): IdKind {
  if (value.startsWith("at://")) return "uri";
  if (value.startsWith("did:")) return "did";
  if (/^baf[a-z2-7]{20,}$/.test(value)) return "cid";
  return "text";
}

/** The words for a kind, as the copy button names what it copies. */
export function kindLabel(kind: IdKind): string {
  return { uri: "record URI", cid: "content ID", did: "DID", text: "value" }[kind];
}

/** `head…tail` of `text` when it is longer than `head + tail + 1` characters. */
function middleCut(text: string, head: number, tail: number): string {
  const chars = [...text];
  if (chars.length <= head + tail + 1) return text;
  return `${chars.slice(0, head).join("")}…${chars.slice(-tail).join("")}`;
}

/** A DID with its method kept and its identifier cut: `did:plc:abcd…wxyz`; a `did:web` keeps
 * its host whole up to 25 characters (a name people read, not a hash). */
function shortDid(did: string): string {
  const method = /^did:[a-z]+:/.exec(did)?.[0] ?? "";
  const id = did.slice(method.length);
  return `${method}${method === "did:web:" ? middleCut(id, 12, 12) : middleCut(id, 4, 4)}`;
}

/** An at:// URI as `at://did:plc:abcd…wxyz/receipt/3lxyz…`: the authority cut, the
 * collection by its last segment, the record key cut. */
function shortUri(uri: string): string {
  const [authority = "", collection, ...rest] = uri.slice("at://".length).split("/");
  const who = authority.startsWith("did:") ? shortDid(authority) : middleCut(authority, 12, 6);
  if (!collection) return `at://${who}`;
  const nsidTail = collection.split(".").at(-1) ?? collection;
  const rkey = rest.join("/");
  return `at://${who}/${nsidTail}${rkey ? `/${middleCut(rkey, 8, 4)}` : ""}`;
}

/** The short form of `value` by its kind: a URI, a CID (`bafyrei…k3x7qa`), a DID; other text
 * cut in the middle past 24 characters. */
export function shortId(value: string): string {
  switch (idKind(value)) {
    case "uri":
      return shortUri(value);
    case "did":
      return shortDid(value);
    case "cid":
      return middleCut(value, 7, 6);
    default:
      return middleCut(value, 14, 8);
  }
}
