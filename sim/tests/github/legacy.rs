//! The legacy REST view (ARC-MODEL §6.3 legacy, §6.6, §8.2): registration tokens, `config.sh`, the
//! stale runner list, the REST delete.

use std::time::Duration;

use arc_sim::github::{GitHubConfig, JobSpec, JobState, RegistrationFailed, RunnerState};

use crate::github::rig::rig;

const SCOPE: &str = "/orgs/arcsim";

#[tokio::test(start_paused = true)]
async fn config_sh_works_with_a_fresh_token_and_fails_once_it_has_expired() {
    let rig = rig(1, GitHubConfig::instant());
    let token = rig.client.create_registration_token().await.unwrap();
    assert_eq!(token.expires_at, rig.clock.epoch() + jiff::SignedDuration::from_hours(1));
    tokio::time::sleep(Duration::from_secs(59 * 60)).await;
    let labels = vec!["linux".to_string(), "big".to_string()];
    let registered = rig.fake.legacy_configure(&token.token, "runner-a", &labels, false).unwrap();
    assert_eq!(rig.fake.runner(registered.runner_id).unwrap().labels, ["self-hosted", "linux", "x64", "big"]);
    tokio::time::sleep(Duration::from_secs(60)).await;
    let expired = rig.fake.legacy_configure(&token.token, "runner-b", &labels, false);
    assert_eq!(expired.unwrap_err(), RegistrationFailed::TokenExpired);
    assert_eq!(
        rig.fake.legacy_configure("forged", "c", &labels, false).unwrap_err(),
        RegistrationFailed::TokenInvalid
    );
}

#[tokio::test(start_paused = true)]
async fn reconfiguring_a_name_replaces_an_idle_runner_but_not_a_busy_one() {
    let rig = rig(1, GitHubConfig::instant());
    let token = rig.fake.issue_registration_token(SCOPE).token;
    let first = rig.fake.legacy_configure(&token, "r", &[], false).unwrap();
    let second = rig.fake.legacy_configure(&token, "r", &[], false).unwrap();
    assert!(rig.fake.runner(first.runner_id).unwrap().is_removed());
    let process = rig.fake.connect_runner(&second.config).unwrap();
    rig.fake.submit_job(JobSpec::simple(&["self-hosted"], 60_000));
    process.next_job().await.unwrap();
    let busy = rig.fake.legacy_configure(&token, "r", &[], false).unwrap_err();
    assert_eq!(busy, RegistrationFailed::NameBusy("r".into()));
}

#[tokio::test(start_paused = true)]
async fn the_rest_runner_list_is_a_snapshot_up_to_the_staleness_old() {
    let rig = rig(1, GitHubConfig::instant());
    let token = rig.client.create_registration_token().await.unwrap().token;
    let registered = rig.fake.legacy_configure(&token, "r", &["linux".into()], false).unwrap();
    let process = rig.fake.connect_runner(&registered.config).unwrap();
    let listed = rig.client.list_runners().await.unwrap();
    assert_eq!((listed.len(), listed[0].status.as_str(), listed[0].busy), (1, "online", false));

    let job = rig.fake.submit_job(JobSpec::simple(&["self-hosted", "linux"], 600_000));
    process.next_job().await.unwrap();
    assert_eq!(rig.fake.job(job).unwrap().state, JobState::Running);
    let stale = rig.client.list_runners().await.unwrap();
    assert!(!stale[0].busy, "within 60 s the list still says idle");
    let err = rig.client.remove_legacy_runner(registered.runner_id).await.unwrap_err();
    assert!(err.is_runner_busy(), "the delete itself sees the truth: {err}");
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(rig.client.list_runners().await.unwrap()[0].busy, "after 60 s the list is fresh");
}

#[tokio::test(start_paused = true)]
async fn the_rest_runner_list_pages_by_one_hundred() {
    let config = GitHubConfig { list_runners_staleness_ms: 1, ..GitHubConfig::instant() };
    let rig = rig(1, config);
    let token = rig.fake.issue_registration_token(SCOPE).token;
    for n in 0..150 {
        rig.fake.legacy_configure(&token, &format!("r-{n}"), &[], true).unwrap();
    }
    let listed = rig.client.list_runners().await.unwrap();
    assert_eq!(listed.len(), 150);
    assert_eq!(listed.iter().filter(|r| r.status == "offline").count(), 150);
    assert_eq!(rig.fake.request_count(arc_sim::github::Operation::ListRunners, 200), 2);
}

#[tokio::test(start_paused = true)]
async fn the_rest_delete_removes_an_idle_runner_and_404s_an_unknown_one() {
    let rig = rig(1, GitHubConfig::instant());
    let token = rig.fake.issue_registration_token(SCOPE).token;
    let registered = rig.fake.legacy_configure(&token, "r", &[], false).unwrap();
    let process = rig.fake.connect_runner(&registered.config).unwrap();
    rig.client.remove_legacy_runner(registered.runner_id).await.unwrap();
    assert!(matches!(rig.fake.runner(registered.runner_id).unwrap().state, RunnerState::Removed { .. }));
    assert!(process.next_job().await.is_err());
    let err = rig.client.remove_legacy_runner(registered.runner_id).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
}
