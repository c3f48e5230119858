//! Summaries of repeated measurements.

/// The median of `values` (the mean of the two middle ones for an even
/// count), or `None` when empty. NaNs sort last.
pub(crate) fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    median_of_sorted(&sorted)
}

/// The median of `sorted`, already in order (`None` if empty).
pub(crate) fn median_of_sorted(sorted: &[f64]) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let mid = sorted.len() / 2;
    Some(if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    } else {
        sorted[mid]
    })
}

/// The smallest and largest of `values`, or `None` when empty.
pub(crate) fn min_max(values: &[f64]) -> Option<(f64, f64)> {
    let mut iter = values.iter().copied();
    let first = iter.next()?;
    Some(iter.fold((first, first), |(lo, hi), v| (lo.min(v), hi.max(v))))
}

/// The two-sided 95% quantile of Student's t with `df` degrees of freedom:
/// exact to three decimals up to 30, then the value at the low end of
/// each bracket (never narrower than the truth).
fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        31..=40 => 2.042,
        41..=60 => 2.021,
        61..=120 => 2.000,
        _ => 1.980,
    }
}

/// The mean of `values` and the half-width of its 95% interval
/// (Student's t: `t * s / sqrt(n)`), or `None` with fewer than 2 values.
pub(crate) fn mean_interval_95(values: &[f64]) -> Option<(f64, f64)> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some((mean, t_975(n - 1) * var.sqrt() / (n as f64).sqrt()))
}

/// A small, seedable generator for shuffling run order (xorshift64*).
/// Not for anything that needs real randomness.
#[derive(Debug, Clone)]
pub struct Shuffler(u64);

impl Shuffler {
    /// A generator from `seed` (0 is replaced by a fixed odd constant).
    pub fn new(seed: u64) -> Shuffler {
        Shuffler(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (0 when `n` is 0), for drawing an index, as a
    /// bootstrap resample does. The modulo bias is below `n / 2^64`.
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next() % n as u64) as usize
    }

    /// Fisher-Yates shuffle of `items`.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn min_and_max() {
        assert_eq!(min_max(&[2.0, 5.0, 1.0]), Some((1.0, 5.0)));
        assert_eq!(min_max(&[]), None);
    }

    #[test]
    fn the_interval_of_the_mean_follows_student() {
        // n = 5, mean 10, s = 1: 2.776 / sqrt(5).
        let (mean, half) = mean_interval_95(&[9.0, 10.0, 11.0, 9.0, 11.0]).unwrap_or_default();
        assert!((mean - 10.0).abs() < 1e-9);
        assert!((half - 2.776 / 5f64.sqrt()).abs() < 1e-6, "{half}");
        assert_eq!(mean_interval_95(&[4.0, 4.0]), Some((4.0, 0.0)));
        assert_eq!(mean_interval_95(&[4.0]), None);
        // Past the table, never under the true quantile: t(31) = 2.040,
        // t(61) = 2.000, t(121) = 1.980.
        assert!(t_975(31) >= 2.040 && t_975(61) >= 2.000 && t_975(121) >= 1.980);
        assert!(t_975(41) < t_975(30) && t_975(1000) > 1.96);
    }

    #[test]
    fn shuffle_is_a_permutation_and_depends_on_the_seed() {
        let mut a: Vec<u32> = (0..50).collect();
        Shuffler::new(1).shuffle(&mut a);
        let mut b: Vec<u32> = (0..50).collect();
        Shuffler::new(2).shuffle(&mut b);
        assert_ne!(a, b);
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn below_stays_in_range_reaches_every_value_and_repeats_under_a_seed() {
        let mut rng = Shuffler::new(7);
        let draws: Vec<usize> = (0..1000).map(|_| rng.below(5)).collect();
        assert!(draws.iter().all(|&i| i < 5));
        assert!((0..5).all(|i| draws.contains(&i)));
        let mut again = Shuffler::new(7);
        assert!(draws.iter().all(|&i| again.below(5) == i));
        assert_eq!(rng.below(1), 0);
        assert_eq!(rng.below(0), 0);
    }
}
