//! Reading two result files and deciding whether they can be compared:
//! the `schema` field (`pipespeed.NAME/VERSION`) names the command that
//! wrote the file and the version of its format. A file that is the
//! kernel's pipe_bench output (pipe_bench's own, or `contend
//! --pipe-bench`'s) is read as a contend result
//! ([`contend::pipe_bench::result_of`]).

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::bench::core::NoiseSummary;
use crate::bench::core::compared::{Compared, Extract, Metric, extract};
use crate::bench::core::harness::Header;
use crate::bench::{contend, ipc, ladder, latency};
use crate::quote::{escape_controls, strerror};

/// Which command wrote a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `pipespeed bench --json`.
    Bench,
    /// `pipespeed latency --json`.
    Latency,
    /// `pipespeed contend --json`.
    Contend,
    /// `pipespeed ipc --json`.
    Ipc,
}

impl Kind {
    /// Every kind `compare` reads.
    pub const ALL: [Kind; 4] = [Kind::Bench, Kind::Latency, Kind::Contend, Kind::Ipc];

    /// The command's name, as in the schema.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Bench => "bench",
            Kind::Latency => "latency",
            Kind::Contend => "contend",
            Kind::Ipc => "ipc",
        }
    }

    /// Every schema this build reads for the kind: the current one, then
    /// the older ones its types still load.
    pub fn schemas(self) -> &'static [&'static str] {
        match self {
            Kind::Bench => &[ladder::SCHEMA, ladder::SCHEMA_V2, ladder::SCHEMA_V1],
            Kind::Latency => &[latency::SCHEMA, latency::SCHEMA_V1],
            Kind::Contend => &[contend::SCHEMA, contend::SCHEMA_V1],
            Kind::Ipc => &[ipc::SCHEMA, ipc::SCHEMA_V1],
        }
    }

    /// The metrics compared, in the order shown.
    pub fn metrics(self) -> &'static [Metric] {
        match self {
            Kind::Bench => ladder::LadderResult::metrics(),
            Kind::Latency => latency::LatencyResult::metrics(),
            Kind::Contend => contend::ContendResult::metrics(),
            Kind::Ipc => ipc::IpcResult::metrics(),
        }
    }

    /// What a row is, as a column heading.
    pub fn row_label(self) -> &'static str {
        match self {
            Kind::Bench => ladder::LadderResult::row_label(),
            Kind::Latency => latency::LatencyResult::row_label(),
            Kind::Contend => contend::ContendResult::row_label(),
            Kind::Ipc => ipc::IpcResult::row_label(),
        }
    }

    /// Whether this build reads `schema` as this kind.
    fn reads(self, schema: &str) -> bool {
        self.schemas().contains(&schema)
    }

    fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A result file, parsed with the type of the command that wrote it
/// (boxed: they differ much in size).
#[derive(Debug, Clone, PartialEq)]
pub enum Document {
    /// A ladder.
    Bench(Box<ladder::LadderResult>),
    /// Round-trip latencies.
    Latency(Box<latency::LatencyResult>),
    /// Writers and readers on one pipe.
    Contend(Box<contend::ContendResult>),
    /// Pipes beside the other ways processes talk.
    Ipc(Box<ipc::IpcResult>),
}

impl Document {
    /// Which command wrote it.
    pub fn kind(&self) -> Kind {
        match self {
            Document::Bench(_) => Kind::Bench,
            Document::Latency(_) => Kind::Latency,
            Document::Contend(_) => Kind::Contend,
            Document::Ipc(_) => Kind::Ipc,
        }
    }

    /// The result, as `compare` reads every kind.
    pub(crate) fn compared(&self) -> &dyn Compared {
        match self {
            Document::Bench(r) => r.as_ref(),
            Document::Latency(r) => r.as_ref(),
            Document::Contend(r) => r.as_ref(),
            Document::Ipc(r) => r.as_ref(),
        }
    }

