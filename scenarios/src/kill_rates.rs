//! Measured rates, as data. `scenarios/kill-rates.tsv` holds one line per kill row — scenario,
//! variant, oracle, and the `hits` of `seeds` consecutive seeds from `from` in which the oracle
//! reported the variant; `arcsim measure kills --write` rewrites the lines it measured, and the kill
//! table ([`crate::kill_table`]) derives every bound from them. `scenarios/report-rates.tsv` holds one
//! line per (field report, profile, symptom oracle): the seeds in which the profile's fixed build
//! showed the symptom in the report's world (`arcsim measure reports --write`). `arcsim list` and the
//! generated catalog print both. Rates are measurements, so they live beside the code, not in it.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

use arc_judging::rates::Rate;

/// The file, from the repository's root.
pub const RATES_FILE: &str = "scenarios/kill-rates.tsv";

/// The file as built into this binary.
const RATES: &str = include_str!("../kill-rates.tsv");

/// The column names, in order.
const HEADER: &str = "scenario\tvariant\toracle\thits\tseeds\tfrom";

/// The field reports' file, from the repository's root.
pub const REPORT_RATES_FILE: &str = "scenarios/report-rates.tsv";

/// The field reports' file as built into this binary.
const REPORT_RATES: &str = include_str!("../report-rates.tsv");

/// Its column names, in order: a line's key is (report, profile, oracle).
const REPORT_HEADER: &str = "report\tprofile\toracle\thits\tseeds\tfrom";

/// A table of rates: which file, and its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// The kill rows' rates (`scenarios/kill-rates.tsv`): keys (scenario, variant, oracle).
    Kills,
    /// The field reports' rates (`scenarios/report-rates.tsv`): keys (report, profile, oracle).
    Reports,
}

impl Table {
    /// The header line.
    fn header(self) -> &'static str {
        match self {
            Table::Kills => HEADER,
            Table::Reports => REPORT_HEADER,
        }
    }
}

/// A row's key: its scenario, build and oracle names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RateKey {
    /// The scenario (a field report's world, in the reports' table).
    pub scenario: String,
    /// The build: the bug variant of a kill row, or the profile (whose fixed build ran) of a field
    /// report's line.
    pub variant: String,
    /// The oracle (or twin oracle).
    pub oracle: String,
}

impl RateKey {
    /// The key of (`scenario`, `variant`, `oracle`).
    pub fn of(scenario: &str, variant: &str, oracle: &str) -> Self {
        RateKey { scenario: scenario.into(), variant: variant.into(), oracle: oracle.into() }
    }
}

impl fmt::Display for RateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} / {} / {}", self.scenario, self.variant, self.oracle)
    }
}

/// The rates, by row; ordered as the file is.
pub type Rates = BTreeMap<RateKey, Rate>;

/// A line of a rates file that does not read.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct RatesError {
    /// The 1-based line.
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

/// The rates built into this binary.
pub fn measured_rates() -> &'static Rates {
    static PARSED: OnceLock<Rates> = OnceLock::new();
    PARSED.get_or_init(|| parse(RATES).unwrap_or_else(|e| panic!("{RATES_FILE} must read: {e}")))
}

/// The field reports' rates built into this binary.
pub fn report_rates() -> &'static Rates {
    static PARSED: OnceLock<Rates> = OnceLock::new();
    PARSED.get_or_init(|| {
        parse_table(Table::Reports, REPORT_RATES)
            .unwrap_or_else(|e| panic!("{REPORT_RATES_FILE} must read: {e}"))
    })
}

/// Reads a kill-rates file's text: `#` comment lines, the header, then one line per row.
pub fn parse(text: &str) -> Result<Rates, RatesError> {
    parse_table(Table::Kills, text)
}

/// Reads the text of a file of `table`: `#` comment lines, the header, then one line per row.
pub fn parse_table(table: Table, text: &str) -> Result<Rates, RatesError> {
    let header = table.header();
    let mut rates = Rates::new();
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty());
    let error = |line: usize, message: String| RatesError { line: line + 1, message };
    match lines.next() {
        Some((_, found)) if found == header => {}
        Some((n, other)) => return Err(error(n, format!("expected the header {header:?}, found {other:?}"))),
        None => return Err(error(0, "no header".into())),
    }
    for (n, line) in lines {
        let fields: Vec<&str> = line.split('\t').collect();
        let [scenario, variant, oracle, hits, seeds, from] = fields[..] else {
            return Err(error(n, format!("expected 6 tab-separated fields, found {}", fields.len())));
        };
        let number = |field: &str, what: &str| {
            field.parse::<u64>().map_err(|_| error(n, format!("{what} {field:?} is not a number")))
        };
        let (hits, seeds) = (number(hits, "hits")?, number(seeds, "seeds")?);
        if hits > seeds {
            return Err(error(n, format!("{hits} hits of {seeds} seeds")));
        }
        let to_u32 = |v: u64| u32::try_from(v).map_err(|_| error(n, format!("{v} is too large")));
        let rate = Rate::measured(to_u32(hits)?, to_u32(seeds)?, number(from, "from")?);
        if rates.insert(RateKey::of(scenario, variant, oracle), rate).is_some() {
            return Err(error(n, format!("a second line for {scenario} / {variant} / {oracle}")));
        }
    }
    Ok(rates)
}

/// A kill-rates file's text for `rates`, with the comment lines of `previous` kept at its head.
pub fn format(rates: &Rates, previous: &str) -> String {
    format_table(Table::Kills, rates, previous)
}

/// The text of a file of `table` for `rates`, with the comment lines of `previous` kept at its head.
pub fn format_table(table: Table, rates: &Rates, previous: &str) -> String {
    let mut out: String =
        previous.lines().take_while(|l| l.starts_with('#')).map(|l| format!("{l}\n")).collect();
    out.push_str(table.header());
    out.push('\n');
    for (key, rate) in rates {
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\n",
            key.scenario, key.variant, key.oracle, rate.hits, rate.seeds, rate.from
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_file_reads_and_writes_back_as_it_was_sorted() {
        let rates = measured_rates();
        assert!(!rates.is_empty());
        assert_eq!(parse(&format(rates, RATES)).unwrap(), *rates);
        let reports = report_rates();
        assert!(!reports.is_empty());
        assert_eq!(
            parse_table(Table::Reports, &format_table(Table::Reports, reports, REPORT_RATES)).unwrap(),
            *reports
        );
    }

    #[test]
    fn a_bad_line_is_named() {
        let text = format!("{HEADER}\ns\tv\to\t5\t4\t1\n");
        assert!(parse(&text).unwrap_err().to_string().contains("line 2: 5 hits of 4 seeds"));
        let text = format!("{HEADER}\ns\tv\to\tx\t4\t1\n");
        assert!(parse(&text).unwrap_err().to_string().contains("hits \"x\" is not a number"));
        assert!(parse("scenario\n").unwrap_err().to_string().contains("expected the header"));
    }
}
