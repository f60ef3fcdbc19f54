//! The PDS's three PLC-operation calls, made by the signed-in [`Agent`] (so under the owner's
//! outbound policy, DPoP and refresh): ask for the emailed code, have the PDS sign an update
//! of the owner's DID with that code, submit the signed update. They need the `identity:*`
//! OAuth scope ([`crate::oauth::scope::IDENTITY`]).

use serde_json::{Value, json};

use super::PlcError;
use super::methods::VerificationMethods;
use crate::agent::Agent;
use crate::oauth::Secret;
use crate::xrpc::{XrpcError, XrpcRequest};

const REQUEST_SIGNATURE: &str = "com.atproto.identity.requestPlcOperationSignature";
const SIGN_OPERATION: &str = "com.atproto.identity.signPlcOperation";
const SUBMIT_OPERATION: &str = "com.atproto.identity.submitPlcOperation";

/// Asks the owner's PDS to email them a code that lets one PLC operation be signed (valid for
/// about 15 minutes on the reference PDS; a new request replaces the code).
pub async fn request_signature(agent: &Agent) -> Result<(), PlcError> {
    let request = XrpcRequest::procedure_without_input(REQUEST_SIGNATURE);
    agent.call(&request).await?;
    Ok(())
}

/// Has the PDS sign an update of the owner's DID that sets its verification methods to
/// `methods`, leaving its rotation keys, handles and services as they are; the signed
/// operation, not yet submitted. A wrong or expired code is [`PlcError::WrongToken`].
pub async fn sign_operation(
    agent: &Agent,
    token: &Secret,
    methods: &VerificationMethods,
) -> Result<Value, PlcError> {
    let body = json!({
        "token": token.expose().trim(),
        "verificationMethods": methods,
    });
    let request = XrpcRequest::procedure(SIGN_OPERATION, body);
    let answer = agent.call(&request).await.map_err(token_refusal)?;
    Ok(answer["operation"].clone())
}

/// Submits a signed operation through the PDS to the PLC directory.
pub async fn submit_operation(agent: &Agent, operation: &Value) -> Result<(), PlcError> {
    let request = XrpcRequest::procedure(SUBMIT_OPERATION, json!({"operation": operation}));
    agent.call(&request).await?;
    Ok(())
}

/// The PDS's refusal of the code as its own error; anything else as it came.
fn token_refusal(error: XrpcError) -> PlcError {
    match error.name() {
        Some("InvalidToken") => PlcError::WrongToken { expired: false },
        Some("ExpiredToken") => PlcError::WrongToken { expired: true },
        _ => PlcError::Xrpc(error),
    }
}