    /// The header every result starts with.
    pub(crate) fn header(&self) -> &Header {
        match self {
            Document::Bench(r) => &r.header,
            Document::Latency(r) => &r.header,
            Document::Contend(r) => &r.header,
            Document::Ipc(r) => &r.header,
        }
    }

    /// What else the machine did during the runs (`None`: not recorded).
    pub(crate) fn noise(&self) -> Option<NoiseSummary> {
        match self {
            Document::Bench(r) => r.noise,
            Document::Latency(r) => r.noise(),
            Document::Contend(r) => r.noise,
            Document::Ipc(r) => r.noise,
        }
    }

    /// The rows, facts, settings and notes `compare` takes from it.
    pub(crate) fn extract(&self) -> Extract {
        extract(self.compared(), self.header())
    }

    /// The schema it was written in (`pipespeed.bench/1` for a file this
    /// build reads from an older format).
    pub fn schema(&self) -> &str {
        &self.header().schema
    }
}

/// Why two files cannot be compared. Every message names the file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    /// A set of results to pool has none.
    #[error("{file}: no results to compare")]
    Empty {
        /// The set, as named.
        file: String,
    },
    /// The file could not be read.
    #[error("cannot read {file}: {cause}")]
    Read {
        /// The file, as named.
        file: String,
        /// The system's reason.
        cause: String,
    },
    /// The file is larger than any result: read no further.
    #[error("{file} is larger than {limit}: not a pipespeed result")]
    TooLarge {
        /// The file, as named.
        file: String,
        /// The bound, in words (`16 MiB`).
        limit: String,
    },
    /// A row has more runs than the bootstrap takes in reasonable time.
    #[error(
        "{file}: row {row} has {runs} runs; compare takes at most {max} runs per row (the \
         bootstrap resamples every run {resamples} times)"
    )]
    TooManyRuns {
        /// The file, as named.
        file: String,
        /// The row.
        row: String,
        /// Its runs.
        runs: usize,
        /// The bound.
        max: usize,
        /// Resamples per interval.
        resamples: usize,
    },
    /// The file is not JSON.
    #[error("{file} is not JSON: {cause}")]
    NotJson {
        /// The file, as named.
        file: String,
        /// Where and why parsing stopped.
        cause: String,
    },
    /// pipe_bench's output up to a line that is not.
    #[error("{file} is not pipe_bench output: {cause}")]
    NotPipeBench {
        /// The file, as named.
        file: String,
        /// The line and why.
        cause: String,
    },
    /// JSON, but not something a pipespeed command wrote.
    #[error("{file} is not a pipespeed result: {why}")]
    NotResult {
        /// The file, as named.
        file: String,
        /// What is missing.
        why: String,
    },
    /// Written by two different commands.
    #[error(
        "{base} is {} result, {new} {} result: cannot compare",
        with_article(.base_kind),
        with_article(.new_kind)
    )]
    Kinds {
        /// The base file.
        base: String,
        /// Its command.
        base_kind: String,
        /// The new file.
        new: String,
        /// Its command.
        new_kind: String,
    },
    /// The same command, two versions of its format.
    #[error(
        "{base} is in format {base_schema}, {new} in {new_schema}: cannot compare two versions \
         of the format"
    )]
    Versions {
        /// The base file.
        base: String,
        /// Its schema.
        base_schema: String,
        /// The new file.
        new: String,
        /// Its schema.
        new_schema: String,
    },
    /// A format this build does not read.
    #[error("{file} is in format {schema}, which this pipespeed cannot read ({known})")]
    Unknown {
        /// The file, as named.
        file: String,
        /// Its schema.
        schema: String,
        /// The schemas this build reads.
        known: String,
    },
    /// The right schema, but fields missing or of the wrong type.
    #[error("{file} is not a valid {schema} result: {cause}")]
    Invalid {
        /// The file, as named.
        file: String,
        /// Its schema.
        schema: String,
        /// What serde found wrong.
        cause: String,
    },
}

/// `name` after `a`, or `an` before a vowel: `a bench`, `an ipc`.
fn with_article(name: &str) -> String {
    match name.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => format!("an {name}"),
        _ => format!("a {name}"),
    }
}

