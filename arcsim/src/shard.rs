//! Shards of a sweep: `--shard I/N` runs the seeds at positions `I, I+N, I+2N, …` of every cell, so N
//! processes (pods of an Indexed Job, jobs of a CI matrix) split one sweep between them and `arcsim
//! merge` puts it back together. Splitting by position within each cell, not by cell, gives every shard
//! a share of every cell, so the shards take about equally long and each bug cell's early stop can be
//! recomputed from the merged per-seed results.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One of `count` shards, numbered from 0 (as Kubernetes numbers an Indexed Job's completions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// This shard's number, below `count`.
    pub index: u32,
    /// How many shards the sweep is split into.
    pub count: u32,
}

impl Shard {
    /// The whole sweep: shard 0 of 1.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Whether this shard runs the seed at `position` (0-based) of a cell's seeds.
    pub fn owns(self, position: usize) -> bool {
        position % self.count as usize == self.index as usize
    }

    /// Whether this is the whole sweep.
    pub fn is_whole(self) -> bool {
        self.count == 1
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A `--shard` argument that is not `I/N` with `I < N`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// Not two numbers separated by `/`.
    #[error("--shard {0:?}: expected I/N, shard I (from 0) of N shards, e.g. 0/3")]
    Malformed(String),
    /// N is 0.
    #[error("--shard {0:?}: the shard count must be at least 1")]
    NoShards(String),
    /// I is not below N.
    #[error("--shard {text:?}: shards are numbered from 0, so the index must be below {count}")]
    IndexTooLarge {
        /// The argument.
        text: String,
        /// N.
        count: u32,
    },
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let malformed = || ShardError::Malformed(text.to_string());
        let (index, count) = text.trim().split_once('/').ok_or_else(malformed)?;
        let index: u32 = index.trim().parse().map_err(|_| malformed())?;
        let count: u32 = count.trim().parse().map_err(|_| malformed())?;
        if count == 0 {
            return Err(ShardError::NoShards(text.to_string()));
        }
        if index >= count {
            return Err(ShardError::IndexTooLarge { text: text.to_string(), count });
        }
        Ok(Shard { index, count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_bad_ones_get_clear_errors() {
        assert_eq!("1/3".parse(), Ok(Shard { index: 1, count: 3 }));
        assert_eq!("0/1".parse(), Ok(Shard::WHOLE));
        for (text, says) in [
            ("3/2", "below 2"),
            ("2/2", "below 2"),
            ("x", "expected I/N"),
            ("1/x", "expected I/N"),
            ("-1/2", "expected I/N"),
            ("1/", "expected I/N"),
            ("0/0", "at least 1"),
        ] {
            let err = text.parse::<Shard>().unwrap_err().to_string();
            assert!(err.contains(says), "{text}: {err}");
        }
    }

    #[test]
    fn the_shards_of_a_sweep_split_every_cell_between_them() {
        let shards: Vec<Shard> = (0..3).map(|index| Shard { index, count: 3 }).collect();
        for position in 0..10 {
            assert_eq!(shards.iter().filter(|s| s.owns(position)).count(), 1, "{position}");
        }
        assert!((0..10).all(|p| Shard::WHOLE.owns(p)));
    }
}
