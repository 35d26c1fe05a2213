//! The fake API server, driven through `kube::Api` (the real client), one test per semantic.
//!
//! Modules: [`audit`], [`create`], [`read`] (get and list), [`update`], [`patch`], [`delete`], [`gc`], [`informer`], [`watch`],
//! [`discovery`], [`faults`], [`bad_input`], [`determinism`], [`crd`] (custom resources from CRD
//! manifests: schema validation, pruning, `fieldValidation`, another controller's CRD); [`support`]
//! builds the world.

mod audit;
mod bad_input;
mod crd;
mod create;
mod delete;
mod determinism;
mod discovery;
mod faults;
mod gc;
mod informer;
mod lease;
mod patch;
mod read;
mod support;
mod update;
mod watch;
