//! Timestamps as the API stores and returns them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use prost_types::Timestamp;

/// The current time, truncated to microseconds (what every backend can store).
pub fn now() -> Timestamp {
    let elapsed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("the clock is after 1970");
    Timestamp {
        seconds: elapsed.as_secs() as i64,
        nanos: (elapsed.subsec_micros() * 1000) as i32,
    }
}

/// The current time as microseconds since the epoch (what storage columns
/// of timestamps hold).
pub fn now_micros() -> i64 {
    to_micros(&now())
}

/// Seconds since the epoch (token issue and expiry times).
pub fn unix_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// A timestamp as microseconds since the epoch (a sortable storage column).
pub fn to_micros(timestamp: &Timestamp) -> i64 {
    timestamp.seconds * 1_000_000 + i64::from(timestamp.nanos / 1000)
}

/// A duration in nanoseconds, as storage columns and filters keep it;
/// durations past about 292 years saturate.
pub fn duration_nanos(duration: &prost_types::Duration) -> i64 {
    let nanos = i128::from(duration.seconds) * 1_000_000_000 + i128::from(duration.nanos);
    i64::try_from(nanos).unwrap_or(if nanos < 0 { i64::MIN } else { i64::MAX })
}

/// The inverse of [`to_micros`].
pub fn from_micros(micros: i64) -> Timestamp {
    Timestamp {
        seconds: micros.div_euclid(1_000_000),
        nanos: (micros.rem_euclid(1_000_000) * 1000) as i32,
    }
}

/// A duration as flags spell it (a server's timeouts): a number with the unit
/// `ms`, `s`, `m` or `h` (seconds when none).
pub fn parse_duration(value: &str) -> Result<Duration, String> {
    let value = value.trim();
    let split = value
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(value.len());
    let (number, unit) = value.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("`{value}` is not a duration such as `10s` or `500ms`"))?;
    let seconds = match unit.trim() {
        "ms" => number / 1000.0,
        "" | "s" => number,
        "m" => number * 60.0,
        "h" => number * 3600.0,
        _ => return Err(format!("`{value}`: the unit is `ms`, `s`, `m` or `h`")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("`{value}` is out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_round_trip() {
        for micros in [0, 1, -1, 1_700_000_000_123_456, -1_700_000_000_123_456] {
            assert_eq!(to_micros(&from_micros(micros)), micros);
        }
        let now = now();
        assert_eq!(from_micros(to_micros(&now)), now);
    }

    #[test]
    fn durations_take_a_unit() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("1500ms"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(parse_duration("1d").is_err());
        assert!(parse_duration("s").is_err());
    }
}
