//! The switch option `arc-controller run` and `arc-controller listener` share. The shipped binary runs
//! the fixed controller (profile `arcsim`): the only switches it offers are the optimisations, which
//! an operator may turn off one by one (to compare, or to rule one out). Profiles that emulate older
//! releases and switches that put a historic bug back are the simulation's to choose (the world hands
//! them to `arc_controller::start` as `Inputs::switches`), never a production flag. An unknown name is
//! an error that lists the valid ones.

use arc_controller::{Profile, Switches};

/// `--disable-optimisation`.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct SwitchArgs {
    /// Switch an optimisation off (repeatable), e.g. `--disable-optimisation predicates`.
    #[arg(long = "disable-optimisation", value_name = "NAME")]
    pub disable_optimisations: Vec<String>,
}

impl SwitchArgs {
    /// The fixed controller's switches with the named optimisations off.
    pub(crate) fn switches(&self) -> Result<Switches, String> {
        let mut switches = Profile::Arcsim.switches();
        for name in &self.disable_optimisations {
            switches.set_in(Some("optimisations"), name, false).map_err(|e| e.to_string())?;
        }
        Ok(switches)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_controller_with_named_optimisations_off() {
        let args = SwitchArgs { disable_optimisations: vec!["predicates".into()] };
        let switches = args.switches().unwrap();
        assert!(!switches.optimisations.predicates);
        let fixed = Profile::Arcsim.switches();
        assert_eq!(switches.fixes, fixed.fixes, "every fix stays on");
        assert_eq!(SwitchArgs::default().switches().unwrap(), fixed);
    }

    #[test]
    fn unknown_optimisations_and_fixes_are_refused_with_the_valid_names() {
        let args = SwitchArgs { disable_optimisations: vec!["turbo".into()] };
        let err = args.switches().unwrap_err();
        assert!(
            err.contains("unknown switch \"turbo\" in optimisations") && err.contains("predicates"),
            "{err}"
        );
        let args = SwitchArgs { disable_optimisations: vec!["already_exists_requeue".into()] };
        assert!(args.switches().unwrap_err().contains("in optimisations"), "a fix is not an optimisation");
    }

    #[test]
    fn no_flag_puts_a_bug_back() {
        use clap::{CommandFactory, Parser};
        #[derive(Parser)]
        struct Probe {
            #[command(flatten)]
            switches: SwitchArgs,
        }
        let flags: Vec<String> =
            Probe::command().get_arguments().filter_map(|a| a.get_long().map(str::to_string)).collect();
        assert_eq!(flags, ["disable-optimisation"]);
        for bug_flag in ["--profile", "--disable-fix", "--enable", "--disable"] {
            assert!(Probe::try_parse_from(["arc-controller", bug_flag, "x"]).is_err(), "{bug_flag}");
        }
    }
}
