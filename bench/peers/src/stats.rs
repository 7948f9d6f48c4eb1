//! Percentiles, one batch's figures, and medians with their spread.

use std::time::Duration;

/// The figures of one batch of requests.
#[derive(Debug, Clone, Copy, Default)]
pub struct Batch {
    /// Requests answered.
    pub n: usize,
    /// Answers per second over the batch.
    pub rps: f64,
    /// Latency percentiles, milliseconds.
    pub p50: f64,
    /// 95th percentile, ms.
    pub p95: f64,
    /// 99th percentile, ms.
    pub p99: f64,
}

impl Batch {
    /// From the latencies (any order, ms) and the batch's wall time.
    pub fn from_latencies(mut lat: Vec<f64>, wall: Duration) -> Batch {
        lat.sort_by(f64::total_cmp);
        let secs = wall.as_secs_f64().max(1e-9);
        Batch {
            n: lat.len(),
            rps: lat.len() as f64 / secs,
            p50: percentile(&lat, 50.0),
            p95: percentile(&lat, 95.0),
            p99: percentile(&lat, 99.0),
        }
    }
}

/// Nearest-rank percentile of sorted values (0 for none).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// A median with the smallest and largest value it was taken from.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spread {
    /// Median.
    pub med: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

impl Spread {
    /// Of `values` (empty → zeros).
    pub fn of(values: &[f64]) -> Spread {
        if values.is_empty() {
            return Spread::default();
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let mid = v.len() / 2;
        let med = if v.len() % 2 == 1 {
            v[mid]
        } else {
            (v[mid - 1] + v[mid]) / 2.0
        };
        Spread {
            med,
            min: v[0],
            max: v[v.len() - 1],
        }
    }
}

/// Rounds of one series, summarised field by field.
#[derive(Debug, Clone, Copy, Default)]
pub struct Series {
    /// Requests per second.
    pub rps: Spread,
    /// p50, ms.
    pub p50: Spread,
    /// p95, ms.
    pub p95: Spread,
    /// p99, ms.
    pub p99: Spread,
    /// Requests answered over all rounds.
    pub n: usize,
}

impl Series {
    /// Summarise the rounds.
    pub fn of(rounds: &[Batch]) -> Series {
        let pick = |f: fn(&Batch) -> f64| Spread::of(&rounds.iter().map(f).collect::<Vec<_>>());
        Series {
            rps: pick(|b| b.rps),
            p50: pick(|b| b.p50),
            p95: pick(|b| b.p95),
            p99: pick(|b| b.p99),
            n: rounds.iter().map(|b| b.n).sum(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&[3.0], 99.0), 3.0);
        let s = Spread::of(&[5.0, 1.0, 3.0, 2.0]);
        assert_eq!((s.med, s.min, s.max), (2.5, 1.0, 5.0));
    }
}
