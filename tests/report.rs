//! Renderers on fixed result data (never on live timings).

#![allow(clippy::unwrap_used)]
use pipespeed::bench::core::{Placement, Series, Status};

use pipespeed::bench::core::Header;
use pipespeed::bench::ladder::{LadderResult, Rung, RungResult, SCHEMA};
use pipespeed::report::{Csv, Exporter, Json, Text};
use pipespeed::sys::{SystemFacts, ThpMode};

fn rung(name: Rung, runs: &[f64], median: Option<f64>, speedup: Option<f64>) -> RungResult {
    let mut r = RungResult::new(name, 256 * 1024, None);
    r.bytes_per_run = 1 << 30;
    r.warmup_gib_s = Some(1.0);
    r.gib_s = Series::of(runs);
    r.gib_s.median = median;
    r.speedup_vs_write_read = speedup;
    r
}

fn fixture() -> LadderResult {
    let mut huge = rung(Rung::VmspliceSpliceHuge, &[], None, None);
    huge.status = Status::Unavailable;
    huge.reason = Some("transparent huge pages are never here".into());
    LadderResult {
        header: Header {
            schema: SCHEMA.into(),
            pipespeed_version: "0.1.0".into(),
            build: None,
            system: SystemFacts {
                kernel: "6.18.0".into(),
                kernel_version: "#1".into(),
                arch: "x86_64".into(),
                cpu_model: "Test CPU".into(),
                cpus_online: 2,
                cpus_allowed: vec![0, 1],
                thp: ThpMode::Never,
                pipe_max_size_bytes: 1 << 20,
                page_size_bytes: 4096,
                virtualization: None,
            },
            interrupted: false,
        },
        placement: Placement::Pinned {
            writer_cpu: 0,
            reader_cpu: 1,
        },
        runs: 2,
        max_runs: 2,
        noise: None,
        placement_check: None,
        verify: false,
        seed: 3,
        rungs: vec![
            rung(Rung::WriteRead, &[1.0, 2.0], Some(1.5), Some(1.0)),
            huge,
        ],
        baseline: None,
        verdict: None,
    }
}

#[test]
fn text_table_snapshot() {
    let mut result = fixture();
    result.conclude();
    let text = String::from_utf8(Text::new(false).export(&result).unwrap()).unwrap();
    let expected = "\
pipespeed 0.1.0, Linux 6.18.0: writer on CPU 0, reader on CPU 1; 2 runs per rung

rung                  what it changes                    copies  GiB/s        spread  vs baseline
write-read            write(2) | read(2): the baseline   2        1.50  2 runs noisy         1.0x
vmsplice-splice-huge  writer buffer on 2 MiB huge pages  0       unavailable: transparent huge pages
                                                                 are never here

copies: CPU copies per byte piped; spread: the 95% interval; more: --explain

baseline: write-read 1.50 GiB/s on two CPUs
fastest:  write-read 1.50 GiB/s, 1.0x the baseline
missing:  vmsplice-splice-huge (the table says why)
trust:    the one row noisy: too few runs for an interval; take more runs (--max-runs 20)
";
    assert_eq!(text, expected);
}

#[test]
fn text_explains_each_rung_when_asked() {
    let text = String::from_utf8(Text::new(true).export(&fixture()).unwrap()).unwrap();
    assert!(
        text.contains("\nwrite-read: write copies the buffer"),
        "{text}"
    );
}

#[test]
fn csv_has_one_row_per_run() {
    let csv = String::from_utf8(Csv.export(&fixture()).unwrap()).unwrap();
    assert_eq!(
        csv,
        "rung,status,run,gib_s,bytes_per_run,buf_size,pipe_size,copies,\
         user_s_per_gib,system_s_per_gib,context_switches_per_gib,page_faults_per_gib,\
         part,placement,noisy,steal_s,other_cpu_s,load_avg_1m,involuntary_switches,cpu_mhz,\
         gib_s_median,gib_s_min,gib_s_max,gib_s_ci95_half_width,gib_s_max_over_min,gib_s_noisy\n\
         write-read,ok,1,1.0000,1073741824,262144,,2,,,,,ladder,different-cpu,true,,,,,,\
         1.5,1,2,4.235333333333333,2,true\n\
         write-read,ok,2,2.0000,1073741824,262144,,2,,,,,ladder,different-cpu,true,,,,,,\
         1.5,1,2,4.235333333333333,2,true\n\
         vmsplice-splice-huge,unavailable,,,1073741824,262144,,0,,,,,ladder,different-cpu,false,,,,,,\
         ,,,,,false\n"
    );
}

#[test]
fn json_round_trips_with_the_documented_fields() {
    let bytes = Json.export(&fixture()).unwrap();
    let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(value["schema"], "pipespeed.bench/3");
    assert_eq!(value["system"]["thp"], "never");
    assert_eq!(value["placement"]["kind"], "pinned");
    assert_eq!(value["rungs"][0]["name"], "write-read");
    assert_eq!(
        value["rungs"][0]["gib_s"]["runs"],
        serde_json::json!([1.0, 2.0])
    );
    assert_eq!(value["rungs"][0]["gib_s"]["median"], 1.5);
    assert_eq!(value["rungs"][1]["status"], "unavailable");
    let back: LadderResult = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(back, fixture());
}
