//! Thresholds: "by default we use one standard deviation over the mean" (§3.1), computed over
//! all pages or all neighborhoods (§6.3: "the threshold is μ_N + σ_N").

use serde::{Deserialize, Serialize};

/// Count, sum and sum of squares of a population; mergeable across stores and partitions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MeanStd {
    pub count: u64,
    pub sum: f64,
    pub sum_squares: f64,
}

impl MeanStd {
    pub fn push(&mut self, x: f64) {
        self.count += 1;
        self.sum += x;
        self.sum_squares += x * x;
    }

    pub fn merge(&mut self, o: &MeanStd) {
        self.count += o.count;
        self.sum += o.sum;
        self.sum_squares += o.sum_squares;
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    /// Population standard deviation σ.
    pub fn std_dev(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let m = self.mean();
        (self.sum_squares / self.count as f64 - m * m).max(0.0).sqrt()
    }

    /// μ + σ.
    pub fn mean_plus_std(&self) -> f64 {
        self.mean() + self.std_dev()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_sigma_by_hand() {
        // {0, 0, 0, 1}: μ = 0.25, σ² = 0.25 - 0.0625 = 0.1875.
        let mut s = MeanStd::default();
        for x in [0.0, 0.0, 0.0, 1.0] {
            s.push(x);
        }
        assert_eq!(s.mean(), 0.25);
        assert!((s.std_dev() - 0.1875f64.sqrt()).abs() < 1e-12);
        assert!((s.mean_plus_std() - (0.25 + 0.1875f64.sqrt())).abs() < 1e-12);
        let mut a = MeanStd::default();
        a.push(0.0);
        a.push(0.0);
        let mut b = MeanStd::default();
        b.push(0.0);
        b.push(1.0);
        a.merge(&b);
        assert_eq!(a, s);
        assert_eq!(MeanStd::default().std_dev(), 0.0);
    }

    #[test]
    fn paper_common_crawl_threshold() {
        // §6.3: μ = 0.04, σ = 0.123 gives the threshold 0.163.
        assert!((0.04f64 + 0.123 - 0.163).abs() < 1e-12);
    }
}
