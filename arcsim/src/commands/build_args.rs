//! The `--profile` and `--variant` options shared by the commands that run one controller build
//! (`run`, `shrink`, `explore`); `sweep` takes several variants and parses its own.

use arc_controller::Profile;

use arc_scenarios::variant::{Build, Variant};

/// Which controller build a command runs: a profile and one variant of it.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct BuildArgs {
    /// Profile: the controller build the variant is a variant of (see `arcsim list`).
    #[arg(long, default_value = "arcsim", value_parser = crate::cli::parse_profile)]
    pub profile: Profile,
    /// Variant: `fixed` or a historic bug (see `arcsim list`).
    #[arg(long, default_value = "fixed", value_parser = crate::cli::parse_variant)]
    pub variant: Variant,
}

impl BuildArgs {
    /// The build these options name.
    pub fn build(&self) -> Build {
        Build::new(self.profile, self.variant)
    }
}
