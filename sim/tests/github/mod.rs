//! The fake GitHub driven by the production `ActionsClient`, over the real wire format.
//!
//! - `rig`: a fake, a client and helpers to set up scale sets, runners and sessions.
//! - `race`: RemoveRunner against job assignment under many seeds.
//! - `queue`: sessions, long polls, message delivery and acknowledgement, acquisition, capacity.
//! - `runners`: JIT registration, the runner process life cycle, lost runners, cancellation.
//! - `legacy`: registration tokens, `config.sh`, the stale REST runner list, REST delete.
//! - `client`: retries under injected faults, typed errors, the admin token's refresh.
//! - `commit`: commit-then-fail faults: the change is committed, the client's retry meets it.
//! - `timing`: latency before and after the commit, the JobStarted and pickup delays.
//! - `capacity`: `X-ScaleSetMaxCapacity` on acquisition and the re-offer of the jobs left.
//! - `weak`: weak removal, off (serialised) and on.
//! - `wire`: the golden wire cases of `fixtures/github/`, answered by the fake.

mod assumed;
mod capacity;
mod client;
mod commit;
mod legacy;
mod queue;
mod race;
mod rig;
mod runners;
mod timing;
mod weak;
mod wire;
