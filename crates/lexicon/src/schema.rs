//! The lexicon document format (lexicon v1) as Rust types, deserialized with serde.
//!
//! Shared by the runtime validator of `swdesk-lexicon` and by the code generator `swdesk-lexgen`
//! (which includes this very file with `#[path]`, so the two can never disagree on the format and
//! the generator builds even when the generated code is broken). It therefore depends on nothing
//! but `serde`, `serde_json` and `indexmap`, and refers to no other module of the crate.
//!
//! Invariants: every `type` string of the format maps to exactly one variant; a def that is not
//! allowed where it stands (a `ref` as a top-level def, a record whose `record` is not an object)
//! fails to deserialize; properties keep the order in which the document declares them, which is
//! the order validation reports problems in.

use indexmap::IndexMap;
use serde::Deserialize;

/// One lexicon document: `{"lexicon": 1, "id": NSID, "defs": {...}}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LexiconDoc {
    /// The format version; only `1` is defined.
    pub lexicon: u32,
    /// The NSID the document defines.
    pub id: String,
    /// Optional revision number of the document.
    #[serde(default)]
    pub revision: Option<u64>,
    /// What the document is for.
    #[serde(default)]
    pub description: Option<String>,
    /// The named definitions; `main` is the primary one.
    pub defs: IndexMap<String, TopLevelDef>,
}

/// A definition directly under `defs`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum TopLevelDef {
    /// A record type (primary: only `main`).
    Record(Box<RecordDef>),
    /// An XRPC query (primary: only `main`).
    Query(Box<QueryDef>),
    /// An XRPC procedure (primary: only `main`).
    Procedure(Box<ProcedureDef>),
    /// An XRPC subscription (primary: only `main`).
    Subscription(Box<SubscriptionDef>),
    /// A permission set (primary: only `main`).
    PermissionSet(Box<PermissionSetDef>),
    /// A named object schema.
    Object(ObjectSchema),
    /// A named array schema.
    Array(ArraySchema),
    /// A named token: a string constant that names itself.
    Token(TokenSchema),
    /// A named string schema.
    String(StringSchema),
    /// A named integer schema.
    Integer(IntegerSchema),
    /// A named boolean schema.
    Boolean(BooleanSchema),
    /// A named bytes schema.
    Bytes(BytesSchema),
    /// A named cid-link schema.
    CidLink(CidLinkSchema),
    /// A named blob schema.
    Blob(BlobSchema),
}

impl TopLevelDef {
    /// True for the kinds that may only be the `main` def.
    pub fn is_primary(&self) -> bool {
        matches!(
            self,
            Self::Record(_)
                | Self::Query(_)
                | Self::Procedure(_)
                | Self::Subscription(_)
                | Self::PermissionSet(_)
        )
    }
}

/// A schema that can stand as a property, an array item, or a body.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum FieldSchema {
    /// `true` or `false`.
    Boolean(BooleanSchema),
    /// A signed 64-bit integer.
    Integer(IntegerSchema),
    /// A UTF-8 string.
    String(StringSchema),
    /// Raw bytes, `{"$bytes": base64}` in JSON.
    Bytes(BytesSchema),
    /// A CID link, `{"$link": cid}` in JSON.
    CidLink(CidLinkSchema),
    /// A blob reference.
    Blob(BlobSchema),
    /// An array.
    Array(ArraySchema),
    /// An inline object.
    Object(ObjectSchema),
    /// A reference to another def.
    Ref(RefSchema),
    /// One of several object defs, told apart by `$type`.
    Union(UnionSchema),
    /// Any data-model object.
    Unknown(UnknownSchema),
}

/// `type: record`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RecordDef {
    /// What the record is.
    #[serde(default)]
    pub description: Option<String>,
    /// The record key type: `any`, `tid`, `nsid`, `literal:<value>`.
    pub key: String,
    /// The record's schema; always an object.
    pub record: ObjectBody,
}

/// A schema position that must be an object (`{"type": "object", ...}`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ObjectBody {
    /// The only allowed kind.
    Object(ObjectSchema),
}

impl ObjectBody {
    /// The object schema inside.
    pub fn object(&self) -> &ObjectSchema {
        match self {
            Self::Object(object) => object,
        }
    }
}

/// A schema position that must be `params` (query-string parameters).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ParamsBody {
    /// The only allowed kind.
    Params(ParamsSchema),
}

impl ParamsBody {
    /// The params schema inside.
    pub fn params(&self) -> &ParamsSchema {
        match self {
            Self::Params(params) => params,
        }
    }
}

