//! The probes of legacy runners whose `config.sh` reaches GitHub over HTTP (issue 42, item 3): a
//! request of `config.sh` that failed and was sent again 1–5 s later, as actions/runner does, and a
//! registration that committed at GitHub while its answer was lost (the runner registers again and
//! takes its own lost registration over with `--replace`).

use arc_sim::github::GitHubCall;
use arc_sim::kubelet::KubeletEventKind;
use arc_world::RunRecord;

/// Requests of `config.sh` that failed and were sent again.
pub fn config_sh_request_retried(run: &RunRecord) -> u32 {
    let retried = run.kubelet_events().filter(|e| {
        matches!(e.kind, KubeletEventKind::RegistrationRequestFailed { retry_in_ms: Some(_), .. })
    });
    retried.count() as u32
}

/// Registrations of `config.sh` that committed and whose answer the runner never got.
pub fn config_sh_registration_answer_lost(run: &RunRecord) -> u32 {
    let lost = run
        .events_of::<GitHubCall>()
        .filter(|c| c.operation == "register-runner" && c.committed_then_failed());
    lost.count() as u32
}
