//! The commands `arcsim serve` reads on stdin, one a line, and the durations they and `--until` take.

use std::time::Duration;

/// What to do with the paused world.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Run it on for this long.
    Step(Duration),
    /// Run it until a trace line contains this text.
    Until(String),
    /// Run it to its end.
    Continue,
    /// Say where it is.
    Status,
    /// List the commands.
    Help,
    /// Stop serving.
    Quit,
}

/// A line that is not a command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadCommand(String);

/// The commands, as `help` prints them.
pub const HELP: &str = "commands: step DURATION (e.g. step 5s, step 250ms, step 2m) · until TEXT (run until a \
trace line contains TEXT) · continue (run to the end) · status · help · quit";

impl std::str::FromStr for Command {
    type Err = BadCommand;

    fn from_str(line: &str) -> Result<Command, BadCommand> {
        let line = line.trim();
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        match word {
            "step" | "s" if rest.is_empty() => Ok(Command::Step(Duration::from_secs(1))),
            "step" | "s" => parse_duration(rest).map(Command::Step).map_err(BadCommand),
            "until" | "u" if rest.is_empty() => Err(BadCommand("until needs the text to wait for".into())),
            "until" | "u" => Ok(Command::Until(rest.to_string())),
            "continue" | "c" => Ok(Command::Continue),
            "status" => Ok(Command::Status),
            "help" | "?" => Ok(Command::Help),
            "quit" | "exit" | "q" => Ok(Command::Quit),
            other => Err(BadCommand(format!("unknown command {other:?}; {HELP}"))),
        }
    }
}

/// A duration with its unit: `400s`, `1500ms`, `2m`, `1h`, `2.5s`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let bad = || format!("invalid duration {text:?}: a number and a unit, e.g. 400s, 1500ms, 2m, 1h");
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(bad)?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().map_err(|_| bad())?;
    let ms_per_unit = match unit.trim() {
        "ms" => 1.0,
        "s" => 1_000.0,
        "m" | "min" => 60_000.0,
        "h" => 3_600_000.0,
        _ => return Err(bad()),
    };
    let ms = number * ms_per_unit;
    if !ms.is_finite() || ms > 1e12 {
        return Err(format!("invalid duration {text:?}: too long"));
    }
    Ok(Duration::from_millis(ms.round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_need_a_unit() {
        assert_eq!(parse_duration("400s"), Ok(Duration::from_secs(400)));
        assert_eq!(parse_duration("1500ms"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2.5s"), Ok(Duration::from_millis(2500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        for bad in ["400", "s", "4x", "", "-3s", "1e99h"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert!(parse_duration("400").unwrap_err().contains("e.g. 400s"));
    }

    #[test]
    fn commands_are_read_one_a_line() {
        assert_eq!("step 5s".parse(), Ok(Command::Step(Duration::from_secs(5))));
        assert_eq!("until job-assigned runner=7".parse(), Ok(Command::Until("job-assigned runner=7".into())));
        assert_eq!(" continue ".parse(), Ok(Command::Continue));
        assert_eq!("quit".parse(), Ok(Command::Quit));
        assert!("until".parse::<Command>().is_err());
        assert!("jump 5s".parse::<Command>().unwrap_err().to_string().contains("unknown command \"jump\""));
        assert!("step five".parse::<Command>().unwrap_err().to_string().contains("invalid duration"));
    }
}
