//! Shared helpers for arcsim's criterion benches.
