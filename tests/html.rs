//! The HTML report, on fixed results: self-contained, escaped, with every
//! section; and, where Chromium is installed, rendered by it headless with
//! no console message and a screenshot that shows the chart.

#![allow(clippy::unwrap_used)]

use crate::fixtures;

use pipespeed::bench::core::Status;

use fixtures::browser::{chromium_or_skip, inspect, page_width, render};

use pipespeed::bench::ladder::Rung;
use pipespeed::bench::ladder::html_report;
use pipespeed::report::Html;
use pipespeed::report::{Exporter, Text, svg::BAR_FILL};

/// The only URL the page may hold: the SVG namespace, a name, not a fetch.
const SVG_NAMESPACE: &str = "xmlns=\"http://www.w3.org/2000/svg\"";

fn report() -> String {
    html_report(&fixtures::ladder()).unwrap()
}

#[test]
fn the_page_fetches_nothing() {
    for html in [report(), html_report(&fixtures::ladder_profiled()).unwrap()] {
        assert_eq!(html.matches(SVG_NAMESPACE).count(), 1);
        let rest = html.replace(SVG_NAMESPACE, "").to_lowercase();
        for needle in [
            "http:", "https:", "//", "src=", "href=", "@import", "url(", "<script", "<link",
            "<img", "<iframe", "<object", "<embed", "<image", "<use",
        ] {
            assert!(!rest.contains(needle), "the page holds {needle:?}");
        }
        assert!(html.contains(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
             style-src 'unsafe-inline'\"/>"
        ));
    }
}