/// `type: query`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct QueryDef {
    /// What the query does.
    #[serde(default)]
    pub description: Option<String>,
    /// Query-string parameters.
    #[serde(default)]
    pub parameters: Option<ParamsBody>,
    /// The response body.
    #[serde(default)]
    pub output: Option<Body>,
    /// Named errors the query can answer with.
    #[serde(default)]
    pub errors: Vec<ErrorDef>,
}

/// `type: procedure`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ProcedureDef {
    /// What the procedure does.
    #[serde(default)]
    pub description: Option<String>,
    /// Query-string parameters.
    #[serde(default)]
    pub parameters: Option<ParamsBody>,
    /// The request body.
    #[serde(default)]
    pub input: Option<Body>,
    /// The response body.
    #[serde(default)]
    pub output: Option<Body>,
    /// Named errors the procedure can answer with.
    #[serde(default)]
    pub errors: Vec<ErrorDef>,
}

/// `type: subscription` (an event stream over WebSocket).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SubscriptionDef {
    /// What the stream carries.
    #[serde(default)]
    pub description: Option<String>,
    /// Query-string parameters of the upgrade request.
    #[serde(default)]
    pub parameters: Option<ParamsBody>,
    /// The schema of each message (a union).
    #[serde(default)]
    pub message: Option<MessageBody>,
    /// Named errors the stream can end with.
    #[serde(default)]
    pub errors: Vec<ErrorDef>,
}

/// `type: permission-set`. Only checked for shape; swdesk defines none.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PermissionSetDef {
    /// Short title shown to the user.
    #[serde(default)]
    pub title: Option<String>,
    /// Longer text shown to the user.
    #[serde(default)]
    pub detail: Option<String>,
    /// The permissions, each `{"type": "permission", "resource": ...}`.
    pub permissions: Vec<serde_json::Map<String, serde_json::Value>>,
}

/// The body of an XRPC request or response.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Body {
    /// What the body holds.
    #[serde(default)]
    pub description: Option<String>,
    /// The MIME type, e.g. `application/json`.
    pub encoding: String,
    /// For JSON bodies: an object, a ref or a union.
    #[serde(default)]
    pub schema: Option<FieldSchema>,
}

/// The message of a subscription.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MessageBody {
    /// What a message is.
    #[serde(default)]
    pub description: Option<String>,
    /// A union of the message kinds.
    pub schema: FieldSchema,
}

/// A named error of an XRPC method.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ErrorDef {
    /// The `error` value of the response body.
    pub name: String,
    /// When the method answers with it.
    #[serde(default)]
    pub description: Option<String>,
}

/// `type: object`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct ObjectSchema {
    /// What the object is.
    #[serde(default)]
    pub description: Option<String>,
    /// Properties that must be present.
    #[serde(default)]
    pub required: Vec<String>,
    /// Properties that may be `null`.
    #[serde(default)]
    pub nullable: Vec<String>,
    /// The declared properties, in document order.
    #[serde(default)]
    pub properties: IndexMap<String, FieldSchema>,
}

/// `type: params`: like an object, restricted to scalar and array properties.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct ParamsSchema {
    /// What the parameters are.
    #[serde(default)]
    pub description: Option<String>,
    /// Parameters that must be present.
    #[serde(default)]
    pub required: Vec<String>,
    /// The declared parameters, in document order.
    #[serde(default)]
    pub properties: IndexMap<String, FieldSchema>,
}

/// `type: boolean`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct BooleanSchema {
    /// What the value means.
    #[serde(default)]
    pub description: Option<String>,
    /// The value assumed when absent.
    #[serde(default)]
    pub default: Option<bool>,
    /// The only allowed value.
    #[serde(default, rename = "const")]
    pub const_value: Option<bool>,
}

/// `type: integer`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct IntegerSchema {
    /// What the value means.
    #[serde(default)]
    pub description: Option<String>,
    /// The value assumed when absent.
    #[serde(default)]
    pub default: Option<i64>,
    /// Smallest allowed value.
    #[serde(default)]
    pub minimum: Option<i64>,
    /// Largest allowed value.
    #[serde(default)]
    pub maximum: Option<i64>,
    /// The closed set of allowed values.
    #[serde(default, rename = "enum")]
    pub enum_values: Option<Vec<i64>>,
    /// The only allowed value.
    #[serde(default, rename = "const")]
    pub const_value: Option<i64>,
}

