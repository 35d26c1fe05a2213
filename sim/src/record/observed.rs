//! [`Observed`]: what an event type implements to go into the record. The record keeps events as
//! `Arc<dyn Observed>` and hands them back typed ([`Event::get`](super::Event::get)), so every fake
//! defines its own events and the record needs to know none of them.

use std::any::Any;
use std::borrow::Cow;
use std::fmt;

/// One trace line of an event: `{sim_ms} {actor} {event} {details}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line<'a> {
    /// Who acted (`apiserver`, `github`, `kubelet`, `world`, `apiserver watch#3`, …).
    pub actor: Cow<'a, str>,
    /// What happened, one word (`create`, `job-assigned`, `ADDED`, …).
    pub event: Cow<'a, str>,
    /// The rest of the line (may be empty).
    pub details: String,
}

impl<'a> Line<'a> {
    /// A line from its parts.
    pub fn new(
        actor: impl Into<Cow<'a, str>>,
        event: impl Into<Cow<'a, str>>,
        details: impl fmt::Display,
    ) -> Self {
        Line { actor: actor.into(), event: event.into(), details: details.to_string() }
    }
}

/// An event type of the record.
pub trait Observed: fmt::Debug + Send + Sync + 'static {
    /// Its trace line, or `None` for events whose line another event already carries (a read is part
    /// of the request or watch delivery that handed the object over).
    fn line(&self) -> Option<Line<'_>>;

    /// The resource plural the event concerns, when it concerns one (lets an [`Interest`](super::Interest)
    /// keep one kind's changes without the rest).
    fn resource(&self) -> Option<&str> {
        None
    }

    /// The event as `Any`, for typed access.
    fn as_any(&self) -> &dyn Any;
}

/// Implements [`Observed::as_any`] (every implementation writes it the same way).
#[macro_export]
macro_rules! observed_as_any {
    () => {
        fn as_any(&self) -> &dyn ::std::any::Any {
            self
        }
    };
}
