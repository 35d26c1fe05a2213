//! The registration token and its exchange for the Actions service's admin token.

use crate::github_wire::fixture::{Case, Stub};

#[tokio::test]
async fn a_registration_token_is_created_with_the_pat_and_its_expiry_decoded_with_its_offset() {
    let stub = Stub::new(&["registration-token"]);
    let token = stub.client().create_registration_token().await.unwrap();
    stub.assert_done();
    assert_eq!(token.token, "LLBF3JGZDX3P5PMEXLND6TS6FCWO6");
    assert_eq!(token.expires_at.to_string(), "2020-01-22T20:13:35.123Z");
}

#[tokio::test]
async fn the_admin_token_exchange_yields_the_service_url_and_bearer_token_of_later_calls() {
    // The get-runner case's request can only match if the client took its host, tenant path and
    // `Authorization: Bearer <admin token>` from the admin-token answer.
    let stub = Stub::via_admin(&["get-runner"]);
    stub.client().get_runner(12).await.unwrap();
    stub.assert_done();
    let admin = Case::load("admin-token");
    let bearer = Case::load("get-runner").text("/request/headers/Authorization");
    assert_eq!(bearer, format!("Bearer {}", admin.text("/response/body/token")));
}

#[tokio::test]
async fn a_github_app_buys_an_installation_token_with_its_signed_jwt_and_registers_with_it() {
    // The installation-token case holds the exact RS256 JWT the client must sign for app 123456 at
    // the stub's clock (iat 60 s back, exp 9 min later); the registration token then carries the
    // installation token as its bearer.
    let stub = Stub::new(&["installation-token", "registration-token.app"]);
    let client = stub.app_client();
    let token = client.create_registration_token().await.unwrap();
    stub.assert_done();
    assert_eq!(token.token, "LLBF3JGZDX3P5PMEXLND6TS6FCWO6");
}

#[tokio::test]
async fn the_installation_token_is_reused_until_it_is_about_to_expire() {
    // The stub's clock stays 1 h before the token's expiry: the second REST call buys nothing.
    let stub = Stub::new(&["installation-token", "registration-token.app", "registration-token.app"]);
    let client = stub.app_client();
    client.create_registration_token().await.unwrap();
    client.create_registration_token().await.unwrap();
    stub.assert_done();
}
