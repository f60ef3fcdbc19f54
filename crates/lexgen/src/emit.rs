//! The Rust items of one lexicon's module.
//!
//! Conventions (the contract with `swdesk-lexicon`, whose macros and traits the items use):
//! - an object (and a record's object) becomes a struct with `rename_all = "camelCase"`, its
//!   optional fields `Option<T>` skipped when `None`, and a `#[serde(flatten)] extra` map that
//!   keeps unknown fields; params structs have no `extra`;
//! - a string with `knownValues` becomes an open enum (`crate::macros::open_string_enum!`, with an
//!   `Other(String)` fallback), one with `enum` a closed one; inline ones are named
//!   `<Owner><Field>`;
//! - a union becomes an enum tagged by `$type` (`crate::macros::{open_union, closed_union}!`);
//! - `bytes` becomes `crate::Bytes` (`{"$bytes": base64}` in JSON); an object def named `main` is
//!   named after its NSID's last segment, as a record is (`network.attested.signature` ->
//!   `Signature`);
//! - a field listed in `SENSITIVE_FIELDS` (a credential) is wrapped in `crate::Redacted`;
//! - a record gets `impl crate::Record`, an XRPC method a unit struct implementing
//!   `crate::xrpc::{Query, Procedure, Subscription}` with `Params`/`Input`/`Output`/`Message`
//!   types and an `Error` enum of its declared errors.
//!
//! Invariants: items come out in the lexicon's def order (and, within a def, field order), so the
//! output is deterministic; a name generated twice in one module is an error, never a silent
//! shadow; a ref that resolves to nothing is an error.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::LexgenError;
use crate::load::LoadedLexicon;
use crate::names::{field_ident, needs_serde_rename, screaming_snake_case, snake_case, type_ident};
use crate::schema::{
    Body, ErrorDef, FieldSchema, LexiconDoc, ObjectSchema, ParamsBody, StringSchema, TopLevelDef,
    UnionSchema, resolve_ref,
};

/// Fields that carry a credential, by `nsid#def.field` location: their Rust type is wrapped in
/// `crate::Redacted`, so `Debug` never prints them. Lexicons have no marker for this, so the
/// list lives here.
const SENSITIVE_FIELDS: &[&str] =
    &["com.publicdomainrelay.temp.cluster.getKubeconfig#main.output.kubeconfig"];

/// All lexicons, by NSID: what refs resolve against.
pub type Catalog = BTreeMap<String, LoadedLexicon>;

/// The items of the module generated for `nsid`.
pub fn lexicon_items(catalog: &Catalog, nsid: &str) -> Result<TokenStream, LexgenError> {
    let lexicon = catalog
        .get(nsid)
        .ok_or_else(|| LexgenError::UnresolvedRef {
            location: nsid.to_owned(),
            target: nsid.to_owned(),
        })?;
    let mut emitter = Emitter {
        catalog,
        doc: &lexicon.doc,
        items: Vec::new(),
        names: BTreeSet::new(),
    };
    emitter.emit_nsid_const();
    for (def_name, def) in &lexicon.doc.defs {
        emitter.emit_def(def_name, def)?;
    }
    let items = emitter.items;
    Ok(quote! { #(#items)* })
}

/// The Rust module path of an NSID below `crate::generated`.
pub fn module_path(nsid: &str) -> Result<Vec<Ident>, LexgenError> {
    nsid.split('.').map(field_ident).collect()
}

/// The type name of an XRPC method's or a record's main def: the NSID's last segment.
fn main_type_name(nsid: &str) -> &str {
    nsid.rsplit('.').next().unwrap_or(nsid)
}

/// Which object-like shape a struct is generated from.
struct Shape<'s> {
    description: Option<&'s str>,
    required: &'s [String],
    nullable: &'s [String],
    properties: &'s indexmap::IndexMap<String, FieldSchema>,
    keeps_unknown_fields: bool,
}

/// How a union writes `$type`.
#[derive(Clone, Copy)]
enum TagStyle {
    /// As the lexicon writes the ref (`#cluster`): subscription frames name their type so.
    AsWritten,
    /// The full `nsid#name` (`nsid` for a main def), as records carry it.
    Full,
}

struct Emitter<'a> {
    catalog: &'a Catalog,
    doc: &'a LexiconDoc,
    items: Vec<TokenStream>,
    names: BTreeSet<String>,
}

