//! The switch options `arc-controller run` and `arc-controller listener` share: a named profile, then
//! single switches on or off by name. An unknown profile or switch name is an error that lists the
//! valid ones.

use arc_controller::{Profile, Switches};

/// `--profile`, `--disable-fix`, `--disable-optimisation`, `--enable`, `--disable`.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct SwitchArgs {
    /// The controller build to run (`arc-0.13.1`, `arc-0.15.0`, `change-set`, `arcsim`).
    #[arg(long, default_value = "arcsim", value_parser = parse_profile)]
    pub profile: Profile,
    /// Switch a historic fix off (repeatable), e.g. `--disable-fix already_exists_requeue`.
    #[arg(long = "disable-fix", value_name = "NAME")]
    pub disable_fixes: Vec<String>,
    /// Switch an optimisation off (repeatable), e.g. `--disable-optimisation predicates`.
    #[arg(long = "disable-optimisation", value_name = "NAME")]
    pub disable_optimisations: Vec<String>,
    /// Switch any switch on by name (repeatable), e.g. `--enable scaling.actionable_revision`.
    #[arg(long = "enable", value_name = "SWITCH")]
    pub enable: Vec<String>,
    /// Switch any switch off by name (repeatable), e.g. `--disable failure_time_kept`.
    #[arg(long = "disable", value_name = "SWITCH")]
    pub disable: Vec<String>,
}

/// Parses a profile name, with an error listing the valid ones.
pub(crate) fn parse_profile(text: &str) -> Result<Profile, String> {
    text.parse().map_err(|e: arc_controller::switches::UnknownProfile| e.to_string())
}

impl SwitchArgs {
    /// The profile's switches with the named ones changed, in the order: fixes off, optimisations
    /// off, switches on, switches off.
    pub(crate) fn switches(&self) -> Result<Switches, String> {
        let mut switches = self.profile.switches();
        let changes = [
            (Some("fixes"), &self.disable_fixes, false),
            (Some("optimisations"), &self.disable_optimisations, false),
            (None, &self.enable, true),
            (None, &self.disable, false),
        ];
        for (group, names, on) in changes {
            for name in names {
                switches.set_in(group, name, on).map_err(|e| e.to_string())?;
            }
        }
        Ok(switches)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_is_the_base_and_named_switches_change_it() {
        let args = SwitchArgs {
            profile: Profile::Arc0131,
            disable_fixes: vec!["already_exists_requeue".into()],
            enable: vec!["predicates".into()],
            ..Default::default()
        };
        let switches = args.switches().unwrap();
        assert!(!switches.fixes.already_exists_requeue && switches.optimisations.predicates);
        assert!(!switches.scaling.actionable_revision, "the rest is arc-0.13.1's");
    }

    #[test]
    fn unknown_profiles_and_switches_are_refused_with_the_valid_names() {
        let err = parse_profile("arc-9").unwrap_err();
        assert!(err.contains("unknown profile") && err.contains("arcsim"), "{err}");
        let args = SwitchArgs { disable_optimisations: vec!["turbo".into()], ..Default::default() };
        let err = args.switches().unwrap_err();
        assert!(
            err.contains("unknown switch \"turbo\" in optimisations") && err.contains("predicates"),
            "{err}"
        );
        let args = SwitchArgs { disable_fixes: vec!["predicates".into()], ..Default::default() };
        assert!(args.switches().unwrap_err().contains("in fixes"));
    }
}