#[test]
fn the_page_is_well_formed() {
    // A terminal escape from an end's stderr would make the page invalid
    // XML: it is replaced.
    let mut failed = fixtures::ladder();
    failed.rungs[1].status = Status::Failed;
    failed.rungs[1].reason = Some("\u{1b}[31mred\u{1b}[0m".into());
    let html = html_report(&failed).unwrap();
    assert!(html.contains("\u{fffd}[31mred"), "{html}");
    // A noisy rung's paragraph breaks its lines: as XML too.
    for html in [
        report(),
        html_report(&fixtures::ladder_profiled()).unwrap(),
        html_report(&fixtures::ladder_checked()).unwrap(),
        html,
    ] {
        let doc = roxmltree::Document::parse_with_options(
            &html,
            roxmltree::ParsingOptions {
                allow_dtd: true,
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("not well-formed: {e}"));
        assert_eq!(doc.root_element().tag_name().name(), "html");
    }
    assert_eq!(
        Html.export(&fixtures::ladder()).unwrap(),
        report().into_bytes()
    );
}

#[test]
fn text_from_results_is_escaped() {
    let html = report();
    assert!(html.contains("unavailable: transparent huge pages are &lt;never&gt; &amp; off here"));
    assert!(!html.contains("<never>"));
    let html = html_report(&fixtures::ladder_profiled()).unwrap();
    assert!(html.contains("__alloc_pages&lt;sub&gt;"));
    assert!(!html.contains("<sub>"));
    assert!(html.contains("perf_event_paranoid is 3 &lt;not root&gt;"));
}

#[test]
fn the_page_has_facts_table_chart_and_a_paragraph_per_rung() {
    let result = fixtures::ladder();
    let html = report();
    for fact in [
        "Linux 6.18.0 #1 SMP (x86_64)",
        "Test CPU @ 3.0GHz",
        "2 online, this process may use [0, 1]",
        "<dd>madvise</dd>",
        "<dd>1MiB</dd>",
        "<dd>0.1.0</dd>",
        "writer on CPU 0, reader on CPU 1; 3 runs per rung",
        "(seed 7)",
    ] {
        assert!(html.contains(fact), "no {fact:?}");
    }
    let table = &html[html.find("<table id=\"ladder\">").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr").count(), 1 + result.rungs.len());
    assert!(table.contains(
        "<td>tuned</td><td>largest pipe, buffer of two pipe-sized halves</td><td>0</td>\
         <td>256KiB</td><td>128KiB</td><td>-</td><td class=\"num\">62.00</td><td class=\"num\">60.00</td>\
         <td class=\"num\">65.00</td><td class=\"num\">+-10% noisy</td>\
         <td class=\"num\">20.7x</td><td class=\"num\">-</td>"
    ));
    assert!(!table.contains("s/GiB"), "no cost was measured");
    assert_eq!(html.matches("<svg").count(), 1);
    assert_eq!(html.matches(&format!("fill=\"{BAR_FILL}\"")).count(), 5);
    assert_eq!(
        html.matches("<p class=\"rung\">").count(),
        result.rungs.len()
    );
    for r in &result.rungs {
        let paragraph = pipespeed::report::html::escape(r.name.explanation());
        assert!(html.contains(&paragraph), "no paragraph for {}", r.name);
    }
    assert!(!html.contains("id=\"profile\""));
}

#[test]
fn placement_noise_and_copies_appear_as_the_table_says_them() {
    let result = fixtures::ladder_checked();
    let html = html_report(&result).unwrap();
    let text = String::from_utf8(Text::new(true).export(&result).unwrap()).unwrap();
    fixtures::snapshot("ladder-checked.txt", &text);
    fixtures::snapshot("report-checked.html", &html);
    // The same sentences in both.
    let placement = &html[html.find("<p id=\"placement-check\">").unwrap()..];
    assert!(
        placement.contains(
            "write-read same-cpu 9.00 GiB/s (+-14% noisy), different-cpu 3.00 GiB/s (+-8.3%), unpinned 5.50 GiB/s (+-23% noisy)"
        ),
        "{placement}"
    );
    // A noisy placement gets its paragraph, as a noisy rung does.
    assert!(html.contains("noisy: write-read unpinned (3 runs from 5.00 GiB/s to 6.00 GiB/s"));
    assert!(
        placement.contains("placement alone changes it 3.0x (same-cpu best, different-cpu worst)"),
        "{placement}"
    );
    assert!(
        placement.contains("A cross-CPU wake-up costs 30.05 us here"),
        "{placement}"
    );
    // The speed-ups are against the baseline's best placement (same-cpu,
    // 9.00 GiB/s), in the table and the verdict alike.
    assert!(html.contains("<td class=\"num\">6.9x</td>"), "{html}");
    let flat = text.replace('\n', " ");
    assert!(flat.contains("placement alone changes it 3.0x"), "{text}");
    // Each step over the one before: vmsplice-read is a loss here.
    assert!(text.contains("steps:    vmsplice 1.5x slower"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("tuned ") && l.ends_with(" 6.9x")),
        "{text}"
    );
    assert!(html.contains(
        "<p id=\"noise\">during the runs: CPU steal 3.0% of a CPU, other processes 0.25 CPUs"
    ));
    assert!(text.contains("during the runs: CPU steal 3.0% of a CPU, other processes 0.25 CPUs"));
    // The noisy rung: marked in its row, explained under the table.
    assert!(
        html.contains("<tr class=\"noisy\"><td>vmsplice-splice</td>"),
        "{html}"
    );
    assert_eq!(html.matches("<tr class=\"noisy\">").count(), 1);
    assert!(
        html.contains(
            "<p class=\"noisy\">noisy: vmsplice-splice (6 runs from 11.00 GiB/s to 23.50"
        )
    );
    assert!(
        text.contains("noisy: vmsplice-splice (6 runs from 11.00 GiB/s to 23.50"),
        "{text}"
    );
    assert!(
        text.contains("  likely: steal: the hypervisor took up to 30%"),
        "{text}"
    );
    assert_eq!(
        text.matches(" noisy  ").count() + text.matches(" noisy\n").count(),
        1,
        "{text}"
    );
    // Copies as found: one more, and the paragraph says why.
    assert!(html.contains("<td>vmsplice-read</td><td>writer vmsplices its pages in</td><td>2 (this kernel copies)</td>"));
    assert!(text.contains("2 (this kernel copies)") && text.contains("0 (checked)"));
    let copies = Rung::VmspliceRead
        .explanation_when_vmsplice_copies()
        .unwrap();
    assert!(html.contains(&pipespeed::report::html::escape(copies)));
    // Wrapped to the width: its words, whatever the line breaks.
    assert!(flat.contains(copies), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    // Not on a rung that does not vmsplice.
    assert_eq!(
        html.matches(&pipespeed::report::html::escape(copies))
            .count(),
        4
    );
    // Shares of the limits.
    assert!(html.contains("<th>of limit</th>"));
    assert!(text.contains("of limit"));
}

#[test]
fn cost_and_profile_appear_when_measured() {
    let html = html_report(&fixtures::ladder_profiled()).unwrap();
    assert!(html.contains("<th>user s/GiB</th><th>system s/GiB</th>"));
    // write-read: cost of rung 1 in the fixture.
    assert!(html.contains(
        "<td class=\"num\">0.010</td><td class=\"num\">0.100</td><td class=\"num\">750</td>\
         <td class=\"num\">12</td>"
    ));
    let profile = &html[html.find("id=\"profile\"").unwrap()..];
    assert!(profile.contains("<h3 id=\"profile-write-read\">write-read</h3>"));
    assert!(profile.contains("12345 cpu-clock samples, from <code>perf record"));
    assert!(profile.contains(
        "<tr><td class=\"num\">31.5%</td><td><code>copy_page_from_iter</code></td>\
         <td>kernel</td><td>pipespeed</td></tr>"
    ));
    assert!(profile.contains("<h3 id=\"profile-vmsplice-splice\">vmsplice-splice</h3>"));
    assert!(profile.contains("No profile: unavailable: perf_event_paranoid is 3"));
}

#[test]
fn the_page_matches_its_snapshot() {
    let html = html_report(&fixtures::ladder_profiled()).unwrap();
    fixtures::snapshot("report.html", &html);
}

#[test]
fn chromium_renders_the_page_without_console_messages() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let html = html_report(&fixtures::ladder_profiled()).unwrap();
    let page = render(&chromium, dir.path(), "report", &html);
    assert!(
        page.console.is_empty(),
        "the page logged to the console:\n{}",
        page.console.join("\n")
    );
    let bytes = std::fs::metadata(&page.png).unwrap().len();
    assert!(
        bytes > 20_000,
        "a {bytes}-byte screenshot is too small for the page"
    );
    let (width, height, colours, bar_pixels) = inspect(&page.png);
    assert_eq!((width, height), (1200, 1600));
    assert!(
        colours > 50,
        "the screenshot has {colours} colours: a blank page?"
    );
    // Five bars of about 20 by 150 pixels or more: the inline SVG was drawn.
    assert!(
        bar_pixels > 5_000,
        "only {bar_pixels} pixels of bar colour: no chart?"
    );

    // The check can fail: the same page with an image from elsewhere is
    // refused by its policy, and the refusal is caught.
    let leaky = html.replace(
        "</body>",
        "<img src=\"https://example.invalid/x.png\"/></body>",
    );
    let refused = render(&chromium, dir.path(), "leaky", &leaky);
    assert!(
        refused
            .console
            .iter()
            .any(|l| l.contains("example.invalid") && l.contains("Content Security Policy")),
        "a refused fetch was not seen on the console: {:?}",
        refused.console
    );
}

#[test]
fn every_export_of_an_interrupted_result_says_so() {
    use pipespeed::report::{INTERRUPTED, Markdown};
    let mut ladder = fixtures::ladder();
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    for (name, out) in [
        ("html", html_report(&ladder).unwrap()),
        ("markdown", text(Markdown.export(&ladder).unwrap())),
        ("text", text(Text::default().export(&ladder).unwrap())),
    ] {
        assert!(!out.contains(INTERRUPTED), "{name}");
    }
    ladder.header.interrupted = true;
    let html = html_report(&ladder).unwrap();
    assert!(html.contains(&format!("<p id=\"interrupted\"><strong>{INTERRUPTED}.")));
    let md = text(Markdown.export(&ladder).unwrap());
    assert!(md.contains(&format!("**{INTERRUPTED}**")), "{md}");
    assert!(text(Text::default().export(&ladder).unwrap()).contains(INTERRUPTED));
    let mut latency = fixtures::latency();
    latency.header.interrupted = true;
    let out = text(Text::default().export(&latency).unwrap());
    assert!(out.starts_with(INTERRUPTED), "{out}");
    let mut contend = fixtures::contend();
    contend.header.interrupted = true;
    let out = text(Text::default().export(&contend).unwrap());
    assert!(out.starts_with(INTERRUPTED), "{out}");
}

/// What `bench --profile` records as a profile's command: perf around
/// each worker, whose argument is its description as one JSON word
/// (src/bench/ladder/processes.rs), 700 characters without a space.
fn long_command() -> String {
    let side = |role: &str, cpu: u32| {
        format!(
            "/usr/bin/perf record -e cpu-clock -g -N -o /tmp/pipespeed-profile-Xa81Qz/{role}.data \
             -- /tmp/pipespeed-profile-Xa81Qz/ps-{role} worker \
             {{\"bytes\":4294967296,\"buf_size\":262144,\"pipe_size\":131072,\"method\":\
             \"vmsplice\",\"huge_pages\":false,\"busy_loop\":false,\"verify\":false,\
             \"warmup_bytes\":268435456,\"report\":\"json\",\"role\":\"{role}\",\"cpu\":{cpu},\
             \"parent\":null}}"
        )
    };
    format!("{} | {}", side("writer", 0), side("reader", 1))
}

/// The profiled page, with the long command line a real profile has.
fn profiled_with_a_real_command() -> String {
    let mut result = fixtures::ladder_profiled();
    result.rungs[1].profile.as_mut().unwrap().command = Some(long_command());
    html_report(&result).unwrap()
}

/// The profile says what was run in a line a reader takes in (the roles
/// and their CPUs), the whole command line folded away under it.
#[test]
fn a_profile_command_is_shortened_with_the_whole_line_folded() {
    let html = profiled_with_a_real_command();
    let profile = &html[html.find("<h3 id=\"profile-write-read\">").unwrap()..];
    let profile = &profile[..profile.find("</table>").unwrap()];
    assert!(
        profile.contains(
            "<code>perf record -e cpu-clock -g</code> around the writer (CPU 0) and the \
             reader (CPU 1)"
        ),
        "{profile}"
    );
    let folded = &profile[profile.find("<details").unwrap()..];
    assert!(folded.starts_with("<details class=\"command\"><summary>the whole command line"));
    assert!(folded.contains(&pipespeed::report::html::escape(&long_command())));
    // Outside the fold, no line longer than the page holds.
    let shown = &profile[..profile.find("<details").unwrap()];
    assert!(!shown.contains("\"role\""), "{shown}");
}

/// At 1280 and at 800 pixels, the pages do not scroll sideways: the
/// tables wrap or scroll inside themselves, the command lines wrap.
#[test]
fn the_pages_fit_the_window_in_chromium() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let html = profiled_with_a_real_command();
    for window in [1280, 800] {
        let width = page_width(&chromium, dir.path(), "profiled", &html, window);
        assert!(
            width <= window,
            "at {window} px the page is {width} px wide"
        );
    }
    // The check can fail: a block 2000 pixels wide makes the page wider.
    let wide = html.replace("</body>", "<div style=\"width:2000px\">wide</div></body>");
    let width = page_width(&chromium, dir.path(), "wide", &wide, 1280);
    assert!(width >= 2000, "a 2000-px block measured {width} px");
}

/// A scan of buf-size over three values (fixtures::scan, given from the
/// largest value down), as `bench --scan` returns it.
fn scan_result() -> pipespeed::bench::scan::ScanResult {
    use pipespeed::bench::scan::{ScanParam, ScanPoint, ScanResult};
    let points = fixtures::scan()
        .into_iter()
        .map(|(value, result)| ScanPoint {
            value,
            label: ScanParam::BufSize.label(value),
            result,
        })
        .collect();
    ScanResult::new(fixtures::system(), ScanParam::BufSize, points)
}

#[test]
fn a_scan_in_markdown_has_its_medians_by_value_and_each_values_ladder() {
    use pipespeed::report::{INTERRUPTED, Markdown};
    let mut scan = scan_result();
    let md = String::from_utf8(Markdown.export(&scan).unwrap()).unwrap();
    fixtures::snapshot("scan.md", &md);
    assert!(md.starts_with(
        "pipespeed 0.1.0 on Linux 6.18.0, Test CPU @ 3.0GHz (2 CPUs), THP madvise, \
         pipe-max-size 1MiB: the ladder once per value of buf-size: 1MiB, 256KiB, 64KiB.\n"
    ));
    assert!(md.contains("## Median GiB/s by buf-size (bold: the best of each rung)"));
    assert!(md.contains("| rung | 1MiB | 256KiB | 64KiB |\n|:---|---:|---:|---:|\n"));
    // tuned: 62 GiB/s at 64 KiB, scaled by 1.5 at 1 MiB, the best.
    assert!(md.contains("| tuned | **93.00** | 77.50 | 62.00 |"), "{md}");
    // busy failed at 256 KiB.
    assert!(md.contains("| vmsplice-splice-huge-busy | **70.50** | - | 47.00 |"));
    for value in ["1MiB", "256KiB", "64KiB"] {
        assert!(md.contains(&format!("\n## buf-size {value}\n")), "{value}");
    }
    // Each value's ladder: its header and a row per rung.
    assert_eq!(md.matches("| rung | what it changes |").count(), 3);
    assert_eq!(md.matches("\n| tuned | ").count(), 1 + 3);
    assert!(!md.contains(INTERRUPTED));
    scan.header.interrupted = true;
    let md = String::from_utf8(Markdown.export(&scan).unwrap()).unwrap();
    assert!(md.contains(&format!("**{INTERRUPTED}**")), "{md}");
}

#[test]
fn a_scans_page_has_facts_chart_medians_and_each_values_ladder() {
    let scan = scan_result();
    let html = String::from_utf8(Html.export(&scan).unwrap()).unwrap();
    fixtures::snapshot("scan.html", &html);
    let doc = roxmltree::Document::parse_with_options(
        &html,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("not well-formed: {e}"));
    assert_eq!(doc.root_element().tag_name().name(), "html");
    // Self-contained, as the ladder's page.
    assert_eq!(html.matches(SVG_NAMESPACE).count(), 1);
    let rest = html.replace(SVG_NAMESPACE, "").to_lowercase();
    for needle in [
        "http:", "https:", "src=", "href=", "url(", "<script", "<img",
    ] {
        assert!(!rest.contains(needle), "the page holds {needle:?}");
    }
    assert!(html.contains("<dd>Linux 6.18.0 #1 SMP (x86_64)</dd>"));
    assert!(html.contains("<p>The ladder once per value of buf-size: 1MiB, 256KiB, 64KiB.</p>"));
    assert!(html.contains("pipespeed bench --scan buf-size: median GiB/s per rung"));
    let medians = &html[html.find("<table id=\"medians\">").unwrap()..];
    let medians = &medians[..medians.find("</table>").unwrap()];
    assert!(medians.contains("<th>rung</th><th>1MiB</th><th>256KiB</th><th>64KiB</th>"));
    assert!(medians.contains(
        "<tr><td>tuned</td><td class=\"num\"><strong>93.00</strong></td>\
         <td class=\"num\">77.50</td><td class=\"num\">62.00</td></tr>"
    ));
    for (i, value) in ["1MiB", "256KiB", "64KiB"].iter().enumerate() {
        let id = i + 1;
        assert!(
            html.contains(&format!("<h2 id=\"value-{id}\">buf-size {value}</h2>")),
            "{value}"
        );
        let table = &html[html.find(&format!("<table id=\"ladder-{id}\">")).unwrap()..];
        let table = &table[..table.find("</table>").unwrap()];
        assert_eq!(table.matches("<tr").count(), 1 + 7, "{value}");
        assert!(table.contains("<td>tuned</td>"));
    }
    assert!(html.contains("writer on CPU 0, reader on CPU 1; 3 runs per rung"));
}

#[test]
fn chromium_renders_a_scans_page_within_the_window() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let html = String::from_utf8(Html.export(&scan_result()).unwrap()).unwrap();
    let page = render(&chromium, dir.path(), "scan", &html);
    assert!(
        page.console.is_empty(),
        "the page logged to the console:\n{}",
        page.console.join("\n")
    );
    for window in [1280, 800] {
        let width = page_width(&chromium, dir.path(), "scan", &html, window);
        assert!(
            width <= window,
            "at {window} px the page is {width} px wide"
        );
    }
}
