//! ARC's `IsVersionAllowed`: may this controller build reconcile an AutoscalingRunnerSet labelled
//! `app.kubernetes.io/version = <resource version>`? (ARC-MODEL §2.1, §3.3 step 3.)
//!
//! A `dev` or `canary-*` build accepts everything; otherwise the label must equal the build version
//! or share its major and minor numbers. Both sides are parsed as `MAJOR[.MINOR[.PATCH]]` with Go's
//! rules: digits only, no leading zeros, and whatever follows the patch number's digits ignored. Anything that does not parse
//! (including a missing label) is not allowed, and the controller deletes the ARS so that helm can
//! recreate it for this build.

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
    fn unparseable_or_missing_versions_are_not_allowed() {
        for bad in ["", "v0.1.0", "0.01.0", "0.1.x", "0..1", "0-1", "0.1-rc1", "0.1."] {
            assert!(!is_version_allowed(bad, "0.1.0"), "{bad:?} should not be allowed");
        }
        assert!(!is_version_allowed("0.1.0", "release"));
    }
}
