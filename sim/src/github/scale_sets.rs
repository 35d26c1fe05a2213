//! Runner groups, runner scale sets and their statistics (ARC-MODEL §6.1, §4.1).
//!
//! Creating a scale set (or changing its labels) offers it every queued job it matches. Deleting one
//! is refused while any of its runners holds a job (ADR 2022-10-27); otherwise its acquired but
//! unassigned jobs go back to the queue, its idle and offline runners are removed and its session is
//! closed.

use super::events::EventKind;
use super::model::{RemovalReason, ScaleSet};
use super::reply::Reply;
use super::state::World;
use super::wire::{ItemList, Label, RunnerGroup, RunnerSetting, ScaleSetAnswer, ScaleSetRequest};

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl World {
    /// `GET runnergroups/?groupName=`: 0 or 1 groups (names compare case-insensitively).
    pub(super) fn http_get_runner_group(&self, name: &str) -> Reply {
        let groups: Vec<RunnerGroup> = self
            .groups
            .iter()
            .filter(|(_, n)| n.eq_ignore_ascii_case(name))
            .map(|(id, n)| RunnerGroup {
                id: *id,
                name: n.clone(),
                size: self.group_size(*id),
                is_default: *id == 1,
            })
            .collect();
        Reply::json(200, &ItemList::of(groups))
    }

    fn group_size(&self, group_id: i64) -> i64 {
        let sets: Vec<i64> =
            self.scale_sets.values().filter(|s| s.runner_group_id == group_id).map(|s| s.id).collect();
        count(
            self.runners
                .values()
                .filter(|r| !r.is_removed() && r.scale_set_id.is_some_and(|s| sets.contains(&s)))
                .count(),
        )
    }

    /// `GET runnerscalesets?runnerGroupId=&name=`.
    pub(super) fn http_find_scale_set(&self, group_id: i64, name: &str) -> Reply {
        let found: Vec<ScaleSetAnswer> = self
            .scale_sets
            .values()
            .filter(|s| s.runner_group_id == group_id && s.name == name)
            .map(|s| self.scale_set_wire(s))
            .collect();
        Reply::json(200, &ItemList::of(found))
    }

    /// `GET runnerscalesets/{id}`, its statistics as a read sees them (`stale_reads`).
    pub(super) fn http_get_scale_set(&mut self, id: i64) -> Reply {
        if !self.scale_sets.contains_key(&id) {
            return scale_set_not_found(id);
        }
        let statistics = self.read_statistics(id);
        let wire = ScaleSetAnswer { statistics, ..self.scale_set_wire(&self.scale_sets[&id]) };
        Reply::json(200, &wire)
    }

    /// `POST runnerscalesets`.
    pub(super) fn http_create_scale_set(&mut self, body: ScaleSetRequest) -> Reply {
        if body.name.trim().is_empty() {
            return Reply::bad_request("a runner scale set needs a name");
        }
        let group_id = if body.runner_group_id == 0 { 1 } else { body.runner_group_id };
        if !self.groups.contains_key(&group_id) {
            return Reply::exception(
                404,
                "RunnerGroupNotFoundException",
                format!("runner group {group_id} not found"),
            );
        }
        if self.scale_sets.values().any(|s| s.runner_group_id == group_id && s.name == body.name) {
            let message = format!("a runner scale set named {:?} already exists", body.name);
            return Reply::exception(409, "RunnerScaleSetExistsException", message);
        }
        let id = self.create_scale_set(&body.name, group_id, body.labels, body.runner_setting);
        Reply::json(200, &self.scale_set_wire(&self.scale_sets[&id]))
    }

    /// Creates a scale set and offers it the queued jobs it matches.
    pub(super) fn create_scale_set(
        &mut self,
        name: &str,
        runner_group_id: i64,
        labels: Vec<Label>,
        runner_setting: RunnerSetting,
    ) -> i64 {
        let id = self.next_id();
        let created_ms = self.now_ms();
        let set = ScaleSet {
            id,
            name: name.to_string(),
            runner_group_id,
            labels,
            runner_setting,
            created_ms,
            max_capacity: None,
        };
        self.scale_sets.insert(id, set);
        self.queue(id);
        self.record(EventKind::ScaleSetCreated { scale_set_id: id, name: name.to_string() });
        self.offer_queued_jobs(id);
        id
    }

    /// `PATCH runnerscalesets/{id}`: non-empty fields replace the stored ones. The runner setting is
    /// always replaced (simplification: the Go clients always send it, and the service's merge of it
    /// is not observed).
    pub(super) fn http_update_scale_set(&mut self, id: i64, body: ScaleSetRequest) -> Reply {
        if body.runner_group_id != 0 && !self.groups.contains_key(&body.runner_group_id) {
            let message = format!("runner group {} not found", body.runner_group_id);
            return Reply::exception(404, "RunnerGroupNotFoundException", message);
        }
        let Some(set) = self.scale_sets.get_mut(&id) else { return scale_set_not_found(id) };
        if !body.name.is_empty() {
            set.name = body.name;
        }
        if body.runner_group_id != 0 {
            set.runner_group_id = body.runner_group_id;
        }
        if !body.labels.is_empty() {
            set.labels = body.labels;
        }
        set.runner_setting = body.runner_setting;
        self.offer_queued_jobs(id);
        Reply::json(200, &self.scale_set_wire(&self.scale_sets[&id]))
    }

    /// `DELETE runnerscalesets/{id}`.
    pub(super) fn http_delete_scale_set(&mut self, id: i64) -> Reply {
        if !self.scale_sets.contains_key(&id) {
            return scale_set_not_found(id);
        }
        let busy = self.runners.values().any(|r| r.scale_set_id == Some(id) && r.job().is_some());
        if busy {
            let message = format!("runner scale set {id} has runners with jobs assigned");
            return Reply::exception(400, "RunnerScaleSetInUseException", message);
        }
        self.delete_scale_set(id);
        Reply::empty(204)
    }

    pub(crate) fn delete_scale_set(&mut self, id: i64) {
        let live: Vec<i64> = self
            .runners
            .values()
            .filter(|r| r.scale_set_id == Some(id) && !r.is_removed())
            .map(|r| r.id)
            .collect();
        for runner_id in live {
            self.remove(runner_id, RemovalReason::ScaleSetDeleted);
        }
        let sessions: Vec<String> =
            self.sessions.values().filter(|s| s.scale_set_id == id).map(|s| s.id.clone()).collect();
        for session_id in sessions {
            self.close_session(&session_id, "scale-set-deleted");
        }
        self.scale_sets.remove(&id);
        self.queues.remove(&id);
        self.deferred.remove(&id);
        self.record(EventKind::ScaleSetDeleted { scale_set_id: id });
        self.requeue_jobs_of(id);
    }

    /// The scale set as the wire describes it, with current statistics.
    pub(super) fn scale_set_wire(&self, set: &ScaleSet) -> ScaleSetAnswer {
        ScaleSetAnswer {
            id: set.id,
            name: set.name.clone(),
            runner_group_id: set.runner_group_id,
            runner_group_name: self.groups.get(&set.runner_group_id).cloned().unwrap_or_default(),
            labels: set.labels.clone(),
            runner_setting: set.runner_setting.clone(),
            created_on: self.timestamp(set.created_ms),
            runner_jit_config_url: format!(
                "{}_apis/runtime/runnerscalesets/{}/generatejitconfig",
                self.cfg.service_url, set.id
            ),
            statistics: self.statistics(set.id),
        }
    }
}

fn scale_set_not_found(id: i64) -> Reply {
    Reply::exception(404, "RunnerScaleSetNotFoundException", format!("runner scale set {id} not found"))
}