/// A `schema` value split into its name and version.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Schema {
    text: String,
    name: String,
    version: String,
}

/// Reads and parses `base` and `new`, refusing files of different kinds
/// or format versions; `base_name` and `new_name` are how messages name
/// them.
pub fn load_pair(
    (base, base_name): (&Path, &str),
    (new, new_name): (&Path, &str),
) -> Result<(Document, Document), CompareError> {
    let (base_json, new_json) = match (read(base, base_name)?, read(new, new_name)?) {
        (Input::Json(b), Input::Json(n)) => (b, n),
        (b, n) => {
            let (b, n) = (b.document(base_name)?, n.document(new_name)?);
            if b.kind() != n.kind() {
                return Err(CompareError::Kinds {
                    base: base_name.into(),
                    base_kind: b.kind().name().into(),
                    new: new_name.into(),
                    new_kind: n.kind().name().into(),
                });
            }
            return Ok((b, n));
        }
    };
    let base_schema = schema(&base_json, base_name)?;
    let new_schema = schema(&new_json, new_name)?;
    if base_schema.name != new_schema.name {
        return Err(CompareError::Kinds {
            base: base_name.into(),
            base_kind: base_schema.name,
            new: new_name.into(),
            new_kind: new_schema.name,
        });
    }
    // Two versions this build reads load into the same types.
    let readable = |s: &Schema| Kind::from_name(&s.name).is_some_and(|k| k.reads(&s.text));
    if base_schema.version != new_schema.version
        && !(readable(&base_schema) && readable(&new_schema))
    {
        return Err(CompareError::Versions {
            base: base_name.into(),
            base_schema: base_schema.text,
            new: new_name.into(),
            new_schema: new_schema.text,
        });
    }
    Ok((
        document(base_json, &base_schema, base_name)?,
        document(new_json, &new_schema, new_name)?,
    ))
}

/// Reads and parses one result file, of any kind this build reads;
/// `name` is how messages name it.
pub fn load(path: &Path, name: &str) -> Result<Document, CompareError> {
    read(path, name)?.document(name)
}

/// Reads one side of a comparison: a result file, or a directory of
/// them (every `.json` file and every pipe_bench `.log` in it, in name
/// order, each named `name/FILE`), as several invocations of one
/// command. A directory
/// without one is refused as [`CompareError::Empty`].
pub fn load_side(path: &Path, name: &str) -> Result<Vec<Document>, CompareError> {
    if !path.is_dir() {
        return Ok(vec![load(path, name)?]);
    }
    let read_error = |e: std::io::Error| CompareError::Read {
        file: name.into(),
        cause: strerror(&e),
    };
    let mut files: Vec<_> = (std::fs::read_dir(path).map_err(read_error)?)
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json" || e == "log") && !p.is_dir())
        .collect();
    files.sort();
    let side = name.trim_end_matches('/');
    (files.iter())
        .map(|file| {
            let file_name = file.file_name().unwrap_or_default().to_string_lossy();
            load(file, &format!("{side}/{file_name}"))
        })
        .collect()
}

/// The most bytes a result file may have. Results are small: a ladder of
/// 7 rungs with `--runs 1000` is about 1 MiB of JSON, a contend sweep with
/// `--runs 100` less; 16 MiB leaves room for far more while keeping the
/// parsed document (several times the text) well within memory. Without a
/// bound, `compare /dev/zero x.json` read until memory ran out.
pub(crate) const MAX_INPUT: u64 = 16 << 20;

/// A file as read: JSON, or pipe_bench's output already parsed.
enum Input {
    Json(Value),
    PipeBench(Document),
}

impl Input {
    fn document(self, name: &str) -> Result<Document, CompareError> {
        match self {
            Input::Json(json) => {
                let schema = schema(&json, name)?;
                document(json, &schema, name)
            }
            Input::PipeBench(doc) => Ok(doc),
        }
    }
}

