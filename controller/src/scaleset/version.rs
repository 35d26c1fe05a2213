//! Which `app.kubernetes.io/version` labels this controller reconciles an AutoscalingRunnerSet for
//! (ARC-MODEL §2.1, §3.3 step 3).
//!
//! [`is_version_allowed`] is ARC's `IsVersionAllowed`: a `dev` or `canary-*` build accepts everything;
//! otherwise the label must equal the build version or share its major and minor numbers. Both sides
//! are parsed as `MAJOR[.MINOR[.PATCH]]` with Go's rules: digits only, no leading zeros, and whatever
//! follows the patch number's digits ignored. Anything that does not parse (including a missing label)
//! is not allowed.
//!
//! [`AcceptedVersions`] widens that: besides its own build version, this controller accepts the
//! releases of ARC's chart it is a drop-in for (0.13, 0.14 and 0.15 by default; `--accepted-versions`
//! replaces the list, `*` accepts any label). Where ARC deletes an ARS it does not accept (so that
//! helm can recreate it for the running build), this controller leaves the user's resource alone and
//! reports the mismatch as a `VersionAccepted=False` status condition and a log line.

use std::fmt;

/// The minor release lines of ARC's chart (`gha-runner-scale-set`) this controller accepts by default.
pub const ARC_CHART_VERSIONS: [&str; 3] = ["0.13", "0.14", "0.15"];

/// Accepts any label, a missing one included.
pub const ANY_VERSION: &str = "*";

/// The `app.kubernetes.io/version` labels a controller build reconciles: its own version's
/// `MAJOR.MINOR` line, and each listed line (`MAJOR[.MINOR[.PATCH]]`, compared by major and minor as
/// ARC compares them) or [`ANY_VERSION`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptedVersions {
    lines: Vec<String>,
}

/// An `--accepted-versions` entry that is neither a version nor `*`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("accepted version {entry:?} is not MAJOR[.MINOR[.PATCH]] (digits, no leading zeros) or \"*\"")]
pub struct InvalidAcceptedVersion {
    /// The entry as given.
    pub entry: String,
}

impl Default for AcceptedVersions {
    /// ARC's chart lines 0.13, 0.14 and 0.15.
    fn default() -> Self {
        AcceptedVersions { lines: ARC_CHART_VERSIONS.iter().map(|v| (*v).to_string()).collect() }
    }
}

impl AcceptedVersions {
    /// The lines `entries` name (besides the build's own, which is always accepted); an entry that is
    /// not a version or `*` is an error naming it.
    pub fn parse(entries: &[impl AsRef<str>]) -> Result<Self, InvalidAcceptedVersion> {
        let mut lines = Vec::new();
        for entry in entries.iter().map(|e| e.as_ref().trim()).filter(|e| !e.is_empty()) {
            if entry != ANY_VERSION && major_minor(entry).is_none() {
                return Err(InvalidAcceptedVersion { entry: entry.to_string() });
            }
            lines.push(entry.to_string());
        }
        Ok(AcceptedVersions { lines })
    }

    /// Whether an ARS labelled `resource_version` (empty when unlabelled) is reconciled by a controller
    /// built as `build_version`.
    pub fn accepts(&self, resource_version: &str, build_version: &str) -> bool {
        is_version_allowed(resource_version, build_version)
            || self.lines.iter().any(|line| line == ANY_VERSION || is_version_allowed(resource_version, line))
    }

    /// The accepted lines as a sentence fragment for messages: `0.13, 0.14, 0.15 and 0.1 (this build)`.
    pub fn describe(&self, build_version: &str) -> String {
        let build = major_minor(build_version)
            .map_or_else(|| build_version.to_string(), |(major, minor)| format!("{major}.{minor}"));
        let mut parts = self.lines.clone();
        parts.push(format!("{build} (this build)"));
        match parts.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => parts.join(""),
        }
    }
}

impl fmt::Display for AcceptedVersions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.lines.join(","))
    }
}

/// The status condition that reports a label this controller does not accept.
pub const CONDITION_VERSION_ACCEPTED: &str = "VersionAccepted";
/// Its reason while the label is not accepted.
pub const REASON_VERSION_NOT_ACCEPTED: &str = "VersionNotAccepted";

/// The condition's (and the log line's) message for an ARS labelled `resource_version`.
pub fn not_accepted_message(
    resource_version: &str,
    accepted: &AcceptedVersions,
    build_version: &str,
) -> String {
    let label =
        if resource_version.is_empty() { "missing".to_string() } else { format!("{resource_version:?}") };
    format!(
        "label app.kubernetes.io/version is {label}; this controller (version {build_version}) accepts {}; \
         the AutoscalingRunnerSet is left as it is and not reconciled until the label or the controller's \
         --accepted-versions changes",
        accepted.describe(build_version)
    )
}

