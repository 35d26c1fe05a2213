//! The one rule every serving subcommand (`arcsim apiserver`, `arcsim stage`) follows: the fakes have
//! no authentication, so they listen on loopback only, unless `--allow-remote` says otherwise (and
//! then with a warning that says why it is dangerous).

use std::net::SocketAddr;

/// Why an address was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "refusing to listen on {addr}: the fakes have no authentication, so anyone who can reach them can \
     read and change everything they serve; listen on a loopback address (127.0.0.1, ::1) or pass \
     --allow-remote"
)]
pub struct RemoteRefused {
    /// The address asked for.
    pub addr: SocketAddr,
}

/// Ok for a loopback address; for any other, an error unless `allow_remote`, and then a warning on
/// stderr.
pub fn check_listen(addr: SocketAddr, allow_remote: bool) -> Result<(), RemoteRefused> {
    if addr.ip().is_loopback() {
        return Ok(());
    }
    if !allow_remote {
        return Err(RemoteRefused { addr });
    }
    eprintln!(
        "warning: listening on {addr} (--allow-remote): the fakes have no authentication; anyone who can \
         reach this address can read and change everything they serve"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_allowed_and_anything_else_needs_allow_remote() {
        assert!(check_listen("127.0.0.1:6443".parse().unwrap(), false).is_ok());
        assert!(check_listen("[::1]:6443".parse().unwrap(), false).is_ok());
        let wide: SocketAddr = "0.0.0.0:6443".parse().unwrap();
        let err = check_listen(wide, false).unwrap_err();
        assert!(err.to_string().contains("--allow-remote") && err.to_string().contains("no authentication"));
        assert!(check_listen(wide, true).is_ok());
    }
}