/// The string formats of the lexicon language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StringFormat {
    /// A handle or a DID.
    AtIdentifier,
    /// An `at://` URI.
    AtUri,
    /// A CID in string form.
    Cid,
    /// An RFC 3339 / ISO 8601 datetime with a timezone.
    Datetime,
    /// A DID.
    Did,
    /// A handle.
    Handle,
    /// A namespaced identifier.
    Nsid,
    /// A timestamp identifier.
    Tid,
    /// A record key.
    RecordKey,
    /// A generic URI.
    Uri,
    /// A BCP 47 language tag.
    Language,
}

impl StringFormat {
    /// The name used in lexicon documents.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AtIdentifier => "at-identifier",
            Self::AtUri => "at-uri",
            Self::Cid => "cid",
            Self::Datetime => "datetime",
            Self::Did => "did",
            Self::Handle => "handle",
            Self::Nsid => "nsid",
            Self::Tid => "tid",
            Self::RecordKey => "record-key",
            Self::Uri => "uri",
            Self::Language => "language",
        }
    }
}

/// `type: string`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringSchema {
    /// What the value means.
    #[serde(default)]
    pub description: Option<String>,
    /// A syntax the value must follow.
    #[serde(default)]
    pub format: Option<StringFormat>,
    /// The value assumed when absent.
    #[serde(default)]
    pub default: Option<String>,
    /// Smallest allowed length in UTF-8 bytes.
    #[serde(default)]
    pub min_length: Option<u64>,
    /// Largest allowed length in UTF-8 bytes.
    #[serde(default)]
    pub max_length: Option<u64>,
    /// Smallest allowed length in grapheme clusters.
    #[serde(default)]
    pub min_graphemes: Option<u64>,
    /// Largest allowed length in grapheme clusters.
    #[serde(default)]
    pub max_graphemes: Option<u64>,
    /// Values with a known meaning; others are allowed.
    #[serde(default)]
    pub known_values: Option<Vec<String>>,
    /// The closed set of allowed values.
    #[serde(default, rename = "enum")]
    pub enum_values: Option<Vec<String>>,
    /// The only allowed value.
    #[serde(default, rename = "const")]
    pub const_value: Option<String>,
}

/// `type: bytes`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BytesSchema {
    /// What the bytes are.
    #[serde(default)]
    pub description: Option<String>,
    /// Smallest allowed length in bytes.
    #[serde(default)]
    pub min_length: Option<u64>,
    /// Largest allowed length in bytes.
    #[serde(default)]
    pub max_length: Option<u64>,
}

/// `type: cid-link`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct CidLinkSchema {
    /// What the link points at.
    #[serde(default)]
    pub description: Option<String>,
}

/// `type: blob`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobSchema {
    /// What the blob is.
    #[serde(default)]
    pub description: Option<String>,
    /// Allowed MIME types; `type/*` matches a whole type, `*/*` anything.
    #[serde(default)]
    pub accept: Option<Vec<String>>,
    /// Largest allowed size in bytes.
    #[serde(default)]
    pub max_size: Option<u64>,
}

/// `type: array`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArraySchema {
    /// What the array holds.
    #[serde(default)]
    pub description: Option<String>,
    /// The schema of every element.
    pub items: Box<FieldSchema>,
    /// Fewest allowed elements.
    #[serde(default)]
    pub min_length: Option<u64>,
    /// Most allowed elements.
    #[serde(default)]
    pub max_length: Option<u64>,
}

/// `type: ref`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RefSchema {
    /// What the referenced value is, here.
    #[serde(default)]
    pub description: Option<String>,
    /// `#name` (same document), `nsid#name`, or `nsid` (its `main`).
    #[serde(rename = "ref")]
    pub target: String,
}

/// `type: union`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct UnionSchema {
    /// What the value is.
    #[serde(default)]
    pub description: Option<String>,
    /// The allowed object defs, as refs.
    pub refs: Vec<String>,
    /// True: a `$type` outside `refs` is refused; false: it is accepted unchecked.
    #[serde(default)]
    pub closed: Option<bool>,
}

/// `type: unknown`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct UnknownSchema {
    /// What the value is.
    #[serde(default)]
    pub description: Option<String>,
}

/// `type: token`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct TokenSchema {
    /// What the token means.
    #[serde(default)]
    pub description: Option<String>,
}

/// Resolves a ref as written inside document `base_nsid` to `(nsid, def name)`.
///
/// `#name` -> `(base_nsid, name)`, `nsid#name` -> `(nsid, name)`, `nsid` -> `(nsid, "main")`.
pub fn resolve_ref<'a>(base_nsid: &'a str, target: &'a str) -> (&'a str, &'a str) {
    match target.split_once('#') {
        Some(("", name)) => (base_nsid, name),
        Some((nsid, name)) => (nsid, name),
        None => (target, "main"),
    }
}
