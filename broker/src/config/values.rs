//! The checks every section uses: a choice among names, a number within its
//! [`Bound`], a text within its length.

use moat_protocol::limits::Bound;

use super::error::{ConfigError, OutOfBounds};
use super::keys::closest;

/// One of `options`, matched in any case and without surrounding spaces;
/// the option as spelt in `options`. An empty value, or any other, is
/// refused naming the setting and what it accepts.
pub(super) fn choice(
    name: &str,
    value: Option<&str>,
    options: &[&'static str],
) -> Result<Option<&'static str>, ConfigError> {
    let Some(value) = value else {
        return Ok(None);
    };
    let wanted = options.join(", ");
    let given = value.trim();
    if given.is_empty() {
        return Err(ConfigError::EmptyChoice {
            key: name.to_owned(),
            wanted,
        });
    }
    match options.iter().find(|o| o.eq_ignore_ascii_case(given)) {
        Some(o) => Ok(Some(*o)),
        None => Err(ConfigError::NotAChoice {
            key: name.to_owned(),
            wanted,
            value: value.to_owned(),
            guesses: closest(given, options)
                .into_iter()
                .map(str::to_owned)
                .collect(),
        }),
    }
}

/// `v`, or the bound's default, within the bound. A bound without a default
/// (`sandbox.workers`) is given `default` by the caller.
pub(crate) fn bounded(b: &Bound, v: Option<u64>) -> Result<u64, OutOfBounds> {
    bounded_or(b, v, b.default.unwrap_or(b.min))
}

/// [`bounded`] with the default the caller computed.
pub(super) fn bounded_or(b: &Bound, v: Option<u64>, default: u64) -> Result<u64, OutOfBounds> {
    let value = v.unwrap_or(default);
    if value < b.min || value > b.max {
        return Err(OutOfBounds {
            key: b.key,
            min: b.min,
            max: b.max,
            value,
        });
    }
    Ok(value)
}

/// `text` within the bound's length, in characters.
pub(super) fn length(b: &Bound, text: &str) -> Result<(), ConfigError> {
    let n = u64::try_from(text.chars().count()).unwrap_or(u64::MAX);
    if n < b.min || n > b.max {
        return Err(ConfigError::Length {
            key: b.key,
            min: b.min,
            max: b.max,
        });
    }
    Ok(())
}

/// A bounded value as the `u32` its field holds (the bounds keep it within).
pub(super) fn as_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// A bounded value as the `usize` its field holds (the bounds keep it within).
pub(super) fn as_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}
