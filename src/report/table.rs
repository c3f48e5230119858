//! The aligned text tables every report prints. Not a table crate: the
//! layout (no borders, a sentence across the figures, widths counted in
//! characters) is what the snapshots hold byte for byte.

/// How a column's cells are padded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    /// Text: padded on the right.
    Left,
    /// Figures: padded on the left.
    Right,
}

/// A row of an aligned table.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Row {
    /// A cell per column.
    Cells(Vec<String>),
    /// Its first cells, then a sentence across the other columns (why a
    /// row has no figures); the sentence widens no column.
    Span(Vec<String>, String),
}

/// The widths of the columns of `rows`, at least `min` each: the
/// characters of each column's widest cell.
pub(crate) fn widths(rows: &[Row], min: usize) -> Vec<usize> {
    let mut widths: Vec<usize> = Vec::new();
    for row in rows {
        let cells = match row {
            Row::Cells(cells) | Row::Span(cells, _) => cells,
        };
        for (i, cell) in cells.iter().enumerate() {
            let n = cell.chars().count().max(min);
            match widths.get_mut(i) {
                Some(w) => *w = (*w).max(n),
                None => widths.push(n),
            }
        }
    }
    widths
}

/// `rows` as lines (without their newline), each column padded to its
/// width in `widths` and aligned as `align` says for its index, two
/// spaces apart, trailing spaces dropped.
pub(crate) fn lines(rows: &[Row], widths: &[usize], align: impl Fn(usize) -> Align) -> Vec<String> {
    let pad = |cells: &[String]| -> Vec<String> {
        (cells.iter().zip(widths).enumerate())
            .map(|(i, (cell, &w))| match align(i) {
                Align::Left => format!("{cell:<w$}"),
                Align::Right => format!("{cell:>w$}"),
            })
            .collect()
    };
    rows.iter()
        .map(|row| match row {
            Row::Cells(cells) => pad(cells).join("  ").trim_end().to_string(),
            Row::Span(cells, text) => {
                let mut line = pad(cells).join("  ");
                line += "  ";
                line += text;
                line.trim_end().to_string()
            }
        })
        .collect()
}

/// `rows` laid out by [`widths`] and [`lines`].
pub(crate) fn aligned(rows: &[Row], align: impl Fn(usize) -> Align) -> Vec<String> {
    lines(rows, &widths(rows, 0), align)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(cells: &[&str]) -> Row {
        Row::Cells(cells.iter().map(|c| c.to_string()).collect())
    }

    #[test]
    fn columns_are_as_wide_as_their_widest_cell_in_characters() {
        let rows = [cells(&["name", "GiB/s"]), cells(&["×pipe", "1.5"])];
        let right = |i| if i == 0 { Align::Left } else { Align::Right };
        assert_eq!(aligned(&rows, right), ["name   GiB/s", "×pipe    1.5"]);
    }

    #[test]
    fn a_span_widens_only_its_first_cells() {
        let rows = [
            cells(&["a", "1"]),
            Row::Span(vec!["rung".into()], "failed: no splice here".into()),
        ];
        assert_eq!(
            aligned(&rows, |_| Align::Left),
            ["a     1", "rung  failed: no splice here"]
        );
        assert_eq!(widths(&rows, 3), [4, 3]);
    }
}
