//! Criterion bench of the fake API server.

fn main() {}
