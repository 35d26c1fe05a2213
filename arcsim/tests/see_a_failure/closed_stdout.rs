//! A reader that closes the pipe early (`arcsim list | head -2`) ends arcsim quietly, with the exit
//! status of a process that met SIGPIPE, not a panic.

use std::process::{Command, Stdio};

#[test]
fn a_closed_pipe_ends_arcsim_quietly_with_status_141() {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader); // the reader is gone before arcsim writes its first line
    let output = Command::new(env!("CARGO_BIN_EXE_arcsim"))
        .arg("list")
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("arcsim runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(141), "{stderr}");
}
