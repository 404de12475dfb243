//! Failures counted per class (`proto::Failure`), with the first message of each: an array, so
//! that the hot path records a failure without allocating.

use std::ops::AddAssign;

use crate::proto::Failure;

/// Count per failure class, plus the first message seen for each class (formatted once, not per
/// request).
#[derive(Debug, Clone)]
pub struct FailureCounts {
    counts: [u64; Failure::ALL.len()],
    examples: [Option<String>; Failure::ALL.len()],
}

// By hand: the standard library derives `Default` for arrays of at most 32.
impl Default for FailureCounts {
    fn default() -> FailureCounts {
        FailureCounts {
            counts: [0; Failure::ALL.len()],
            examples: std::array::from_fn(|_| None),
        }
    }
}

impl FailureCounts {
    pub fn add(&mut self, f: Failure) {
        self.counts[f as usize] += 1;
    }

    /// Counts `f` and keeps `detail()` as its example if it is the first of its class.
    pub fn add_with(&mut self, f: Failure, detail: impl FnOnce() -> String) {
        self.add(f);
        let slot = &mut self.examples[f as usize];
        if slot.is_none() {
            *slot = Some(detail());
        }
    }

    pub fn get(&self, f: Failure) -> u64 {
        self.counts[f as usize]
    }

    /// Counts indexed like `Failure::ALL`.
    pub fn counts(&self) -> [u64; Failure::ALL.len()] {
        self.counts
    }

    pub fn example(&self, f: Failure) -> Option<&str> {
        self.examples[f as usize].as_deref()
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}

impl AddAssign<&FailureCounts> for FailureCounts {
    fn add_assign(&mut self, o: &FailureCounts) {
        for i in 0..self.counts.len() {
            self.counts[i] += o.counts[i];
            if self.examples[i].is_none() {
                self.examples[i].clone_from(&o.examples[i]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_keeps_the_first_example() {
        let mut f = FailureCounts::default();
        f.add_with(Failure::Closed, || "first".into());
        f.add_with(Failure::Closed, || "second".into());
        f.add(Failure::Parse);
        assert_eq!(f.get(Failure::Closed), 2);
        assert_eq!(f.example(Failure::Closed), Some("first"));
        assert_eq!(f.example(Failure::Parse), None);
        assert_eq!(f.total(), 3);
        let mut g = FailureCounts::default();
        g.add_with(Failure::Parse, || "bad".into());
        g += &f;
        assert_eq!(
            (g.get(Failure::Parse), g.example(Failure::Parse)),
            (2, Some("bad"))
        );
        assert_eq!(g.example(Failure::Closed), Some("first"));
    }
}
