//! cat's engine: how the bytes of each file go to the output, chosen once
//! from the options. Without an option that changes the bytes, the copy
//! engine moves them (by splice where the kernel allows); with one, the
//! file is read in chunks, each formatted by [`Formatter`] and written out
//! at once, so that each line shows as it comes.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use super::format::{FormatOptions, Formatter};
use super::open::open_input;
use crate::copy::{
    Copier, CopyOptions, RecordWriter, Rewrite, Side, input_is_output, recv_record,
    write_all_or_records,
};
use crate::sys::socket::keeps_records;
use crate::sys::{FdInfo, fd_info};
use crate::units::KIB;
use crate::wait::read;

/// Bytes read at a time when formatting (GNU cat reads 128 KiB too).
pub(crate) const CHUNK: usize = 128 * KIB as usize;

/// Why one file was not copied.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Opening, examining or reading the input failed: say so, go on.
    Read(io::Error),
    /// The input is the output file, and copying it would write over
    /// bytes not read yet or read bytes it wrote (see
    /// [`input_is_output`]).
    InputIsOutput,
    /// Writing failed: say so and stop.
    Write(io::Error),
}

/// Copies the file `name` (`-`: stdin, from where it stands) to `out`.
pub(crate) fn cat_file(
    name: &OsStr,
    stdin: BorrowedFd<'_>,
    out: BorrowedFd<'_>,
    out_info: &FdInfo,
    engine: &mut Engine,
) -> Result<(), Failure> {
    let file;
    let input = if name == "-" {
        stdin
    } else {
        file = open_input(name).map_err(Failure::Read)?;
        file.as_fd()
    };
    let info = fd_info(input).map_err(Failure::Read)?;
    if input_is_output(input, &info, out, out_info, engine.rewrite()) {
        return Err(Failure::InputIsOutput);
    }
    engine.cat(input, &info, out, out_info)
}

/// How bytes go from a file to stdout: chosen once, from the options.
pub(crate) enum Engine {
    /// No option changes the bytes: the copy engine (boxed: it holds
    /// what it reuses from file to file, and is the larger variant).
    Copy(Box<Copier>),
    /// Read a chunk, format it, write it out.
    Format {
        /// The formatter, with what it holds back between chunks.
        formatter: Box<Formatter>,
        /// A chunk read.
        input: Vec<u8>,
        /// The chunk formatted.
        output: Vec<u8>,
    },
}

impl Engine {
    /// The engine for `options`; `page_references`: whether files may go
    /// to pipes as references to their pages (see
    /// [`CopyOptions::page_references`]).
    pub(crate) fn new(options: FormatOptions, page_references: bool) -> Engine {
        if options.is_plain() {
            Engine::Copy(Box::new(Copier::new(CopyOptions {
                page_references,
                ..CopyOptions::default()
            })))
        } else {
            Engine::Format {
                formatter: Box::new(Formatter::new(options)),
                input: vec![0; CHUNK],
                output: Vec::with_capacity(2 * CHUNK),
            }
        }
    }

    /// Whether this engine writes the bytes it reads or formats them.
    pub(crate) fn rewrite(&self) -> Rewrite {
        match self {
            Engine::Copy(_) => Rewrite::Verbatim,
            Engine::Format { .. } => Rewrite::Formatted,
        }
    }

    /// Copies `src` to `out` (as examined: `src_info`, `out_info`),
    /// formatted if asked.
    pub(crate) fn cat(
        &mut self,
        src: BorrowedFd<'_>,
        src_info: &FdInfo,
        out: BorrowedFd<'_>,
        out_info: &FdInfo,
    ) -> Result<(), Failure> {
        match self {
            Engine::Copy(copier) => match copier.copy_examined(src, src_info, out, out_info) {
                Ok(_) => Ok(()),
                Err(err) => Err(match err.side {
                    Side::Input => Failure::Read(err.source),
                    Side::Output => Failure::Write(err.source),
                }),
            },
            Engine::Format {
                formatter,
                input,
                output,
            } => {
                // A record socket is read a whole record at a time, and
                // written in records it takes (see `copy::recv_record`).
                let records = keeps_records(src);
                let mut writer = keeps_records(out).then(RecordWriter::default);
                loop {
                    let n = if records {
                        recv_record(src, input)
                    } else {
                        read(src, input)
                    }
                    .map_err(Failure::Read)?;
                    if n == 0 {
                        return Ok(());
                    }
                    output.clear();
                    formatter.format(&input[..n], output);
                    // Written at once, so that each line shows as it comes.
                    write_all_or_records(&mut writer, out, output, |_| {})
                        .map_err(Failure::Write)?;
                }
            }
        }
    }

    /// Writes what the formatter still holds back at the end.
    pub(crate) fn finish(&mut self, out: BorrowedFd<'_>) -> io::Result<()> {
        match self {
            Engine::Copy(_) => Ok(()),
            Engine::Format {
                formatter, output, ..
            } => {
                output.clear();
                formatter.finish(output);
                let mut writer = keeps_records(out).then(RecordWriter::default);
                write_all_or_records(&mut writer, out, output, |_| {})
            }
        }
    }
}