/// Reads `path`: pipe_bench's output where its first line is one
/// pipe_bench prints first ([`contend::pipe_bench::looks_like`]), JSON
/// otherwise.
fn read(path: &Path, name: &str) -> Result<Input, CompareError> {
    let bytes = read_bounded(path, name)?;
    if let Some(text) = std::str::from_utf8(&bytes)
        .ok()
        .filter(|t| contend::pipe_bench::looks_like(t))
    {
        let mut result =
            contend::pipe_bench::result_of(text).map_err(|e| CompareError::NotPipeBench {
                file: name.into(),
                cause: escape_controls(&e.to_string()).into_owned(),
            })?;
        // Anyone's text, as a JSON file's strings are (escape_strings).
        let system = &mut result.header.system;
        for field in [
            &mut system.kernel,
            &mut system.kernel_version,
            &mut system.arch,
            &mut system.cpu_model,
        ] {
            *field = escape_controls(field).into_owned();
        }
        if let Some(v) = system.virtualization.as_mut() {
            *v = escape_controls(v).into_owned();
        }
        return Ok(Input::PipeBench(Document::Contend(Box::new(result))));
    }
    let mut json = serde_json::from_slice(&bytes).map_err(|e| CompareError::NotJson {
        file: name.into(),
        cause: e.to_string(),
    })?;
    escape_strings(&mut json);
    Ok(Input::Json(json))
}

