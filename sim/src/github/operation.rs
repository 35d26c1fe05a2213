//! [`Operation`]: the fake's names for the calls it serves, as its request counters, traces and the
//! fault plans (`crate::faults::GITHUB_OPERATIONS`) spell them.
//!
//! The fake names what it serves by its own routing, so a client that calls the wrong path gets
//! `unknown`, not the name it meant. The kebab-case names are a contract with saved fault plans and
//! traces: renaming one changes both.

use std::fmt;

/// One kind of request the fake GitHub serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    /// `POST /actions/runner-registration`: a registration token for an Actions admin token.
    AdminToken,
    /// `POST {scope}/actions/runners/registration-token`.
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
    /// `POST …/runnerscalesets/{id}/sessions`.
    CreateSession,
    /// `PATCH …/runnerscalesets/{id}/sessions/{sessionId}`.
    RefreshSession,
    /// `DELETE …/runnerscalesets/{id}/sessions/{sessionId}`.
    DeleteSession,
    /// `GET` of a session's message queue URL: the long poll.
    GetMessage,
    /// `DELETE {queue}/{messageId}`: the acknowledgement.
    DeleteMessage,
    /// `POST …/runnerscalesets/{id}/acquirejobs`.
    AcquireJobs,
    /// `GET …/runnerscalesets/{id}/acquirablejobs`.
    GetAcquirableJobs,
    /// `POST …/runnerscalesets/{id}/generatejitconfig`.
    GenerateJitConfig,
    /// `GET _apis/distributedtask/pools/0/agents/{id}`.
    GetRunner,
    /// `GET _apis/distributedtask/pools/0/agents?agentName=`.
    GetRunnerByName,
    /// `DELETE _apis/distributedtask/pools/0/agents/{id}`.
    RemoveRunner,
    /// REST `GET {scope}/actions/runners`.
    ListRunners,
    /// REST `DELETE {scope}/actions/runners/{id}`.
    DeleteRunner,
    /// REST `POST /app/installations/{id}/access_tokens`: an app JWT for an installation token.
    InstallationToken,
    /// `POST _apis/distributedtask/pools/{pool}/sessions`: a runner process's own session (actions/runner's
    /// `CreateAgentSessionAsync`), not a listener's.
    CreateRunnerSession,
    /// `POST /actions/runners/register`: a legacy runner's `config.sh` adds or replaces its runner with
    /// its registration token (actions/runner's `AddOrReplaceRunner`).
    RegisterRunner,
}

impl Operation {
    /// Every operation, in the order of `GITHUB_OPERATIONS`.
    pub const ALL: [Operation; 23] = [
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
        Operation::CreateRunnerSession,
        Operation::RegisterRunner,
    ];

    /// The kebab-case name (`remove-runner`).
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
            Operation::CreateRunnerSession => "create-runner-session",
            Operation::RegisterRunner => "register-runner",
        }
    }

    /// Whether serving it changes the service's state (tokens issued, objects created or removed,
    /// messages acknowledged, jobs acquired): the operations a commit-then-fail fault can hit.
    pub fn is_mutating(self) -> bool {
        !matches!(
            self,
            Operation::GetRunnerGroup
                | Operation::GetScaleSet
                | Operation::GetMessage
                | Operation::GetAcquirableJobs
                | Operation::GetRunner
                | Operation::GetRunnerByName
                | Operation::ListRunners
        )
    }

    /// The operation named `name`, if any.
    pub fn from_name(name: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|op| op.as_str() == name)
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
    fn the_names_are_the_fault_plans_names_in_order() {
        let names: Vec<&str> = Operation::ALL.iter().map(|op| op.as_str()).collect();
        assert_eq!(names, crate::faults::GITHUB_OPERATIONS);
        for op in Operation::ALL {
            assert_eq!(Operation::from_name(op.as_str()), Some(op));
        }
        assert_eq!(Operation::from_name("unknown"), None);
    }

    #[test]
    fn the_mutating_operations_are_the_fault_plans_mutating_names() {
        let mutating: Vec<&str> =
            Operation::ALL.iter().filter(|op| op.is_mutating()).map(|op| op.as_str()).collect();
        assert_eq!(mutating, crate::faults::GITHUB_MUTATING_OPERATIONS);
    }
}
