//! The fake API server, driven through `kube::Api` (the real client), one test per semantic.
//!
//! Modules: [`audit`], [`create`], [`read`] (get and list), [`update`], [`patch`], [`strategic`]
//! (strategic merge patch), [`delete`], [`gc`], [`informer`], [`watch`], [`cache`] (the watch cache and
//! the resourceVersion parameters), [`timing`] (serving latency around the commit), [`discovery`],
//! [`faults`], [`bad_input`], [`determinism`], [`crd`] (custom resources from CRD manifests: schema
//! validation, pruning, `fieldValidation`, another controller's CRD), [`type_meta`] (kind and apiVersion
//! from the path), [`labels`], [`pod_status`], [`service_accounts`], [`quota`]; [`support`] builds the
//! world.

mod audit;
mod bad_input;
mod cache;
mod crd;
mod create;
mod delete;
mod determinism;
mod discovery;
mod faults;
mod gc;
mod informer;
mod labels;
mod lease;
mod patch;
mod pod_status;
mod quota;
mod read;
mod sent;
mod service_accounts;
mod strategic;
mod support;
mod timing;
mod type_meta;
mod update;
mod watch;
