//! A reconcile as a sequence of short named steps. Each step either hands a value on
//! (`ControlFlow::Continue`) or ends the reconcile with an outcome (`ControlFlow::Break`); errors end
//! it through `?`. [`proceed!`](crate::kit::step::proceed) unwraps a step inside the reconcile.

use std::ops::ControlFlow;

use super::error::Error;
use crate::runtime::outcome::Outcome;

/// A step of a reconcile: `Break` ends the reconcile with that outcome, `Continue` hands on a value.
pub(crate) type Step<T = (), E = Error> = Result<ControlFlow<Outcome, T>, E>;

/// Unwraps a [`Step`]: returns its outcome (or error) from the enclosing reconcile, or evaluates to
/// its value.
macro_rules! proceed {
    ($step:expr) => {
        match $step? {
            ::std::ops::ControlFlow::Continue(value) => value,
            ::std::ops::ControlFlow::Break(outcome) => return Ok(outcome),
        }
    };
}
pub(crate) use proceed;

#[cfg(test)]
mod tests {
    use super::*;

    async fn reconcile(first: Step<u32>, second: Step) -> Result<Outcome, Error> {
        let n = proceed!(first);
        proceed!(second);
        Ok(if n > 0 { Outcome::Done } else { Outcome::Requeue })
    }

    #[tokio::test]
    async fn a_step_either_carries_on_or_ends_the_reconcile() {
        assert_eq!(
            reconcile(Ok(ControlFlow::Continue(1)), Ok(ControlFlow::Continue(()))).await.unwrap(),
            Outcome::Done
        );
        assert_eq!(
            reconcile(Ok(ControlFlow::Break(Outcome::Requeue)), Ok(ControlFlow::Continue(()))).await.unwrap(),
            Outcome::Requeue
        );
        let failed = reconcile(Ok(ControlFlow::Continue(0)), Err(Error::Other("boom".into()))).await;
        assert_eq!(failed.unwrap_err().to_string(), "boom");
    }
}
