//! The timeline page: one self-contained HTML file (styles, script and data inline, the data packed;
//! nothing fetched), drawn on a canvas by `page.js`. The verdict, the violations and the lane names are also written as
//! HTML, so the document says what it shows before any script runs.

use std::fmt::Write as _;

use super::packed::{ENCODING, pack, unpack};
use super::timeline::Timeline;

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// The id of the `<script>` element that holds the timeline, packed ([`super::packed`]).
pub const DATA_ID: &str = "arcsim-data";

/// The timeline's JSON text in `page` (a page [`page`] wrote), or why there is none.
pub fn embedded_json(page: &str) -> Result<String, String> {
    let id = format!("id=\"{DATA_ID}\">");
    let start = page.find(&id).ok_or("no data element")? + id.len();
    let end = start + page[start..].find("</script>").ok_or("the data element has no end")?;
    unpack(&page[start..end])
}

/// The page for `timeline`.
pub fn page(timeline: &Timeline) -> String {
    let meta = &timeline.meta;
    let title = format!("arcsim {} {} / {} / seed {}", meta.verdict, meta.scenario, meta.variant, meta.seed);
    let mut out = String::with_capacity(1 << 20);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'\">\n\
         <title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n",
        escape(&title)
    );
    header(&mut out, timeline);
    violations(&mut out, timeline);
    out.push_str(
        "<div id=\"toolbar\"><input id=\"filter\" type=\"search\" placeholder=\"filter by object: pod, runner 17, job 4, ns/name…\">\
         <button id=\"to-violation\">violation window</button><button id=\"fit\">whole run</button>\
         <button id=\"zoom-in\">+</button><button id=\"zoom-out\">−</button><div id=\"legend\"></div><div id=\"status\"></div></div>\n\
         <div id=\"errors\"></div>\n\
         <div id=\"main\"><div id=\"plot\"><canvas id=\"timeline\"></canvas></div><aside id=\"detail\"></aside></div>\n",
    );
    lanes(&mut out, timeline);
    let _ = writeln!(
        out,
        "<script type=\"application/octet-stream\" data-encoding=\"{ENCODING}\" id=\"{DATA_ID}\">{}</script>",
        pack(&data_json(timeline))
    );
    let _ = write!(out, "<script>\n{JS}</script>\n</body>\n</html>\n");
    out
}

fn header(out: &mut String, t: &Timeline) {
    let m = &t.meta;
    let _ = writeln!(
        out,
        "<header><h1>arcsim <span class=\"verdict-{v}\">{v}</span> {} / {} / seed {}</h1>\
         <span>{} events · {} lanes · {:.1} s simulated · trace {}</span><code>{}</code></header>",
        escape(&m.scenario),
        escape(&m.variant),
        escape(&m.seed),
        t.events.t.len(),
        t.lanes.len(),
        m.end_ms as f64 / 1000.0,
        m.trace_hash,
        escape(&m.replay),
        v = m.verdict,
    );
}

fn violations(out: &mut String, t: &Timeline) {
    out.push_str("<section id=\"violations\">");
    for v in &t.violations {
        let _ = write!(
            out,
            "<button class=\"violation\" data-oracle=\"{}\" data-at-ms=\"{}\"><span class=\"oracle\">✖ {}</span> at {:.3} s [{}]: {}</button>",
            escape(v.oracle),
            v.at_ms,
            escape(v.oracle),
            v.at_ms as f64 / 1000.0,
            escape(&v.objects.join(", ")),
            escape(&v.message)
        );
    }
    out.push_str("</section>\n");
}

fn lanes(out: &mut String, t: &Timeline) {
    out.push_str("<details id=\"lanes\"><summary>lanes</summary><ol>");
    for lane in &t.lanes {
        let _ = write!(out, "<li data-section=\"{}\">{}</li>", section_name(lane), escape(&lane.name));
    }
    out.push_str("</ol></details>\n");
}

fn section_name(lane: &super::lanes::Lane) -> String {
    serde_json::to_value(lane.section).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// The timeline as JSON that is safe inside a `<script>` element: every `<` (only ever inside a
/// string) is written `\u003c`, so no `</script>` or `<!--` can end or confuse the element.
pub fn data_json(t: &Timeline) -> String {
    serde_json::to_string(t).unwrap_or_else(|_| "{}".into()).replace('<', "\\u003c")
}

/// `text` with HTML's special characters escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_text_is_escaped() {
        assert_eq!(escape("<a href=\"x\">&'</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
    }

    #[test]
    fn the_page_script_and_styles_are_inline_and_fetch_nothing() {
        for text in [CSS, JS] {
            for remote in ["http://", "https://", "//cdn", "import(", "fetch(", "XMLHttpRequest", "@import"] {
                assert!(!text.contains(remote), "the page must not load {remote}");
            }
        }
    }
}
