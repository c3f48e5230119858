//! The frame of every HTML page. A page fetches nothing (inline CSS and
//! SVG, no script, image, font or link; its Content-Security-Policy is
//! `default-src 'none'`), and closes void elements (`<meta .../>`) so that
//! it is well-formed XML as well as HTML5.

use std::fmt::Write as _;

use crate::sys::SystemFacts;
use crate::units::Size;

/// A verdict's `lines` as a page's first section, "The answer", a list
/// item per line with the part before the colon in bold.
pub(crate) fn answer(lines: &[String]) -> String {
    let mut out = String::from("<section id=\"verdict\">\n<h2>The answer</h2>\n<ul>\n");
    for line in lines {
        let (head, rest) = line.split_once(':').unwrap_or(("", line));
        let _ = writeln!(
            out,
            "<li><strong>{}:</strong> {}</li>",
            escape(head),
            escape(rest.trim_start())
        );
    }
    out += "</ul>\n</section>\n";
    out
}

/// Inline style. Nothing makes the page wider than the window: a wide
/// table scrolls inside itself, cells wrap and code breaks anywhere.
const STYLE: &str = "\
body{font-family:system-ui,sans-serif;max-width:75rem;margin:2rem auto;padding:0 1rem;\
color:#222;line-height:1.45}\
h1{font-size:1.6rem}h2{margin-top:2rem;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:1rem 0;font-size:.8rem;display:block;overflow-x:auto;\
max-width:100%}\
th,td{border:1px solid #ccc;padding:.2rem .4rem;text-align:left;vertical-align:top}\
th{background:#f2f2f2}td:first-child{white-space:nowrap}table[id^=ladder] td:nth-child(2){min-width:9rem}\
td.num{text-align:right;font-variant-numeric:tabular-nums}\
td.note{color:#666}tr.noisy td{background:#fff4e0}p.noisy{background:#fff4e0;padding:.3rem}dl{display:grid;grid-template-columns:max-content auto;gap:.2rem 1rem}\
dt{font-weight:600}dd{margin:0}figure{margin:1rem 0}\
figure svg{max-width:100%;height:auto}figcaption,p.small{color:#555;font-size:.9rem}\
code{font-size:.9em;overflow-wrap:anywhere}\
details.command pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:.8rem;\
background:#f6f6f6;padding:.4rem}";

/// `text` with `&`, `<`, `>`, `"` and `'` escaped, for text and attributes;
/// control characters XML does not allow (an end's stderr may hold
/// terminal escapes) become U+FFFD.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(super::xml_char(c)),
        }
    }
    out
}

/// The line that says a result was interrupted, when it was.
pub(crate) fn interrupted(out: &mut String, interrupted: bool) {
    if interrupted {
        let _ = writeln!(
            out,
            "<p id=\"interrupted\"><strong>{}.</strong></p>",
            escape(super::INTERRUPTED)
        );
    }
}

/// The noisy rows' paragraphs in a `div` of their own, if any.
pub(crate) fn noisy_paragraphs(out: &mut String, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    *out += "<div id=\"noisy\">\n";
    for line in lines {
        let _ = writeln!(
            out,
            "<p class=\"noisy\">{}</p>",
            escape(line).replace('\n', "<br/>")
        );
    }
    *out += "</div>\n";
}

/// The page's start, up to its `<h1>`, with `extra_style` after the
/// inline style.
pub(crate) fn head(title: &str, h1: &str, extra_style: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n\
         <meta http-equiv=\"Content-Security-Policy\" \
         content=\"default-src 'none'; style-src 'unsafe-inline'\"/>\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n\
         <title>{}</title>\n<style>{STYLE}{extra_style}</style>\n</head>\n<body>\n\
         <h1>{}</h1>\n",
        escape(title),
        escape(h1)
    )
}

/// The machine's facts and the pipespeed `version` that measured.
pub(crate) fn machine(s: &SystemFacts, version: &str) -> String {
    let facts = [
        (
            "Kernel",
            format!("Linux {} {} ({})", s.kernel, s.kernel_version, s.arch),
        ),
        ("CPU", s.cpu_model.clone()),
        (
            "CPUs",
            format!(
                "{} online, this process may use {:?}",
                s.cpus_online, s.cpus_allowed
            ),
        ),
        ("Transparent huge pages", s.thp.to_string()),
        (
            "pipe-max-size",
            Size(s.pipe_max_size_bytes as u64).to_string(),
        ),
        ("Page size", Size(s.page_size_bytes as u64).to_string()),
        ("pipespeed", version.to_string()),
    ];
    let mut out = String::from("<h2 id=\"system\">The machine</h2>\n<dl>\n");
    for (term, value) in facts {
        let _ = writeln!(out, "<dt>{term}</dt><dd>{}</dd>", escape(&value));
    }
    out += "</dl>\n";
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escape_covers_text_and_attributes() {
        assert_eq!(escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
        assert_eq!(escape("plain ×"), "plain ×");
    }
}
