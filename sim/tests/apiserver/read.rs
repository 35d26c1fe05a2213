//! GET and LIST: NotFound, selectors, paging, list resourceVersion.

use kube::api::{ListParams, PostParams};

use crate::apiserver::support::*;

#[tokio::test(start_paused = true)]
async fn getting_a_missing_object_is_404_not_found() {
    let w = world();
    let status = status_of(w.pods().get("nope").await);
    assert_eq!((status.code, status.reason.as_str()), (404, "NotFound"));
    assert_eq!(status.message, "pods \"nope\" not found");
    assert_eq!(w.pods().get_opt("nope").await.unwrap(), None);
}

async fn labelled_pods(w: &World) {
    for (name, labels) in
        [("a", &[("app", "web"), ("tier", "front")][..]), ("b", &[("app", "db")][..]), ("c", &[][..])]
    {
        let mut p = pod(name);
        p.metadata.labels = Some(labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
        w.pods().create(&PostParams::default(), &p).await.unwrap();
    }
}

async fn names(w: &World, lp: &ListParams) -> Vec<String> {
    w.pods().list(lp).await.unwrap().items.into_iter().map(|p| p.metadata.name.unwrap()).collect()
}

#[tokio::test(start_paused = true)]
async fn lists_filter_by_every_label_selector_operator() {
    let w = world();
    labelled_pods(&w).await;
    let cases: [(&str, &[&str]); 7] = [
        ("app=web", &["a"]),
        ("app!=web", &["b", "c"]),
        ("app in (web,db)", &["a", "b"]),
        ("app notin (web)", &["b", "c"]),
        ("tier", &["a"]),
        ("!app", &["c"]),
        ("app,!tier", &["b"]),
    ];
    for (selector, expected) in cases {
        assert_eq!(names(&w, &ListParams::default().labels(selector)).await, expected, "{selector}");
    }
}

#[tokio::test(start_paused = true)]
async fn lists_filter_by_name_and_namespace_fields() {
    let w = world();
    labelled_pods(&w).await;
    assert_eq!(names(&w, &ListParams::default().fields("metadata.name=b")).await, ["b"]);
    assert_eq!(names(&w, &ListParams::default().fields("metadata.name!=b")).await, ["a", "c"]);
    assert_eq!(names(&w, &ListParams::default().fields("metadata.namespace=default")).await.len(), 3);
    let status = status_of(w.pods().list(&ListParams::default().fields("spec.bogus=x")).await);
    assert_eq!((status.code, status.message.as_str()), (400, "field label not supported: spec.bogus"));
}

#[tokio::test(start_paused = true)]
async fn lists_page_with_limit_and_continue_over_a_consistent_snapshot() {
    let w = world();
    for i in 0..5 {
        w.pods().create(&PostParams::default(), &pod(&format!("p{i}"))).await.unwrap();
    }
    let first = w.pods().list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(first.items.len(), 2);
    let token = first.metadata.continue_.clone().expect("more remain");
    assert_eq!(first.metadata.remaining_item_count, Some(3));
    w.pods().create(&PostParams::default(), &pod("p9")).await.unwrap();
    let mut seen: Vec<String> = first.items.iter().map(|p| p.metadata.name.clone().unwrap()).collect();
    let mut next = Some(token);
    while let Some(token) = next {
        let page = w.pods().list(&ListParams::default().limit(2).continue_token(&token)).await.unwrap();
        assert_eq!(page.metadata.resource_version, first.metadata.resource_version);
        seen.extend(page.items.iter().map(|p| p.metadata.name.clone().unwrap()));
        next = page.metadata.continue_.filter(|c| !c.is_empty());
    }
    assert_eq!(seen, ["p0", "p1", "p2", "p3", "p4"], "later pages come from the first page's snapshot");
    let status = status_of(w.pods().list(&ListParams::default().continue_token("garbage")).await);
    assert_eq!(status.code, 400);
}

#[tokio::test(start_paused = true)]
async fn a_list_carries_the_current_resource_version() {
    let w = world();
    w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    w.runners().create(&PostParams::default(), &runner("r")).await.unwrap();
    let list = w.pods().list(&ListParams::default()).await.unwrap();
    assert_eq!(list.metadata.resource_version.unwrap(), w.server.resource_version().to_string());
}