/// Whether a resource labelled `resource_version` may be reconciled by a controller built as
/// `build_version`.
pub fn is_version_allowed(resource_version: &str, build_version: &str) -> bool {
    if build_version == "dev" || resource_version == build_version || build_version.starts_with("canary-") {
        return true;
    }
    match (major_minor(resource_version), major_minor(build_version)) {
        (Some(resource), Some(build)) => resource == build,
        _ => false,
    }
}

/// `(major, minor)` of `MAJOR[.MINOR[.PATCH…]]`, as Go's `parseSemver` reads it: a missing minor
/// reads as `0`, and anything after the patch number's digits is ignored.
fn major_minor(version: &str) -> Option<(&str, &str)> {
    let (major, rest) = leading_number(version)?;
    let Some(rest) = dotted(rest)? else { return Some((major, "0")) };
    let (minor, rest) = leading_number(rest)?;
    let Some(rest) = dotted(rest)? else { return Some((major, minor)) };
    leading_number(rest)?;
    Some((major, minor))
}

/// After a number: `None` for the end of input, `Some(tail)` after a dot, and a failure otherwise.
fn dotted(rest: &str) -> Option<Option<&str>> {
    match rest.strip_prefix('.') {
        Some(tail) => Some(Some(tail)),
        None if rest.is_empty() => Some(None),
        None => None,
    }
}

/// Go's `parseInt`: the leading ASCII digits and what follows them; no leading zero unless the
/// number is `0`, and at least one digit.
fn leading_number(text: &str) -> Option<(&str, &str)> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || (digits > 1 && text.starts_with('0')) {
        return None;
    }
    Some(text.split_at(digits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_version_and_dev_or_canary_builds_allow_anything() {
        assert!(is_version_allowed("0.1.0", "0.1.0"));
        assert!(is_version_allowed("garbage", "dev"));
        assert!(is_version_allowed("", "canary-1234"));
        assert!(is_version_allowed("weird", "weird"));
    }

    #[test]
    fn patch_releases_of_one_minor_are_compatible() {
        assert!(is_version_allowed("0.13.0", "0.13.1"));
        assert!(is_version_allowed("1", "1.0.7"));
        assert!(is_version_allowed("2.4", "2.4.0"));
        // Go stops reading after the patch number's digits.
        assert!(is_version_allowed("0.13.0-rc1", "0.13.2"));
        assert!(is_version_allowed("0.13.0.7", "0.13.2"));
    }

    #[test]
    fn another_minor_or_major_is_not() {
        assert!(!is_version_allowed("0.1.0", "0.2.0"));
        assert!(!is_version_allowed("1.2.0", "2.2.0"));
    }

    #[test]
    fn arc_chart_releases_0_13_to_0_15_and_the_build_line_are_accepted_by_default() {
        let accepted = AcceptedVersions::default();
        for version in ["0.13.0", "0.14.1", "0.15.2", "0.1.0", "0.1.9"] {
            assert!(accepted.accepts(version, "0.1.0"), "{version} should be accepted");
        }
        for version in ["0.12.1", "0.16.0", "1.14.1", "", "latest"] {
            assert!(!accepted.accepts(version, "0.1.0"), "{version:?} should not be accepted");
        }
        assert_eq!(accepted.describe("0.1.0"), "0.13, 0.14, 0.15 and 0.1 (this build)");
    }

    #[test]
    fn the_accepted_list_is_replaceable_and_a_star_accepts_any_label() {
        let only = AcceptedVersions::parse(&["0.12"]).unwrap();
        assert!(only.accepts("0.12.3", "0.1.0") && only.accepts("0.1.2", "0.1.0"));
        assert!(!only.accepts("0.14.1", "0.1.0"));
        let any = AcceptedVersions::parse(&["*"]).unwrap();
        assert!(any.accepts("", "0.1.0") && any.accepts("garbage", "0.1.0"));
        assert_eq!(AcceptedVersions::parse(&[" ", ""]).unwrap().describe("0.1.0"), "0.1 (this build)");
    }

    #[test]
    fn an_accepted_version_that_does_not_parse_is_refused_by_name() {
        let err = AcceptedVersions::parse(&["0.14", "v0.15"]).unwrap_err();
        assert_eq!(err, InvalidAcceptedVersion { entry: "v0.15".into() });
        assert!(err.to_string().contains("\"v0.15\""), "{err}");
    }

    #[test]
    fn unparseable_or_missing_versions_are_not_allowed() {
        for bad in ["", "v0.1.0", "0.01.0", "0.1.x", "0..1", "0-1", "0.1-rc1", "0.1."] {
            assert!(!is_version_allowed(bad, "0.1.0"), "{bad:?} should not be allowed");
        }
        assert!(!is_version_allowed("0.1.0", "release"));
    }
}
