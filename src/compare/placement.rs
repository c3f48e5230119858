//! Where each row's ends ran, and the rows that cannot be compared for
//! it. A rung measured on one CPU against the same rung on two measures
//! the placement, not the code (a before/after run of issue 24 read
//! write-read "x5.8 faster" from that alone), so such a row is not
//! compared: it is listed with both placements, and a warning in plain
//! words says how to measure it again (issue 38 read "setting placement
//! of vmsplice-splice differs: writer on CPU 0, reader on CPU 0 in
//! a.json, the ladder's in a2.json", and compared the row anyway).

use std::collections::BTreeMap;

use super::{Comparison, Outcome};
use crate::bench::core::compared::Extract;

/// The facts that tell two machines apart: results of two machines get
/// no verdict. The kernel is not among them: comparing two kernels on
/// one machine is what `kernels` and `--lkml` are for.
pub(crate) const MACHINE: [&str; 3] = ["arch", "cpu_model", "cpus_online"];

/// What a ladder writes for a rung run in the ladder's own placement.
const THE_LADDERS: &str = "the ladder's";

/// Where row `name`'s ends ran in `x`: its own placement (a ladder's
/// rung that ran in one of its own), else the result's.
fn of(x: &Extract, name: &str) -> Option<String> {
    let get = |list: &[(String, String)], key: &str| {
        (list.iter().find(|(k, _)| k == key)).map(|(_, v)| v.clone())
    };
    match get(&x.settings, &format!("placement of {name}")) {
        Some(own) if own != THE_LADDERS => Some(own),
        _ => get(&x.facts, "placement"),
    }
}

/// Both placements of row `name`, where they differ; `None` where they
/// are the same (or a side does not record its own).
pub(crate) fn of_row(base: &Extract, new: &Extract, name: &str) -> Option<(String, String)> {
    let (b, n) = (of(base, name)?, of(new, name)?);
    (b != n).then_some((b, n))
}

/// How many CPUs a placement puts the ends on, in words, and the
/// `--placement` value that measures it.
fn words(placement: &str) -> (String, Option<&'static str>) {
    let mut cpus: Vec<&str> = (placement.split("on CPU ").skip(1))
        .filter_map(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .collect();
    cpus.dedup();
    match (placement, cpus.len()) {
        ("unpinned", _) => ("left to the scheduler".into(), Some("unpinned")),
        (_, 1) => (format!("on one CPU ({placement})"), Some("same-cpu")),
        (_, 2) => (format!("on two CPUs ({placement})"), Some("different-cpu")),
        _ => (placement.into(), None),
    }
}

/// One warning per pair of placements that kept rows apart, naming the
/// rows and the option that measures them alike.
pub(crate) fn warnings(c: &Comparison) -> Vec<String> {
    let mut apart: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for line in c.tables.first().map_or(&[][..], |t| &t.lines[..]) {
        if let Outcome::Placements { base, new } = &line.outcome {
            let rows = apart.entry((base.clone(), new.clone())).or_default();
            rows.push(line.row.clone());
        }
    }
    (apart.into_iter())
        .map(|((base, new), rows)| {
            let ((b, option), (n, _)) = (words(&base), words(&new));
            let rerun = match option {
                Some(o) => format!("rerun {} with --placement {o}", c.new),
                None => "rerun both with the same --placement".into(),
            };
            let (these, verb) = match rows.len() {
                1 => ("row", "is"),
                _ => ("rows", "are"),
            };
            format!(
                "{} ran the ends {b}, {} {n}: {these} {} {verb} not compared; {rerun}",
                c.base,
                c.new,
                rows.join(", ")
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placement_reads_as_its_cpus_and_option() {
        let one = words("writer on CPU 0, reader on CPU 0");
        assert_eq!(one.0, "on one CPU (writer on CPU 0, reader on CPU 0)");
        assert_eq!(one.1, Some("same-cpu"));
        assert_eq!(
            words("pinger on CPU 0, ponger on CPU 1").1,
            Some("different-cpu")
        );
        assert_eq!(words("unpinned").1, Some("unpinned"));
        assert_eq!(words("somewhere").1, None);
    }

    #[test]
    fn a_rung_in_the_ladders_placement_takes_the_ladders() {
        let x = |ladder: &str, own: &str| Extract {
            facts: vec![("placement".into(), ladder.into())],
            settings: vec![("placement of write-read".into(), own.into())],
            ..Extract::default()
        };
        let two = "writer on CPU 0, reader on CPU 1";
        let one = "writer on CPU 0, reader on CPU 0";
        // The same CPUs, however each file words them: compared.
        assert_eq!(
            of_row(&x(one, THE_LADDERS), &x(two, one), "write-read"),
            None
        );
        assert_eq!(
            of_row(&x(two, THE_LADDERS), &x(two, one), "write-read"),
            Some((two.into(), one.into()))
        );
        // A row without its own: the result's.
        assert_eq!(
            of_row(&x(two, THE_LADDERS), &x(one, THE_LADDERS), "tuned"),
            Some((two.into(), one.into()))
        );
    }
}
