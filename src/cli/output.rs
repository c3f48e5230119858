//! Where results go: files written whole or not at all, and standard
//! output, whose reader going away is the one broken pipe that ends a
//! command quietly.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use pipespeed::report::{Csv, Exporter, Json, Svg, Text};
use pipespeed::sys::inherited::{self, Stdio};

/// An error writing standard output. A broken pipe here means our reader
/// went away, which ends a command quietly, as GNU tools do; a broken pipe
/// anywhere else (a child's pipe, say) is a failure like any other.
#[derive(Debug, thiserror::Error)]
#[error("{}: {}", Stdio::Stdout.name(), crate::strerror(.0))]
pub struct StdoutError(#[source] pub io::Error);

/// Writes `bytes` to standard output, all of them.
///
/// `std`'s `Stdout` takes `EBADF` for success; a standard output that was
/// closed when we started is therefore checked here.
pub fn print(bytes: &[u8]) -> Result<(), StdoutError> {
    if inherited::closed_at_start(Stdio::Stdout) {
        return Err(StdoutError(io::Error::from_raw_os_error(libc::EBADF)));
    }
    let mut out = io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(StdoutError)
}

/// Whether `path` is `-`: standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Writes `render()` to `path`, when there is one, whole or not at all
/// (see [`write_whole`]), and says so on stderr; `-` is standard output.
pub fn write_file(
    path: &Option<PathBuf>,
    render: impl FnOnce() -> io::Result<Vec<u8>>,
) -> anyhow::Result<()> {
    if let Some(path) = path {
        let bytes = render().with_context(|| format!("cannot write {}", path.display()))?;
        if is_stdout(path) {
            print(&bytes)?;
            return Ok(());
        }
        write_whole(path, &bytes).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("pipespeed: wrote {}", path.display());
    }
    Ok(())
}

/// Writes a measurement's `[json, csv, svg]` files and prints its table;
/// interrupted before its first of `rows`, it writes nothing, so an older
/// result stays as it was.
pub fn deliver<R>(result: &R, rows: usize, files: [&Option<PathBuf>; 3]) -> anyhow::Result<()>
where
    Json: Exporter<R>,
    Csv: Exporter<R>,
    Svg: Exporter<R>,
    Text: Exporter<R>,
{
    let [json, csv, svg] = files;
    if pipespeed::sys::process::interrupted().is_none() || rows > 0 {
        write_file(json, || Json.export(result))?;
        write_file(csv, || Csv.export(result))?;
        write_file(svg, || Svg.export(result))?;
    }
    print_table(&Text::default().export(result)?, files)
}

/// Prints a command's table: on stdout, or on stderr when one of its
/// result files (`paths`) goes to stdout (`-`), so as not to mix the two.
pub fn print_table<'a>(
    table: &[u8],
    paths: impl IntoIterator<Item = &'a Option<PathBuf>>,
) -> anyhow::Result<()> {
    if paths.into_iter().flatten().any(|p| is_stdout(p)) {
        io::stderr()
            .write_all(table)
            .context("cannot write the table on stderr")?;
        return Ok(());
    }
    Ok(print(table)?)
}

/// Checks, before measuring, that every output file asked for can be
/// written, without touching what is there: a path that cannot be written
/// is an error before the run, and a run that fails leaves an older result
/// as it was. At most one may be `-` (standard output).
pub fn check_outputs<'a>(
    paths: impl IntoIterator<Item = &'a Option<PathBuf>>,
) -> anyhow::Result<()> {
    let mut stdout = 0;
    for path in paths.into_iter().flatten() {
        if is_stdout(path) {
            stdout += 1;
            if stdout > 1 {
                return Err(crate::UsageError(
                    "only one result may go to standard output (-)".into(),
                )
                .into());
            }
            continue;
        }
        check_writable(path).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// Where a result for `path` is written: a regular file (or a new one) is
/// replaced by renaming a finished temporary file over it, in the
/// directory of the file a symbolic link points to; anything else (a
/// FIFO, `/dev/stdout`, a terminal) is written in place.
enum Target {
    Replace { path: PathBuf, dir: PathBuf },
    InPlace(PathBuf),
}

fn target(path: &Path) -> io::Result<Target> {
    match fs::metadata(path) {
        Ok(meta) if !meta.is_file() => Ok(Target::InPlace(path.to_owned())),
        Ok(_) => {
            let path = fs::canonicalize(path)?;
            let dir = path
                .parent()
                .map_or_else(|| PathBuf::from("/"), Path::to_owned);
            Ok(Target::Replace { path, dir })
        }
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            let dir = match path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
                _ => PathBuf::from("."),
            };
            Ok(Target::Replace {
                path: path.to_owned(),
                dir,
            })
        }
        Err(err) => Err(err),
    }
}

/// A new file beside the target, named after it and this process, created
/// with the permissions a new file gets (0666 less the umask).
fn temporary(path: &Path, dir: &Path) -> io::Result<(PathBuf, File)> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mut attempt = 0;
    loop {
        let temp = dir.join(format!(".{name}.{}.{attempt}.tmp", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(&temp)
        {
            Ok(file) => return Ok((temp, file)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(err) => return Err(err),
        }
    }
}

fn check_writable(path: &Path) -> io::Result<()> {
    match target(path)? {
        Target::InPlace(path) => OpenOptions::new().write(true).open(path).map(drop),
        Target::Replace { path, dir } => {
            let (temp, _) = temporary(&path, &dir)?;
            fs::remove_file(temp)
        }
    }
}

/// Writes `bytes` to `path` whole or not at all: into a temporary file
/// beside it, synced, then renamed over it. A failure removes the
/// temporary file and leaves `path` as it was.
pub fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (path, dir) = match target(path)? {
        Target::InPlace(path) => {
            return OpenOptions::new().write(true).open(path)?.write_all(bytes);
        }
        Target::Replace { path, dir } => (path, dir),
    };
    let (temp, mut file) = temporary(&path, &dir)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| fs::rename(&temp, &path));
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        fs::write(&path, "old").unwrap();
        write_whole(&path, b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }

    #[test]
    fn a_symbolic_link_stays_and_its_target_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        let link = dir.path().join("link.json");
        fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_whole(&link, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(&real).unwrap(), b"new");
    }

    #[test]
    fn checking_leaves_an_old_result_and_no_file_behind() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.json");
        fs::write(&old, "{\"old\":1}").unwrap();
        let new = dir.path().join("new.json");
        check_outputs([&Some(old.clone()), &Some(new.clone())]).unwrap();
        assert_eq!(fs::read(&old).unwrap(), b"{\"old\":1}");
        assert!(!new.exists());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        let missing = Some(dir.path().join("no/such/dir.json"));
        assert!(check_outputs([&missing]).is_err());
    }

    #[test]
    fn a_device_is_written_in_place() {
        write_whole(Path::new("/dev/null"), b"x").unwrap();
        check_outputs([&Some(PathBuf::from("/dev/null"))]).unwrap();
    }
}
