//! [`Table`]: a listing at a human scale — a title, column headers, rows aligned under them, the last
//! column wrapped so that every line fits [`WIDTH`] columns; rows may come in named groups (the kill
//! table, by variant). The same table as tab-separated values (`--tsv`) is what scripts read (it may
//! carry columns the text leaves out), and as Markdown (`--markdown`) what `docs/catalog.md` holds.

use std::fmt::Write as _;

/// The widest line a listing prints.
pub const WIDTH: usize = 100;

/// The narrowest the last column gets beside the others before it goes on lines of its own.
const MIN_LAST: usize = 30;

/// A listing.
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// What it lists, and how to read it (wrapped).
    pub title: String,
    /// The header of each column, upper case; with groups, the first names the groups' column.
    pub headers: Vec<&'static str>,
    /// The rows, in groups (one unnamed group for a plain table).
    pub groups: Vec<(String, Vec<Vec<String>>)>,
    /// Columns of the TSV form only, after the others: a header and a value per row, in row order.
    pub tsv_only: Vec<(&'static str, Vec<String>)>,
}

impl Table {
    /// A table of `rows` under `headers`.
    pub fn new(title: impl Into<String>, headers: &[&'static str], rows: Vec<Vec<String>>) -> Table {
        Table::grouped(title, headers, vec![(String::new(), rows)])
    }

    /// A table whose rows come in named `groups`; `headers[0]` names the groups' column.
    pub fn grouped(
        title: impl Into<String>,
        headers: &[&'static str],
        groups: Vec<(String, Vec<Vec<String>>)>,
    ) -> Table {
        Table { title: title.into(), headers: headers.to_vec(), groups, tsv_only: Vec::new() }
    }

    /// This table with a column that only its TSV form has (`values` in row order).
    #[must_use]
    pub fn with_tsv_column(mut self, header: &'static str, values: Vec<String>) -> Table {
        self.tsv_only.push((header, values));
        self
    }

    fn is_grouped(&self) -> bool {
        self.groups.iter().any(|(name, _)| !name.is_empty())
    }

    /// The columns printed under the headers (a grouped table prints its groups' names as lines).
    fn row_headers(&self) -> &[&'static str] {
        if self.is_grouped() { &self.headers[1..] } else { &self.headers }
    }

    /// The table as text: every line at most [`WIDTH`] columns (a single word longer than a line
    /// stays whole).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for line in wrap(&self.title, WIDTH) {
            let _ = writeln!(out, "{line}");
        }
        let headers = self.row_headers();
        let n = headers.len();
        let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
        for row in self.groups.iter().flat_map(|(_, rows)| rows) {
            for (w, cell) in widths.iter_mut().zip(row).take(n - 1) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let indent = 2;
        let lead: usize = indent + widths[..n - 1].iter().map(|w| w + 2).sum::<usize>();
        let beside = WIDTH.saturating_sub(lead) >= MIN_LAST;
        let header: Vec<String> = headers.iter().map(ToString::to_string).collect();
        self.row(&mut out, indent, &widths, &header, beside);
        for (name, rows) in &self.groups {
            if !name.is_empty() {
                let _ = writeln!(out, "{name}:");
            }
            for row in rows {
                self.row(&mut out, indent, &widths, row, beside);
            }
        }
        out
    }

    fn row(&self, out: &mut String, indent: usize, widths: &[usize], cells: &[String], beside: bool) {
        let n = widths.len();
        let mut line = " ".repeat(indent);
        for (cell, w) in cells.iter().zip(widths).take(n - 1) {
            let _ = write!(line, "{cell:<w$}  ");
        }
        let last = cells.get(n - 1).map_or("", String::as_str);
        if beside {
            let lead = line.chars().count();
            for (i, part) in wrap(last, WIDTH - lead).into_iter().enumerate() {
                let head = if i == 0 { std::mem::take(&mut line) } else { " ".repeat(lead) };
                let _ = writeln!(out, "{}", format!("{head}{part}").trim_end());
            }
            if !line.is_empty() {
                let _ = writeln!(out, "{}", line.trim_end());
            }
        } else {
            let _ = writeln!(out, "{}", line.trim_end());
            for part in wrap(last, WIDTH - indent - 4).into_iter().filter(|p| !p.is_empty()) {
                let _ = writeln!(out, "{}{part}", " ".repeat(indent + 4));
            }
        }
    }

    /// The table as tab-separated values: the header row, then one line a row (a grouped table's
    /// group name first).
    pub fn tsv(&self) -> String {
        let mut headers = self.headers.clone();
        headers.extend(self.tsv_only.iter().map(|(h, _)| *h));
        let mut out = headers.join("\t");
        out.push('\n');
        let rows = self.groups.iter().flat_map(|(name, rows)| rows.iter().map(move |row| (name, row)));
        for (i, (name, row)) in rows.enumerate() {
            let mut cells: Vec<&str> = Vec::new();
            if self.is_grouped() {
                cells.push(name);
            }
            cells.extend(row.iter().map(String::as_str));
            cells.extend(self.tsv_only.iter().map(|(_, values)| values.get(i).map_or("", String::as_str)));
            let _ = writeln!(out, "{}", cells.join("\t").replace('\n', " "));
        }
        out
    }
}

impl Table {
    /// The table in Markdown: its title as a paragraph, then a pipe table (a grouped table's group
    /// name in its first column, on every row). Cells with `|` have it escaped.
    pub fn markdown(&self) -> String {
        let cell = |text: &str| text.replace('|', "\\|").replace('\n', " ");
        let mut out = format!("{}\n\n| {} |\n", self.title, self.headers.join(" | "));
        let _ = writeln!(out, "|{}", "---|".repeat(self.headers.len()));
        for (name, rows) in &self.groups {
            for row in rows {
                let mut cells: Vec<String> = Vec::new();
                if self.is_grouped() {
                    cells.push(cell(name));
                }
                cells.extend(row.iter().map(|c| cell(c)));
                let _ = writeln!(out, "| {} |", cells.join(" | "));
            }
        }
        out
    }
}

/// `text` broken at spaces into lines of at most `width` columns.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long() -> String {
        "a description that goes on and on, longer than any line the listing prints, to be wrapped ".repeat(3)
    }

    #[test]
    fn rows_align_under_their_headers_and_every_line_fits() {
        let rows = vec![
            vec!["standard".to_string(), long()],
            vec!["assign-during-delete".to_string(), "short".to_string()],
        ];
        let text = Table::new("scenarios:", &["NAME", "WHAT IT RUNS"], rows).text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "  NAME                  WHAT IT RUNS");
        assert!(lines[2].starts_with("  standard              a description"), "{text}");
        assert!(lines[3].starts_with(&" ".repeat(24)), "the wrapped part hangs under its column:\n{text}");
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
        assert!(text.contains("  assign-during-delete  short"), "{text}");
    }

    #[test]
    fn groups_print_their_name_once_and_tsv_repeats_it() {
        let groups = vec![("bug-1".to_string(), vec![vec!["s".to_string(), "o".to_string()]])];
        let table = Table::grouped("kills:", &["VARIANT", "SCENARIO", "ORACLE"], groups);
        let text = table.text();
        assert!(text.contains("\n  SCENARIO  ORACLE\nbug-1:\n  s         o\n"), "{text}");
        let table = table.with_tsv_column("BY", vec!["test".into()]);
        assert_eq!(table.tsv(), "VARIANT\tSCENARIO\tORACLE\tBY\nbug-1\ts\to\ttest\n");
    }

    #[test]
    fn markdown_is_a_pipe_table_under_its_title_with_pipes_escaped() {
        let groups = vec![("bug-1".to_string(), vec![vec!["s".to_string(), "a | b".to_string()]])];
        let md = Table::grouped("kills:", &["VARIANT", "SCENARIO", "ORACLE"], groups).markdown();
        assert_eq!(md, "kills:\n\n| VARIANT | SCENARIO | ORACLE |\n|---|---|---|\n| bug-1 | s | a \\| b |\n");
    }

    #[test]
    fn wide_leading_columns_put_the_last_on_lines_of_its_own() {
        let rows = vec![vec!["x".repeat(80), long()]];
        let text = Table::new("t", &["A", "B"], rows).text();
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH.max(82)), "{text}");
        assert!(text.lines().nth(4).is_some_and(|l| l.starts_with("      a description")), "{text}");
        let empty = Table::new("t", &["A", "B"], vec![vec!["x".repeat(80), String::new()]]).text();
        assert_eq!(empty.lines().count(), 4, "an empty last column adds no line:\n{empty}");
    }
}
