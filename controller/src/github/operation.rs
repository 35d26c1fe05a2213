//! The names of the GitHub calls the client makes, as metrics, traces and fault plans spell them.
//!
//! One [`Operation`] per distinct call. The names are a contract shared with arcsim's fault plans
//! (`GITHUB_OPERATIONS`) and dashboards: renaming one breaks both.

use std::fmt;

/// One kind of call to GitHub or to the Actions service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    /// `POST /actions/runner-registration`: exchange a registration token for an Actions admin token.
    AdminToken,
    /// `POST …/actions/runners/registration-token`.
    RegistrationToken,
    /// `GET _apis/runtime/runnergroups/?groupName=`.
    GetRunnerGroup,
    /// `GET _apis/runtime/runnerscalesets?runnerGroupId=&name=` or `…/runnerscalesets/{id}`.
    GetScaleSet,
    /// `POST _apis/runtime/runnerscalesets`.
    CreateScaleSet,
    /// `PATCH _apis/runtime/runnerscalesets/{id}`.
    UpdateScaleSet,
    /// `DELETE _apis/runtime/runnerscalesets/{id}`.
    DeleteScaleSet,
    /// `POST _apis/runtime/runnerscalesets/{id}/sessions`.
    CreateSession,
    /// `PATCH _apis/runtime/runnerscalesets/{id}/sessions/{sessionId}`.
    RefreshSession,
    /// `DELETE _apis/runtime/runnerscalesets/{id}/sessions/{sessionId}`.
    DeleteSession,
    /// `GET {messageQueueUrl}?lastMessageId=`: the long poll.
    GetMessage,
    /// `DELETE {messageQueueUrl}/{messageId}`: the acknowledgement.
    DeleteMessage,
    /// `POST _apis/runtime/runnerscalesets/{id}/acquirejobs`.
    AcquireJobs,
    /// `GET …/runnerscalesets/{id}/acquirablejobs`.
    GetAcquirableJobs,
    /// `POST _apis/runtime/runnerscalesets/{id}/generatejitconfig`.
    GenerateJitConfig,
    /// `GET _apis/distributedtask/pools/0/agents/{id}`.
    GetRunner,
    /// `GET _apis/distributedtask/pools/0/agents?agentName=`.
    GetRunnerByName,
    /// `DELETE _apis/distributedtask/pools/0/agents/{id}`.
    RemoveRunner,
    /// Legacy REST `GET …/actions/runners`.
    ListRunners,
    /// Legacy REST `DELETE …/actions/runners/{id}`.
    DeleteRunner,
    /// REST `POST /app/installations/{id}/access_tokens`: a GitHub App's JWT for an installation token.
    InstallationToken,
}

impl Operation {
    /// Every operation, in declaration order.
    pub const ALL: [Operation; 21] = [
        Operation::AdminToken,
        Operation::RegistrationToken,
        Operation::GetRunnerGroup,
        Operation::GetScaleSet,
        Operation::CreateScaleSet,
        Operation::UpdateScaleSet,
        Operation::DeleteScaleSet,
        Operation::CreateSession,
        Operation::RefreshSession,
        Operation::DeleteSession,
        Operation::GetMessage,
        Operation::DeleteMessage,
        Operation::AcquireJobs,
        Operation::GetAcquirableJobs,
        Operation::GenerateJitConfig,
        Operation::GetRunner,
        Operation::GetRunnerByName,
        Operation::RemoveRunner,
        Operation::ListRunners,
        Operation::DeleteRunner,
        Operation::InstallationToken,
    ];

    /// The stable kebab-case name (`remove-runner`).
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::AdminToken => "admin-token",
            Operation::RegistrationToken => "registration-token",
            Operation::GetRunnerGroup => "get-runner-group",
            Operation::GetScaleSet => "get-scale-set",
            Operation::CreateScaleSet => "create-scale-set",
            Operation::UpdateScaleSet => "update-scale-set",
            Operation::DeleteScaleSet => "delete-scale-set",
            Operation::CreateSession => "create-session",
            Operation::RefreshSession => "refresh-session",
            Operation::DeleteSession => "delete-session",
            Operation::GetMessage => "get-message",
            Operation::DeleteMessage => "delete-message",
            Operation::AcquireJobs => "acquire-jobs",
            Operation::GetAcquirableJobs => "get-acquirable-jobs",
            Operation::GenerateJitConfig => "generate-jit-config",
            Operation::GetRunner => "get-runner",
            Operation::GetRunnerByName => "get-runner-by-name",
            Operation::RemoveRunner => "remove-runner",
            Operation::ListRunners => "list-runners",
            Operation::DeleteRunner => "delete-runner",
            Operation::InstallationToken => "installation-token",
        }
    }

    /// The operation named `name`, if any.
    pub fn from_name(name: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|op| op.as_str() == name)
    }

    /// Whether the call is authorised by the message-queue token rather than the admin token, so a
    /// 401 means "refresh the session".
    pub fn uses_queue_token(self) -> bool {
        matches!(self, Operation::GetMessage | Operation::DeleteMessage | Operation::AcquireJobs)
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_maps_back_to_its_operation() {
        for op in Operation::ALL {
            assert_eq!(Operation::from_name(op.as_str()), Some(op));
        }
        assert_eq!(Operation::from_name("nope"), None);
    }
}
