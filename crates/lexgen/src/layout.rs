//! The generated module tree: which file holds which module, and the text of each file.
//!
//! NSID segments become nested modules (`computer.socialweb.infra` ->
//! `generated/computer/socialweb/infra.rs`, module `crate::generated::computer::socialweb::infra`);
//! a namespace without a lexicon of its own gets a file that only declares its children. Besides
//! the tree, `mod.rs` mounts the modules and `lexicons.rs` embeds every lexicon's JSON
//! (`include_str!`) for the runtime validator.
//!
//! Invariants: files come out sorted by path; every file starts with [`crate::HEADER`] and a `//!`
//! paragraph; two NSID segments that spell the same module name are an error.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::quote;

use crate::emit::{Catalog, lexicon_items};
use crate::names::snake_case;
use crate::{GeneratedFile, HEADER, LexgenError};

/// From `crates/lexicon/src/generated/lexicons.rs` to the workspace's `lexicons/`.
const INCLUDE_PREFIX: &str = "../../../../lexicons/";

/// A module of the tree: maybe a lexicon, maybe children.
#[derive(Default)]
struct Node {
    nsid: Option<String>,
    namespace: String,
    children: BTreeMap<String, Node>,
}

/// Every generated file, sorted by path.
pub fn files(catalog: &Catalog) -> Result<Vec<GeneratedFile>, LexgenError> {
    let root = tree(catalog)?;
    let mut files = vec![root_file(&root)?, lexicon_table(catalog)?];
    for (module, child) in &root.children {
        node_files(catalog, child, module, &mut files)?;
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

fn tree(catalog: &Catalog) -> Result<Node, LexgenError> {
    let mut root = Node::default();
    for nsid in catalog.keys() {
        let mut node = &mut root;
        let mut namespace = String::new();
        for segment in nsid.split('.') {
            namespace = if namespace.is_empty() {
                segment.to_owned()
            } else {
                format!("{namespace}.{segment}")
            };
            let module = snake_case(segment);
            node = node.children.entry(module).or_default();
            if !node.namespace.is_empty() && node.namespace != namespace {
                return Err(LexgenError::NameCollision {
                    location: namespace,
                    name: node.namespace.clone(),
                });
            }
            node.namespace.clone_from(&namespace);
        }
        node.nsid = Some(nsid.clone());
    }
    if root.children.contains_key("lexicons") {
        return Err(LexgenError::NameCollision {
            location: "crate::generated".to_owned(),
            name: "lexicons".to_owned(),
        });
    }
    Ok(root)
}

fn node_files(
    catalog: &Catalog,
    node: &Node,
    path: &str,
    files: &mut Vec<GeneratedFile>,
) -> Result<(), LexgenError> {
    let children = child_declarations(node)?;
    let (doc, items) = match &node.nsid {
        Some(nsid) => (lexicon_doc(catalog, nsid), lexicon_items(catalog, nsid)?),
        None => (format!(" The `{}` namespace.", node.namespace), quote!()),
    };
    let tokens = quote! {
        #![doc = #doc]
        #children
        #items
    };
    files.push(render(&format!("{path}.rs"), &node.namespace, tokens)?);
    for (module, child) in &node.children {
        node_files(catalog, child, &format!("{path}/{module}"), files)?;
    }
    Ok(())
}

fn lexicon_doc(catalog: &Catalog, nsid: &str) -> String {
    let description = catalog
        .get(nsid)
        .and_then(|lexicon| lexicon.doc.description.as_deref())
        .unwrap_or("(no description)");
    format!(" `{nsid}`: {}", crate::emit::doc_escape(description))
}

fn child_declarations(node: &Node) -> Result<TokenStream, LexgenError> {
    let mut declarations = Vec::new();
    for module in node.children.keys() {
        let ident = crate::names::field_ident(module)?;
        declarations.push(quote!(pub mod #ident;));
    }
    Ok(quote!(#(#declarations)*))
}

fn root_file(root: &Node) -> Result<GeneratedFile, LexgenError> {
    let children = child_declarations(root)?;
    let doc = " Types generated from the lexicons in `lexicons/`, one module per NSID segment, \
               mounted as `crate::generated`. Regenerate with `cargo run -p swdesk-lexgen`.";
    let tokens = quote! {
        #![doc = #doc]
        pub(crate) mod lexicons;
        #children
    };
    render("mod.rs", "crate::generated", tokens)
}

fn lexicon_table(catalog: &Catalog) -> Result<GeneratedFile, LexgenError> {
    let nsids = catalog.keys();
    let paths = catalog
        .values()
        .map(|lexicon| format!("{INCLUDE_PREFIX}{}", lexicon.relative_path));
    let tokens = quote! {
        #![doc = " The JSON of every lexicon in `lexicons/`, embedded at compile time."]
        #[doc = " `(NSID, lexicon JSON)`, sorted by NSID."]
        pub(crate) const LEXICONS: &[(&str, &str)] = &[
            #( (#nsids, include_str!(#paths)), )*
        ];
    };
    render("lexicons.rs", "crate::generated::lexicons", tokens)
}

fn render(path: &str, module: &str, tokens: TokenStream) -> Result<GeneratedFile, LexgenError> {
    let file = syn::parse2::<syn::File>(tokens).map_err(|source| LexgenError::Syntax {
        module: module.to_owned(),
        source,
    })?;
    Ok(GeneratedFile {
        path: path.to_owned(),
        contents: format!("{HEADER}\n{}", prettyplease::unparse(&file)),
    })
}