/// Every string of `json`, keys included, with its control characters
/// escaped ([`escape_controls`]), before anything of it is read: a
/// result file is anyone's text, and whatever compare shows of it (a
/// kernel's name, a row, a reason, the words of an error about it) must
/// not drive the terminal (`ESC[2J` clears it).
fn escape_strings(json: &mut Value) {
    match json {
        Value::String(text) => {
            if let Cow::Owned(escaped) = escape_controls(text) {
                *text = escaped;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(escape_strings),
        Value::Object(map) => {
            if map
                .keys()
                .any(|k| matches!(escape_controls(k), Cow::Owned(_)))
            {
                let entries = std::mem::take(map);
                for (key, value) in entries {
                    map.insert(escape_controls(&key).into_owned(), value);
                }
            }
            map.values_mut().for_each(escape_strings);
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// The whole of `path` if it has at most [`MAX_INPUT`] bytes: reads at
/// most one byte more, so an endless file (`/dev/zero`, a FIFO) ends it
/// too.
fn read_bounded(path: &Path, name: &str) -> Result<Vec<u8>, CompareError> {
    use std::io::Read;
    let unreadable = |e| CompareError::Read {
        file: name.into(),
        cause: strerror(&e),
    };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut text = Vec::new();
    (file.take(MAX_INPUT + 1).read_to_end(&mut text)).map_err(unreadable)?;
    if text.len() as u64 > MAX_INPUT {
        return Err(CompareError::TooLarge {
            file: name.into(),
            limit: format!("{} MiB", MAX_INPUT >> 20),
        });
    }
    Ok(text)
}

fn schema(json: &Value, file: &str) -> Result<Schema, CompareError> {
    let not_result = |why: &str| CompareError::NotResult {
        file: file.into(),
        why: why.into(),
    };
    let text = json
        .get("schema")
        .ok_or_else(|| not_result("no \"schema\" field"))?
        .as_str()
        .ok_or_else(|| not_result("its \"schema\" is not a string"))?;
    let rest = text.strip_prefix("pipespeed.").ok_or_else(|| {
        not_result(&format!(
            "its schema {text:?} does not start with \"pipespeed.\""
        ))
    })?;
    let (name, version) = rest
        .split_once('/')
        .filter(|(n, v)| !n.is_empty() && !v.is_empty())
        .ok_or_else(|| not_result(&format!("its schema {text:?} is not NAME/VERSION")))?;
    Ok(Schema {
        text: text.into(),
        name: name.into(),
        version: version.into(),
    })
}

fn document(json: Value, schema: &Schema, file: &str) -> Result<Document, CompareError> {
    let kind = Kind::from_name(&schema.name).filter(|k| k.reads(&schema.text));
    let Some(kind) = kind else {
        let known: Vec<&str> = Kind::ALL
            .iter()
            .flat_map(|k| k.schemas())
            .copied()
            .collect();
        return Err(CompareError::Unknown {
            file: file.into(),
            schema: schema.text.clone(),
            known: format!("it reads {}", known.join(", ")),
        });
    };
    fn parse<T: DeserializeOwned>(
        json: Value,
        schema: &Schema,
        file: &str,
    ) -> Result<T, CompareError> {
        serde_json::from_value(json).map_err(|e| CompareError::Invalid {
            file: file.into(),
            schema: schema.text.clone(),
            cause: e.to_string(),
        })
    }
    Ok(match kind {
        Kind::Bench => Document::Bench(parse(json, schema, file)?),
        Kind::Latency => Document::Latency(parse(json, schema, file)?),
        Kind::Contend => Document::Contend(parse(json, schema, file)?),
        Kind::Ipc => Document::Ipc(parse(json, schema, file)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema_of(text: &str) -> Result<Schema, CompareError> {
        schema(&serde_json::json!({ "schema": text }), "f.json")
    }

    #[test]
    fn a_schema_is_pipespeed_name_and_version() {
        let s = schema_of("pipespeed.bench/1").unwrap();
        assert_eq!((s.name.as_str(), s.version.as_str()), ("bench", "1"));
        for bad in [
            "bench/1",
            "pipespeed.bench",
            "pipespeed./1",
            "pipespeed.bench/",
        ] {
            let err = schema_of(bad).unwrap_err().to_string();
            assert!(
                err.starts_with("f.json is not a pipespeed result: "),
                "{err}"
            );
        }
        let err = schema(&serde_json::json!([1, 2]), "f.json").unwrap_err();
        assert!(err.to_string().contains("no \"schema\" field"), "{err}");
        let err = schema(&serde_json::json!({"schema": 1}), "f.json").unwrap_err();
        assert!(err.to_string().contains("not a string"), "{err}");
    }

    #[test]
    fn an_unknown_format_names_the_ones_read() {
        let s = schema_of("pipespeed.bench/99").unwrap();
        let err = document(serde_json::json!({}), &s, "f.json").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("pipespeed.bench/99"), "{text}");
        assert!(text.contains(ladder::SCHEMA), "{text}");
        assert!(text.contains(latency::SCHEMA), "{text}");
        assert!(text.contains("pipespeed.latency/1"), "{text}");
    }

    #[test]
    fn a_known_format_with_missing_fields_is_invalid() {
        let s = schema_of("pipespeed.latency/1").unwrap();
        let err = document(serde_json::json!({"schema": s.text}), &s, "f.json").unwrap_err();
        assert!(matches!(err, CompareError::Invalid { .. }), "{err}");
        assert!(err.to_string().contains("missing field"), "{err}");
    }

    #[test]
    fn two_kinds_are_named_with_their_article() {
        let err = CompareError::Kinds {
            base: "a.json".into(),
            base_kind: "ipc".into(),
            new: "b.json".into(),
            new_kind: "bench".into(),
        };
        assert_eq!(
            err.to_string(),
            "a.json is an ipc result, b.json a bench result: cannot compare"
        );
    }

    #[test]
    fn every_kind_has_metrics_in_both_directions_or_one() {
        use crate::bench::core::compared::Better;
        assert_eq!(Kind::Bench.metrics(), &[Metric::GIB_S]);
        let latency = Kind::Latency.metrics();
        assert!(latency.iter().any(|m| m.better == Better::Lower));
        assert!(latency.iter().any(|m| m.better == Better::Higher));
        assert_eq!(Kind::Contend.metrics().len(), 2);
        assert_eq!(Kind::Ipc.metrics(), &[Metric::GIB_S, Metric::RTT_P50]);
    }

    #[test]
    fn strerror_drops_the_os_error_number() {
        let err = std::io::Error::from_raw_os_error(2);
        assert_eq!(strerror(&err), "No such file or directory");
    }
}
