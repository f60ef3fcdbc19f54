//! The client's errors: a refusal by the gateway, typed by its documented `error` name
//! ([`ErrorName`]: every error the lexicons declare, and the service-auth refusals), and every
//! way a call can fail before an answer (discovery, minting the token, transport, an answer that
//! is not what the lexicon says).
//!
//! Invariant: no variant carries a token or a kubeconfig.

use swdesk_atproto::identity::IdentityError;
use swdesk_atproto::xrpc::XrpcError;

/// A documented error name of the gateway's methods (or an undocumented one, kept).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ErrorName {
    /// The name is not a DNS-1123 label.
    InvalidName,
    /// The caller has as many clusters as the gateway allows.
    QuotaExceeded,
    /// The caller has no cluster of that name.
    ClusterNotFound,
    /// The cluster is being deleted.
    ClusterDraining,
    /// `ttlSeconds` is outside 60..86400.
    InvalidTtl,
    /// No certificate without expiry for this caller.
    NoExpiryNotAllowed,
    /// The identity holds no grant on the cluster.
    IdentityNotFound,
    /// The cluster is not Ready.
    ClusterNotReady,
    /// The caller's grant is revoked or does not allow this.
    Forbidden,
    /// The manifest is not one valid Kubernetes object.
    InvalidManifest,
    /// Another field manager owns fields the manifest sets.
    Conflict,
    /// No Job of that name.
    JobNotFound,
    /// The input is not what the method takes.
    InvalidRequest,
    /// No service-auth token was sent.
    AuthMissing,
    /// The token is not a usable JWT, or its issuer did not resolve.
    BadJwt,
    /// The token's signature does not match the issuer's key.
    BadJwtSignature,
    /// The token is for another service.
    BadJwtAudience,
    /// The token is for another method.
    BadJwtLexiconMethod,
    /// The token expired.
    JwtExpired,
    /// Any other name, as the gateway wrote it.
    Other(String),
}

impl ErrorName {
    /// The name of an `error` field.
    pub fn parse(name: &str) -> Self {
        match name {
            "InvalidName" => Self::InvalidName,
            "QuotaExceeded" => Self::QuotaExceeded,
            "ClusterNotFound" => Self::ClusterNotFound,
            "ClusterDraining" => Self::ClusterDraining,
            "InvalidTtl" => Self::InvalidTtl,
            "NoExpiryNotAllowed" => Self::NoExpiryNotAllowed,
            "IdentityNotFound" => Self::IdentityNotFound,
            "ClusterNotReady" => Self::ClusterNotReady,
            "Forbidden" => Self::Forbidden,
            "InvalidManifest" => Self::InvalidManifest,
            "Conflict" => Self::Conflict,
            "JobNotFound" => Self::JobNotFound,
            "InvalidRequest" => Self::InvalidRequest,
            "AuthMissing" | "AuthRequired" => Self::AuthMissing,
            "BadJwt" => Self::BadJwt,
            "BadJwtSignature" => Self::BadJwtSignature,
            "BadJwtAudience" => Self::BadJwtAudience,
            "BadJwtLexiconMethod" => Self::BadJwtLexiconMethod,
            "JwtExpired" => Self::JwtExpired,
            other => Self::Other(swdesk_lexicon::text::peer_text(other, 64)),
        }
    }

    /// Whether it is a refusal of the service-auth token.
    pub fn is_auth(&self) -> bool {
        matches!(
            self,
            Self::AuthMissing
                | Self::BadJwt
                | Self::BadJwtSignature
                | Self::BadJwtAudience
                | Self::BadJwtLexiconMethod
                | Self::JwtExpired
        )
    }
}

/// Why a gateway call failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GatewayError {
    /// The gateway answered with an error.
    #[error("the gateway refused {method}: {name:?}: {message}")]
    Refused {
        /// The method's NSID.
        method: &'static str,
        /// The HTTP status (0 for an error frame of a subscription).
        status: u16,
        /// The documented error.
        name: ErrorName,
        /// Its message.
        message: String,
    },
    /// The gateway's DID document could not be resolved.
    #[error("the gateway's DID document did not resolve: {0}")]
    Discovery(#[from] IdentityError),
    /// The DID document names no usable endpoint.
    #[error("the gateway {did} names no usable endpoint: {reason}")]
    NoEndpoint {
        /// The gateway's DID.
        did: String,
        /// What is missing.
        reason: String,
    },
    /// The owner's PDS did not mint a service-auth token.
    #[error("no service-auth token for {method}: {source}")]
    ServiceAuth {
        /// The method.
        method: &'static str,
        /// What the PDS answered.
        source: XrpcError,
    },
    /// The gateway could not be reached, or the connection broke.
    #[error("the gateway could not be reached for {method}: {reason}")]
    Transport {
        /// The method.
        method: &'static str,
        /// Why.
        reason: String,
    },
    /// The gateway answered something the lexicon does not allow.
    #[error("the gateway answered {method} with something unexpected: {reason}")]
    InvalidResponse {
        /// The method.
        method: &'static str,
        /// What was wrong.
        reason: String,
    },
}

impl GatewayError {
    /// The documented error name, when the gateway refused.
    pub fn name(&self) -> Option<&ErrorName> {
        match self {
            Self::Refused { name, .. } => Some(name),
            _ => None,
        }
    }

    /// Whether retrying later may help (the kernel's retry rule: the network, a busy or failing
    /// gateway or PDS, not the request, failed).
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Transport { .. } | Self::Discovery(_) => true,
            Self::ServiceAuth { source, .. } => source.fault().is_transient(),
            Self::Refused { status, .. } => swdesk_atproto::retry::transient_status(*status),
            _ => false,
        }
    }
}