impl Emitter<'_> {
    fn nsid(&self) -> &str {
        &self.doc.id
    }

    fn location(&self, def: &str) -> String {
        format!("{}#{def}", self.nsid())
    }

    fn claim(&mut self, name: &str) -> Result<Ident, LexgenError> {
        if !self.names.insert(name.to_owned()) {
            return Err(LexgenError::NameCollision {
                location: self.nsid().to_owned(),
                name: name.to_owned(),
            });
        }
        type_ident(name)
    }

    fn emit_nsid_const(&mut self) {
        let nsid = self.nsid();
        let doc = format!(" The NSID `{nsid}`.");
        self.items.push(quote! {
            #[doc = #doc]
            pub const NSID: &str = #nsid;
        });
    }

    fn emit_def(&mut self, def_name: &str, def: &TopLevelDef) -> Result<(), LexgenError> {
        let location = self.location(def_name);
        match def {
            TopLevelDef::Record(record) => {
                let shape = object_shape(record.record.object(), record.description.as_deref());
                let name = pascal_main(self.nsid());
                let ident = self.emit_struct(&name, &location, &shape)?;
                self.items.push(quote! {
                    impl crate::Record for #ident {
                        const NSID: &'static str = NSID;
                    }
                });
                Ok(())
            }
            TopLevelDef::Query(query) => self.emit_method(
                MethodKind::Query,
                query.description.as_deref(),
                query.parameters.as_ref(),
                [None, query.output.as_ref()],
                &query.errors,
            ),
            TopLevelDef::Procedure(procedure) => self.emit_method(
                MethodKind::Procedure,
                procedure.description.as_deref(),
                procedure.parameters.as_ref(),
                [procedure.input.as_ref(), procedure.output.as_ref()],
                &procedure.errors,
            ),
            TopLevelDef::Subscription(subscription) => self.emit_subscription(subscription),
            TopLevelDef::Object(object) => {
                let shape = object_shape(object, object.description.as_deref());
                self.emit_struct(&object_type_name(self.nsid(), def_name), &location, &shape)
                    .map(drop)
            }
            TopLevelDef::String(string) => self.emit_named_string(def_name, &location, string),
            TopLevelDef::Token(token) => {
                let ident = Ident::new(&screaming_snake_case(def_name), Span::call_site());
                let value = location.clone();
                let doc = doc_text(token.description.as_deref(), &location);
                self.items.push(quote! {
                    #doc
                    pub const #ident: &str = #value;
                });
                Ok(())
            }
            TopLevelDef::Integer(schema) => self.emit_alias(
                def_name,
                &location,
                schema.description.as_deref(),
                quote!(i64),
            ),
            TopLevelDef::Boolean(schema) => self.emit_alias(
                def_name,
                &location,
                schema.description.as_deref(),
                quote!(bool),
            ),
            TopLevelDef::Array(array) => {
                let owner = crate::names::pascal_case(def_name);
                let item = self.field_type(&owner, "item", &location, &array.items)?;
                let ty = quote!(Vec<#item>);
                self.emit_alias(def_name, &location, array.description.as_deref(), ty)
            }
            TopLevelDef::PermissionSet(_)
            | TopLevelDef::Bytes(_)
            | TopLevelDef::CidLink(_)
            | TopLevelDef::Blob(_) => Err(unsupported(&location, "this def type")),
        }
    }

    fn emit_alias(
        &mut self,
        def_name: &str,
        location: &str,
        description: Option<&str>,
        ty: TokenStream,
    ) -> Result<(), LexgenError> {
        let ident = self.claim(&crate::names::pascal_case(def_name))?;
        let doc = doc_text(description, location);
        self.items.push(quote! {
            #doc
            pub type #ident = #ty;
        });
        Ok(())
    }

    fn emit_named_string(
        &mut self,
        def_name: &str,
        location: &str,
        schema: &StringSchema,
    ) -> Result<(), LexgenError> {
        let name = crate::names::pascal_case(def_name);
        if has_value_set(schema) {
            return self.emit_string_enum(&name, location, schema).map(drop);
        }
        self.emit_alias(
            def_name,
            location,
            schema.description.as_deref(),
            quote!(String),
        )
    }

    fn emit_struct(
        &mut self,
        name: &str,
        location: &str,
        shape: &Shape<'_>,
    ) -> Result<Ident, LexgenError> {
        let ident = self.claim(name)?;
        let mut fields = Vec::new();
        let mut accessors = Vec::new();
        for (field_name, schema) in shape.properties {
            let field_location = format!("{location}.{field_name}");
            if shape.nullable.contains(field_name) {
                return Err(unsupported(&field_location, "nullable"));
            }
            let mut ty = self.field_type(name, field_name, &field_location, schema)?;
            let sensitive = SENSITIVE_FIELDS.contains(&field_location.as_str());
            if sensitive {
                ty = quote!(crate::Redacted<#ty>);
            }
            let required = shape.required.contains(field_name);
            fields.push(struct_field(field_name, schema, &ty, required)?);
            if !required && !sensitive {
                accessors.extend(default_accessor(field_name, schema, &ty)?);
            }
        }
        if shape.keeps_unknown_fields {
            fields.push(quote! {
                #[doc = " Fields this version does not know: kept, so a read-modify-write loses nothing."]
                #[serde(flatten)]
                pub extra: serde_json::Map<String, serde_json::Value>,
            });
        }
        let doc = doc_text(shape.description, location);
        // A required union has no sensible default value.
        let has_required_union = shape.properties.iter().any(|(field_name, schema)| {
            shape.required.contains(field_name) && matches!(schema, FieldSchema::Union(_))
        });
        let derive_default = (!has_required_union).then(|| quote!(Default,));
        self.items.push(quote! {
            #doc
            #[derive(Debug, Clone, PartialEq, #derive_default serde::Serialize, serde::Deserialize)]
            #[serde(rename_all = "camelCase")]
            pub struct #ident {
                #(#fields)*
            }
        });
        if !accessors.is_empty() {
            self.items.push(quote! {
                impl #ident {
                    #(#accessors)*
                }
            });
        }
        Ok(ident)
    }

    fn field_type(
        &mut self,
        owner: &str,
        field: &str,
        location: &str,
        schema: &FieldSchema,
    ) -> Result<TokenStream, LexgenError> {
        let inline_name = format!("{owner}{}", crate::names::pascal_case(field));
        match schema {
            FieldSchema::Boolean(_) => Ok(quote!(bool)),
            FieldSchema::Integer(_) => Ok(quote!(i64)),
            FieldSchema::String(string) if has_value_set(string) => {
                let ident = self.emit_string_enum(&inline_name, location, string)?;
                Ok(quote!(#ident))
            }
            FieldSchema::String(_) => Ok(quote!(String)),
            FieldSchema::Unknown(_) => Ok(quote!(serde_json::Map<String, serde_json::Value>)),
            FieldSchema::Array(array) => {
                let item = self.field_type(&inline_name, "item", location, &array.items)?;
                Ok(quote!(Vec<#item>))
            }
            FieldSchema::Object(object) => {
                let shape = object_shape(object, object.description.as_deref());
                let ident = self.emit_struct(&inline_name, location, &shape)?;
                Ok(quote!(#ident))
            }
            FieldSchema::Ref(reference) => self.ref_type(location, &reference.target),
            FieldSchema::Union(union) => {
                let ident = self.emit_union(&inline_name, location, union, TagStyle::Full)?;
                Ok(quote!(#ident))
            }
            FieldSchema::Bytes(_) => Ok(quote!(crate::Bytes)),
            FieldSchema::CidLink(_) => Err(unsupported(location, "cid-link")),
            FieldSchema::Blob(_) => Err(unsupported(location, "blob")),
        }
    }

    /// The Rust type a ref names, as a path from this module.
    fn ref_type(&self, location: &str, target: &str) -> Result<TokenStream, LexgenError> {
        let (nsid, def_name) = resolve_ref(self.nsid(), target);
        let unresolved = || LexgenError::UnresolvedRef {
            location: location.to_owned(),
            target: target.to_owned(),
        };
        let def = self
            .catalog
            .get(nsid)
            .and_then(|lexicon| lexicon.doc.defs.get(def_name))
            .ok_or_else(unresolved)?;
        let type_name = match def {
            TopLevelDef::Record(_) => pascal_main(nsid),
            TopLevelDef::Token(_) => return Ok(quote!(String)),
            TopLevelDef::Object(_) => object_type_name(nsid, def_name),
            TopLevelDef::String(_)
            | TopLevelDef::Integer(_)
            | TopLevelDef::Boolean(_)
            | TopLevelDef::Array(_) => crate::names::pascal_case(def_name),
            _ => return Err(unsupported(location, "a ref to this def type")),
        };
        let ident = type_ident(&type_name)?;
        if nsid == self.nsid() {
            return Ok(quote!(#ident));
        }
        let path = module_path(nsid)?;
        Ok(quote!(crate::generated #(:: #path)* :: #ident))
    }

    fn emit_string_enum(
        &mut self,
        name: &str,
        location: &str,
        schema: &StringSchema,
    ) -> Result<Ident, LexgenError> {
        let (values, open) = match (&schema.known_values, &schema.enum_values) {
            (_, Some(closed)) => (closed, false),
            (Some(known), None) => (known, true),
            (None, None) => return Err(unsupported(location, "a string enum without values")),
        };
        let docs: Vec<String> = values.iter().map(|value| format!(" `{value}`")).collect();
        let default = schema
            .default
            .as_ref()
            .and_then(|default| values.iter().position(|value| value == default))
            .or(Some(0));
        let doc = doc_text(schema.description.as_deref(), location);
        self.emit_value_enum(
            name,
            location,
            doc,
            ValueSet {
                values,
                docs,
                open,
                default,
            },
        )
    }

    /// An enum of string values and its serde impls (`crate::{open,closed}_string_enum!`).
    fn emit_value_enum(
        &mut self,
        name: &str,
        location: &str,
        doc: TokenStream,
        set: ValueSet<'_>,
    ) -> Result<Ident, LexgenError> {
        let ident = self.claim(name)?;
        let variants = variant_idents(location, set.values, set.open)?;
        let values = set.values;
        let docs = &set.docs;
        let derive_default = set.default.map(|_| quote!(Default,));
        let fallback = set.open.then(|| {
            quote! {
                #[doc = " A value this version does not know, kept as written."]
                Other(String),
            }
        });
        let default_attrs =
            (0..variants.len()).map(|i| (set.default == Some(i)).then(|| quote!(#[default])));
        let macro_name = if set.open {
            quote!(open_string_enum)
        } else {
            quote!(closed_string_enum)
        };
        self.items.push(quote! {
            #doc
            #[derive(Debug, Clone, PartialEq, Eq, Hash, #derive_default)]
            pub enum #ident {
                #( #[doc = #docs] #default_attrs #variants, )*
                #fallback
            }
            crate::macros::#macro_name!(#ident { #( #variants = #values ),* });
        });
        Ok(ident)
    }

    fn emit_union(
        &mut self,
        name: &str,
        location: &str,
        union: &UnionSchema,
        style: TagStyle,
    ) -> Result<Ident, LexgenError> {
        let ident = self.claim(name)?;
        let mut variants = Vec::new();
        let mut tag_lists = Vec::new();
        for target in &union.refs {
            let (variant, tags) = self.union_variant(location, target, style)?;
            variants.push(variant);
            tag_lists.push(tags);
        }
        let names: Vec<TokenStream> = tag_lists.iter().map(|(name, _)| name.clone()).collect();
        let tags: Vec<TokenStream> = tag_lists.into_iter().map(|(_, tags)| tags).collect();
        let closed = union.closed.unwrap_or(false);
        let (fallback, macro_name) = if closed {
            (quote!(), quote!(closed_union))
        } else {
            let fallback = quote! {
                #[doc = " An object of a `$type` this version does not know, kept as received."]
                Other(serde_json::Map<String, serde_json::Value>),
            };
            (fallback, quote!(open_union))
        };
        let doc = doc_text(union.description.as_deref(), location);
        self.items.push(quote! {
            #doc
            #[derive(Debug, Clone, PartialEq)]
            pub enum #ident {
                #(#variants)*
                #fallback
            }
            crate::macros::#macro_name!(#ident { #( #names = #tags ),* });
        });
        Ok(ident)
    }

    /// The variant declaration, and (variant name, `"written" | "accepted"...` tags).
    fn union_variant(
        &self,
        location: &str,
        target: &str,
        style: TagStyle,
    ) -> Result<(TokenStream, (TokenStream, TokenStream)), LexgenError> {
        let (nsid, def_name) = resolve_ref(self.nsid(), target);
        let (full, variant_name) = if def_name == "main" {
            (nsid.to_owned(), pascal_main(nsid))
        } else {
            (
                format!("{nsid}#{def_name}"),
                crate::names::pascal_case(def_name),
            )
        };
        let variant = type_ident(&variant_name)?;
        let ty = self.ref_type(location, target)?;
        let mut tags = vec![full.clone()];
        if target.starts_with('#') {
            tags.push(target.to_owned());
        }
        if let TagStyle::AsWritten = style {
            tags.reverse();
        }
        let doc = format!(" `$type` `{full}`.");
        let declaration = quote! {
            #[doc = #doc]
            #variant(#ty),
        };
        Ok((declaration, (quote!(#variant), quote!(#(#tags)|*))))
    }

    fn emit_method(
        &mut self,
        kind: MethodKind,
        description: Option<&str>,
        parameters: Option<&ParamsBody>,
        [input, output]: [Option<&Body>; 2],
        errors: &[ErrorDef],
    ) -> Result<(), LexgenError> {
        let params = self.emit_params(parameters)?;
        let input = self.emit_body("Input", input)?;
        let output = self.emit_body("Output", output)?;
        let error = self.emit_errors(errors)?;
        let ident = self.emit_method_struct(description)?;
        let input_line = match kind {
            MethodKind::Query => quote!(),
            MethodKind::Procedure => quote!(type Input = #input;),
        };
        let trait_name = match kind {
            MethodKind::Query => quote!(Query),
            MethodKind::Procedure => quote!(Procedure),
        };
        self.items.push(quote! {
            impl crate::xrpc::#trait_name for #ident {
                const NSID: &'static str = NSID;
                type Params = #params;
                #input_line
                type Output = #output;
                type Error = #error;
            }
        });
        Ok(())
    }

    fn emit_subscription(
        &mut self,
        subscription: &crate::schema::SubscriptionDef,
    ) -> Result<(), LexgenError> {
        let location = self.location("main");
        let params = self.emit_params(subscription.parameters.as_ref())?;
        let message = match subscription.message.as_ref().map(|message| &message.schema) {
            Some(FieldSchema::Union(union)) => {
                let ident = self.emit_union("Message", &location, union, TagStyle::AsWritten)?;
                quote!(#ident)
            }
            _ => {
                return Err(unsupported(
                    &location,
                    "a subscription message that is not a union",
                ));
            }
        };
        let error = self.emit_errors(&subscription.errors)?;
        let ident = self.emit_method_struct(subscription.description.as_deref())?;
        self.items.push(quote! {
            impl crate::xrpc::Subscription for #ident {
                const NSID: &'static str = NSID;
                type Params = #params;
                type Message = #message;
                type Error = #error;
            }
        });
        Ok(())
    }

    fn emit_method_struct(&mut self, description: Option<&str>) -> Result<Ident, LexgenError> {
        let location = self.location("main");
        let ident = self.claim(&pascal_main(self.nsid()))?;
        let doc = doc_text(description, &location);
        self.items.push(quote! {
            #doc
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
            pub struct #ident;
        });
        Ok(ident)
    }

    fn emit_params(&mut self, parameters: Option<&ParamsBody>) -> Result<TokenStream, LexgenError> {
        let Some(parameters) = parameters else {
            return Ok(quote!(()));
        };
        let params = parameters.params();
        let shape = Shape {
            description: params
                .description
                .as_deref()
                .or(Some("Query-string parameters.")),
            required: &params.required,
            nullable: &[],
            properties: &params.properties,
            keeps_unknown_fields: false,
        };
        let ident = self.emit_struct("Params", &self.location("main.parameters"), &shape)?;
        Ok(quote!(#ident))
    }

    fn emit_body(&mut self, name: &str, body: Option<&Body>) -> Result<TokenStream, LexgenError> {
        let location = self.location(&format!("main.{}", snake_case(name)));
        let Some(body) = body else {
            return Ok(quote!(()));
        };
        let description = body.description.as_deref();
        match &body.schema {
            Some(FieldSchema::Object(object)) => {
                let shape = object_shape(object, object.description.as_deref().or(description));
                let ident = self.emit_struct(name, &location, &shape)?;
                Ok(quote!(#ident))
            }
            Some(FieldSchema::Ref(reference)) => {
                let ty = self.ref_type(&location, &reference.target)?;
                let ident = self.claim(name)?;
                let doc = doc_text(description, &location);
                self.items.push(quote! {
                    #doc
                    pub type #ident = #ty;
                });
                Ok(quote!(#ident))
            }
            Some(FieldSchema::Union(union)) => {
                let ident = self.emit_union(name, &location, union, TagStyle::Full)?;
                Ok(quote!(#ident))
            }
            _ => Err(unsupported(
                &location,
                "a body that is not a JSON object, ref or union",
            )),
        }
    }

    fn emit_errors(&mut self, errors: &[ErrorDef]) -> Result<TokenStream, LexgenError> {
        if errors.is_empty() {
            return Ok(quote!(crate::xrpc::UndeclaredError));
        }
        let location = self.location("main.errors");
        let values: Vec<String> = errors.iter().map(|error| error.name.clone()).collect();
        let docs = errors
            .iter()
            .map(|error| {
                let text = doc_escape(error.description.as_deref().unwrap_or("(no description)"));
                format!(" `{}`: {text}", error.name)
            })
            .collect();
        let doc = quote!(#[doc = " The errors the method declares, by the `error` name of the response body."]);
        let set = ValueSet {
            values: &values,
            docs,
            open: true,
            default: None,
        };
        let ident = self.emit_value_enum("Error", &location, doc, set)?;
        self.items
            .push(quote!(impl std::error::Error for #ident {}));
        Ok(quote!(#ident))
    }
}

/// The values of a string enum and how they are generated.
struct ValueSet<'v> {
    values: &'v [String],
    docs: Vec<String>,
    /// Open: an `Other(String)` variant takes unknown values.
    open: bool,
    /// The index of the `#[default]` variant, if the enum has one.
    default: Option<usize>,
}

#[derive(Clone, Copy)]
enum MethodKind {
    Query,
    Procedure,
}

fn object_shape<'s>(object: &'s ObjectSchema, description: Option<&'s str>) -> Shape<'s> {
    Shape {
        description,
        required: &object.required,
        nullable: &object.nullable,
        properties: &object.properties,
        keeps_unknown_fields: true,
    }
}

fn pascal_main(nsid: &str) -> String {
    crate::names::pascal_case(main_type_name(nsid))
}

/// The struct name of an object def: a `main` object is named after its NSID, as a record is
/// (`network.attested.signature` -> `Signature`), any other def after itself.
fn object_type_name(nsid: &str, def_name: &str) -> String {
    if def_name == "main" {
        pascal_main(nsid)
    } else {
        crate::names::pascal_case(def_name)
    }
}

fn has_value_set(schema: &StringSchema) -> bool {
    schema.known_values.is_some() || schema.enum_values.is_some()
}

fn unsupported(location: &str, what: &str) -> LexgenError {
    LexgenError::Unsupported {
        location: location.to_owned(),
        what: what.to_owned(),
    }
}

/// Lexicon prose as rustdoc Markdown: `<` would open an HTML tag, so it is escaped.
pub fn doc_escape(text: &str) -> String {
    text.replace('<', "\\<")
}

/// `#[doc]` attributes, one a line: the description, then where it comes from.
fn doc_text(description: Option<&str>, location: &str) -> TokenStream {
    let source = format!(" Lexicon: `{location}`.");
    let lines: Vec<String> = match description {
        Some(text) => vec![format!(" {}", doc_escape(text)), String::new(), source],
        None => vec![source],
    };
    quote!(#(#[doc = #lines])*)
}

/// One variant identifier per value: the value's last `.`-segment in PascalCase.
fn variant_idents(
    location: &str,
    values: &[String],
    open: bool,
) -> Result<Vec<Ident>, LexgenError> {
    let mut seen = BTreeSet::new();
    if open {
        seen.insert("Other".to_owned());
    }
    let mut idents = Vec::with_capacity(values.len());
    for value in values {
        let label = value.rsplit('.').next().unwrap_or(value);
        let ident = type_ident(label)?;
        if !seen.insert(ident.to_string()) {
            return Err(LexgenError::NameCollision {
                location: location.to_owned(),
                name: ident.to_string(),
            });
        }
        idents.push(ident);
    }
    Ok(idents)
}

fn struct_field(
    name: &str,
    schema: &FieldSchema,
    ty: &TokenStream,
    required: bool,
) -> Result<TokenStream, LexgenError> {
    let ident = field_ident(name)?;
    let doc = field_doc(schema);
    let rename = if needs_serde_rename(name) {
        quote!(#[serde(rename = #name)])
    } else {
        quote!()
    };
    Ok(if required {
        quote! { #[doc = #doc] #rename pub #ident: #ty, }
    } else {
        quote! {
            #[doc = #doc]
            #[serde(skip_serializing_if = "Option::is_none")]
            #rename
            pub #ident: Option<#ty>,
        }
    })
}

fn field_doc(schema: &FieldSchema) -> String {
    let mut doc = format!(
        " {}",
        doc_escape(schema_description(schema).unwrap_or("(no description)"))
    );
    if let FieldSchema::String(StringSchema {
        format: Some(format),
        ..
    }) = schema
    {
        doc.push_str(&format!(" Format: `{}`.", format.as_str()));
    }
    if let Some(default) = default_literal(schema) {
        doc.push_str(&format!(" Default: `{default}`."));
    }
    doc
}

fn schema_description(schema: &FieldSchema) -> Option<&str> {
    match schema {
        FieldSchema::Boolean(s) => s.description.as_deref(),
        FieldSchema::Integer(s) => s.description.as_deref(),
        FieldSchema::String(s) => s.description.as_deref(),
        FieldSchema::Bytes(s) => s.description.as_deref(),
        FieldSchema::CidLink(s) => s.description.as_deref(),
        FieldSchema::Blob(s) => s.description.as_deref(),
        FieldSchema::Array(s) => s.description.as_deref(),
        FieldSchema::Object(s) => s.description.as_deref(),
        FieldSchema::Ref(s) => s.description.as_deref(),
        FieldSchema::Union(s) => s.description.as_deref(),
        FieldSchema::Unknown(s) => s.description.as_deref(),
    }
}

fn default_literal(schema: &FieldSchema) -> Option<String> {
    match schema {
        FieldSchema::Boolean(s) => s.default.map(|d| d.to_string()),
        FieldSchema::Integer(s) => s.default.map(|d| d.to_string()),
        FieldSchema::String(s) => s.default.clone(),
        _ => None,
    }
}

/// `fn <field>_or_default(&self)` for an optional field with a lexicon default.
fn default_accessor(
    name: &str,
    schema: &FieldSchema,
    ty: &TokenStream,
) -> Result<Option<TokenStream>, LexgenError> {
    let field = field_ident(name)?;
    let method = Ident::new(
        &format!("{}_or_default", snake_case(name)),
        Span::call_site(),
    );
    let doc = format!(" `{name}`, or its lexicon default when absent.");
    let accessor = match schema {
        FieldSchema::Boolean(s) => s
            .default
            .map(|d| quote!(pub fn #method(&self) -> bool { self.#field.unwrap_or(#d) })),
        FieldSchema::Integer(s) => s
            .default
            .map(|d| quote!(pub fn #method(&self) -> i64 { self.#field.unwrap_or(#d) })),
        FieldSchema::String(s) if has_value_set(s) => s.default.as_ref().map(|d| {
            quote!(pub fn #method(&self) -> #ty {
                self.#field.clone().unwrap_or_else(|| #ty::from(#d))
            })
        }),
        FieldSchema::String(s) => s.default.as_ref().map(
            |d| quote!(pub fn #method(&self) -> &str { self.#field.as_deref().unwrap_or(#d) }),
        ),
        _ => None,
    };
    Ok(accessor.map(|body| quote!(#[doc = #doc] #body)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variant_idents_use_the_last_dotted_segment_and_refuse_collisions() {
        let values = vec!["computer.socialweb.infra".to_owned(), "staged".to_owned()];
        let idents = variant_idents("x", &values, true)
            .map(|v| v.iter().map(ToString::to_string).collect::<Vec<_>>());
        assert_eq!(
            idents.ok(),
            Some(vec!["Infra".to_owned(), "Staged".to_owned()])
        );
        let clash = vec!["other".to_owned()];
        assert!(variant_idents("x", &clash, true).is_err());
        assert!(variant_idents("x", &clash, false).is_ok());
    }

    #[test]
    fn doc_text_names_the_lexicon_location_on_its_own_line() {
        let doc = doc_text(Some("Hi."), "a.b#c").to_string();
        assert_eq!(
            doc,
            quote!(#[doc = " Hi."] #[doc = ""] #[doc = " Lexicon: `a.b#c`."]).to_string()
        );
    }
}
