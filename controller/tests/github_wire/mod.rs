//! Golden wire tests of the production `ActionsClient`: for every case in `fixtures/github/` (shapes
//! taken from ARC's Go client, `actions/scaleset` and GitHub's REST docs), the client must send the
//! case's request exactly (method, host, path, query, the listed headers, JSON body) and decode the
//! case's answer into the expected values. The fake GitHub is checked against the same cases in
//! `sim/tests/github/wire.rs`, so a field misnamed on either side fails a test.
//!
//! - `fixture`: loading a case, and the stub service that checks requests and plays answers back.
//! - `tokens`, `scale_sets`, `sessions`, `runners`, `legacy`: one test per case, by area.

mod fixture;
mod legacy;
mod runners;
mod scale_sets;
mod sessions;
mod tokens;
