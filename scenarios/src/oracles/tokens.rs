//! Registration tokens: no runner container ever registers with an expired token (race 2, §8.2).

use arc_sim::kubelet::KubeletEventKind;
use arc_sim::world::RunRecord;

use super::Oracle;
use crate::verdict::Violation;

/// No legacy runner container runs `config.sh` with an expired registration token.
pub struct NoExpiredTokenRegistration;

impl Oracle for NoExpiredTokenRegistration {
    fn name(&self) -> &'static str {
        "no-expired-token-registration"
    }

    fn describe(&self) -> &'static str {
        "no runner container registers with an expired registration token"
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        run.kubelet_events
            .iter()
            .filter_map(|e| match &e.kind {
                KubeletEventKind::RegistrationFailed { reason, .. } if reason.contains("expired") => {
                    Some(Violation {
                        oracle: self.name(),
                        at_ms: e.ms,
                        objects: vec![format!("pod {}", e.pod)],
                        message: format!("config.sh failed: {reason}"),
                    })
                }
                _ => None,
            })
            .collect()
    }
}
