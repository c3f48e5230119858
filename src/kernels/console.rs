//! What a boot leaves to read: its console, read line by line as it
//! grows, and the results the guest framed on the second serial port (or
//! in the boot's directory, under virtme-ng).

use std::fs;
use std::io::{self, Read as _, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::initramfs::{BEGIN, DONE, END};

/// The console file, read as it grows.
pub(super) struct Console {
    path: PathBuf,
    offset: u64,
    partial: String,
    last: String,
}

impl Console {
    pub(super) fn new(path: PathBuf) -> Console {
        Console {
            path,
            offset: 0,
            partial: String::new(),
            last: String::new(),
        }
    }

    /// The whole lines written since the last call.
    pub(super) fn new_lines(&mut self) -> Vec<String> {
        let Ok(mut file) = fs::File::open(&self.path) else {
            return Vec::new();
        };
        let mut bytes = Vec::new();
        if file.seek(SeekFrom::Start(self.offset)).is_err() || file.read_to_end(&mut bytes).is_err()
        {
            return Vec::new();
        }
        self.offset += bytes.len() as u64;
        self.partial.push_str(&String::from_utf8_lossy(&bytes));
        let mut lines = Vec::new();
        while let Some(end) = self.partial.find('\n') {
            let line: String = self.partial.drain(..=end).collect();
            let line = clean(&line);
            if !line.is_empty() {
                self.last.clone_from(&line);
            }
            lines.push(line);
        }
        lines
    }

    /// The last line that was not empty, or what follows it unfinished.
    pub(super) fn last(&mut self) -> String {
        self.new_lines();
        let partial = clean(&self.partial);
        match (partial.is_empty(), self.last.is_empty()) {
            (false, _) => partial,
            (true, false) => self.last.clone(),
            (true, true) => "(nothing)".into(),
        }
    }
}

/// A console line without its line end and control characters.
pub(super) fn clean(line: &str) -> String {
    line.chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .trim()
        .to_string()
}

/// One result the guest sent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GuestResult {
    /// The measurement's name.
    pub name: String,
    /// Its exit status in the guest.
    pub status: i32,
    /// What it wrote with `--json` (empty if nothing).
    pub json: String,
}

/// What the guest sent on its results' channel.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Sent {
    /// Every whole result, in order.
    pub(super) results: Vec<GuestResult>,
    /// Whether `/init` said it was done there, after the last one.
    pub(super) done: bool,
}

/// The results in the second serial port's file.
pub(super) fn read_results(path: &Path) -> io::Result<Sent> {
    Ok(parse_results(&fs::read_to_string(path)?))
}

/// `BEGIN NAME STATUS`, the JSON, `END NAME`, for each measurement.
fn parse_results(text: &str) -> Sent {
    let mut out = Vec::new();
    let mut current: Option<GuestResult> = None;
    let mut done = false;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if current.is_none() && line == DONE {
            done = true;
        } else if let Some(rest) = line.strip_prefix(BEGIN) {
            let mut words = rest.split_whitespace();
            let name = words.next().unwrap_or_default().to_string();
            let status = words.next().and_then(|s| s.parse().ok()).unwrap_or(-1);
            current = Some(GuestResult {
                name,
                status,
                json: String::new(),
            });
        } else if line.starts_with(END) {
            out.extend(current.take());
        } else if let Some(r) = current.as_mut() {
            r.json.push_str(line);
            r.json.push('\n');
        }
    }
    Sent { results: out, done }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_read_from_their_frames() {
        let text = format!(
            "{BEGIN} contend 0\r\n{{\"a\": 1}}\r\n\r\n{END} contend\r\n\
             {BEGIN} contend-pressure 1\n\n{END} contend-pressure\n\
             {BEGIN} cut 0\n{{\"b\""
        );
        let sent = parse_results(&text);
        assert!(!sent.done, "no end was said");
        let results = sent.results;
        assert_eq!(results.len(), 2, "an unfinished frame is no result");
        assert_eq!(results[0].name, "contend");
        assert_eq!(results[0].status, 0);
        assert_eq!(results[0].json.trim(), "{\"a\": 1}");
        assert_eq!((results[1].status, results[1].json.trim()), (1, ""));
        // The end, after the last frame (a line inside a frame is JSON).
        let ended = format!("{BEGIN} a 0\n{DONE}\n{END} a\n{DONE}\r\n");
        let sent = parse_results(&ended);
        assert!(sent.done);
        assert_eq!(sent.results[0].json, format!("{DONE}\n"));
        assert!(!parse_results(&format!("{BEGIN} a 0\n{DONE}\n")).done);
    }

    #[test]
    fn console_lines_lose_their_control_characters() {
        assert_eq!(
            clean("[    7.02] reboot: Power down\r\n"),
            "[    7.02] reboot: Power down"
        );
    }
}
