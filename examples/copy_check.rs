//! Does this kernel's vmsplice hand the pipe page references, or copies?
//! The check the ladder makes at start-up, run on its own, with its cost.
//!
//! ```sh
//! cargo run --release --example copy_check
//! ```

use std::time::Instant;

use pipespeed::bench::ladder::check_vmsplice;
use pipespeed::buf::BufferOptions;

fn main() {
    for (pages, huge_pages) in [("4 KiB pages", false), ("huge pages", true)] {
        let options = BufferOptions {
            huge_pages,
            ..BufferOptions::default()
        };
        // The first call maps and faults the buffer in, as the ladder's does.
        let mut times = Vec::new();
        let mut found = Vec::new();
        for _ in 0..21 {
            let start = Instant::now();
            found.push(check_vmsplice(options));
            times.push(start.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        found.dedup();
        println!(
            "{pages}: {found:?}; one check takes {:.0} us (median of 21)",
            times[times.len() / 2] * 1e6
        );
    }
}
