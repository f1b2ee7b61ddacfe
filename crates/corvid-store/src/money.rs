//! Money as integer micro-dollars (µ$), and the price snapshot each usage row keeps.
//!
//! A price of `$p` per million tokens is `p × 10⁶` µ$ per million tokens, so a row's cost is
//! `Σ tokens × price_µ$/Mtok ÷ 10⁶`, rounded up: integer arithmetic, the same on every store.

use corvid_config::Price;

use crate::Tokens;

/// Micro-dollars per million tokens of each kind, as they were when the request was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PriceMicros {
    pub input: i64,
    pub cached_input: i64,
    pub cache_write: i64,
    pub output: i64,
}

impl PriceMicros {
    /// The configured price in µ$ per million tokens (a dollar figure with more than six
    /// decimals is rounded to the micro-dollar).
    pub fn from_price(price: &Price) -> Self {
        let micros = |dollars: f64| (dollars * 1e6).round().clamp(0.0, i64::MAX as f64) as i64;
        Self {
            input: micros(price.input),
            cached_input: micros(price.cached_input),
            cache_write: micros(price.cache_write),
            output: micros(price.output),
        }
    }

    /// What `tokens` cost at this price, in µ$, rounded up.
    pub fn cost(&self, tokens: &Tokens) -> i64 {
        let part = |count: u64, price: i64| i128::from(count) * i128::from(price.max(0));
        let total = part(tokens.input, self.input)
            + part(tokens.cache_read, self.cached_input)
            + part(tokens.cache_write, self.cache_write)
            + part(tokens.output, self.output);
        let micros = (total + 999_999) / 1_000_000;
        i64::try_from(micros).unwrap_or(i64::MAX)
    }
}

/// Whole dollars (as typed on a command line) to µ$.
pub fn usd_to_micros(usd: f64) -> i64 {
    (usd * 1e6).round().clamp(0.0, i64::MAX as f64) as i64
}

/// µ$ as dollars for display, e.g. `12.345678`.
pub fn micros_to_usd(micros: i64) -> f64 {
    micros as f64 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_are_integer_and_rounded_up() {
        let price = PriceMicros::from_price(&Price {
            input: 3.0,
            cached_input: 0.3,
            cache_write: 3.75,
            output: 15.0,
        });
        assert_eq!(price.input, 3_000_000);
        let tokens = Tokens {
            input: 1000,
            cache_read: 0,
            cache_write: 0,
            output: 1,
            reasoning: 0,
        };
        // 1000 × 3 µ$ + 1 × 15 µ$ = 3015 µ$ exactly.
        assert_eq!(price.cost(&tokens), 3015);
        let one = Tokens {
            input: 1,
            ..Tokens::default()
        };
        let cheap = PriceMicros::from_price(&Price {
            input: 0.1,
            ..Price::default()
        });
        // 0.1 µ$ rounds up to 1 µ$: never free.
        assert_eq!(cheap.cost(&one), 1);
        assert_eq!(usd_to_micros(50.0), 50_000_000);
    }
}
