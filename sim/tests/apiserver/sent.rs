//! `SentRequests`: a request detached from its caller is served though the caller stops polling it
//! (a paused process); served inline, it waits for the caller.

use std::time::Duration;

use arc_sim::net::sent::SentRequests;
use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;

use super::support::world;

fn create(name: &str) -> Request<Full<Bytes>> {
    let body = format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}}}}"#);
    Request::post("/api/v1/namespaces/default/configmaps")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .expect("a request")
}

/// Twenty creates, each polled once and then left for five seconds, as a process stopped just after
/// sending: detached, all are stored meanwhile; inline, those whose drawn serving time falls before
/// the commit are not. Every answer waits for its caller.
#[tokio::test(start_paused = true)]
async fn a_detached_request_is_served_though_its_caller_stops_and_an_inline_one_is_not() {
    let w = world();
    let config_maps: Api<ConfigMap> = Api::namespaced(w.client.clone(), "default");
    for detached in [true, false] {
        let mut service = SentRequests::new(w.server.service(), detached);
        let names: Vec<String> = (0..20).map(|i| format!("{detached}-{i}")).collect();
        let mut calls = Vec::new();
        for name in &names {
            let mut call = tower::Service::call(&mut service, create(name));
            let _ = futures::poll!(&mut call);
            calls.push(call);
        }
        tokio::time::sleep(Duration::from_secs(5)).await;
        let mut stored = 0;
        for name in &names {
            stored += usize::from(config_maps.get_opt(name).await.expect("a read").is_some());
        }
        if detached {
            assert_eq!(stored, 20, "every detached request was served");
        } else {
            assert!(stored < 20, "an inline request waits for its caller ({stored} of 20 stored)");
        }
        for call in calls {
            assert_eq!(call.await.expect("an answer").status(), 201);
        }
    }
}
