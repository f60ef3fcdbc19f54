//! The figures of a series of samples in milliseconds: median, 95th percentile, maximum, and
//! the share of samples over a limit. Percentiles are nearest-rank, so every figure printed is
//! a sample that was measured.

/// What a series of millisecond samples comes to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    pub median: f64,
    pub p95: f64,
    pub max: f64,
}

impl Figures {
    /// The figures of `samples` (NaN everywhere when there are none).
    pub fn of(samples: &[f64]) -> Self {
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        Self {
            median: nearest_rank(&sorted, 50.0),
            p95: nearest_rank(&sorted, 95.0),
            max: sorted.last().copied().unwrap_or(f64::NAN),
        }
    }
}

/// The smallest sample with at least `percent` of the samples at or below it.
fn nearest_rank(sorted: &[f64], percent: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (percent / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The share of `samples` above `limit`, in percent.
pub fn percent_over(samples: &[f64], limit: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    let over = samples.iter().filter(|&&sample| sample > limit).count();
    over as f64 * 100.0 / samples.len() as f64
}

#[cfg(test)]
mod tests {
    use super::{Figures, percent_over};

    #[test]
    fn percentiles_are_samples_by_nearest_rank() {
        let samples: Vec<f64> = (1..=20).map(f64::from).collect();
        let figures = Figures::of(&samples);
        assert_eq!(
            (figures.median, figures.p95, figures.max),
            (10.0, 19.0, 20.0)
        );
        assert_eq!(Figures::of(&[7.0]).p95, 7.0);
        assert!(Figures::of(&[]).median.is_nan());
    }

    #[test]
    fn the_share_over_a_limit_counts_only_samples_above_it() {
        assert_eq!(percent_over(&[10.0, 16.7, 17.0, 40.0], 16.7), 50.0);
    }
}
