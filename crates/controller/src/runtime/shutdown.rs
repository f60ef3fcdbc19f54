//! [`ShutdownReport`], what a controller's shutdown left behind: the loop (`dispatch`) writes
//! it and the handle (`controller`) hands it back, so it sits below both.

use swdesk_kernel::name::Name;

/// What a shutdown left behind; every list in name order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Keys whose running reconcile finished within the grace period.
    pub finished: Vec<Name>,
    /// Keys whose running reconcile was stopped at the end of the grace period.
    pub cut_off: Vec<Name>,
    /// Keys that were waiting for a run that will not happen.
    pub pending: Vec<Name>,
}
