//! The request series' handles, kept per thread: counting a request builds
//! no label strings and takes no registry lock once its series exists.
//!
//! The `metrics` macros build a key (four label strings) and look the
//! series up in the recorder's registry on every call. Here each thread
//! keeps the handles it has looked up, by route and then by method, status
//! and code: values the API's declaration bounds (see [the module
//! docs](super)), so the table stays as small as the set of series. The
//! table belongs to the recorder it was filled from, and starts over when
//! another recorder is current (a test's local one, say).

use std::cell::RefCell;
use std::collections::HashMap;

use metrics::{Counter, Gauge, Histogram, Recorder};

use super::metrics::{DURATION, IN_FLIGHT, REQUESTS};

/// A series' labels besides its route: method, status, gRPC code.
type Labels = (&'static str, u16, &'static str);

#[derive(Default)]
struct Series {
    /// The address of the recorder the handles are of.
    recorder: usize,
    by_route: HashMap<Box<str>, Vec<(Labels, Counter, Histogram)>>,
    in_flight: Option<Gauge>,
}

thread_local! {
    static SERIES: RefCell<Series> = RefCell::default();
}

/// `f` on this thread's handles of the current recorder.
fn with_series<T>(f: impl FnOnce(&mut Series) -> T) -> T {
    let recorder = metrics::with_recorder(|recorder: &dyn Recorder| {
        std::ptr::from_ref(recorder).cast::<()>() as usize
    });
    SERIES.with_borrow_mut(|series| {
        if series.recorder != recorder {
            *series = Series {
                recorder,
                ..Series::default()
            };
        }
        f(series)
    })
}

/// Counts one request in [`REQUESTS`] and its `seconds` in [`DURATION`].
pub(super) fn record(route: &str, labels: Labels, seconds: f64) {
    with_series(|series| {
        if !series.by_route.contains_key(route) {
            series.by_route.insert(route.into(), Vec::new());
        }
        let handles = series.by_route.get_mut(route).expect("inserted above");
        let index = match handles.iter().position(|(known, ..)| *known == labels) {
            Some(index) => index,
            None => {
                let (method, status, code) = labels;
                let pairs = [
                    ("route", route.to_owned()),
                    ("method", method.to_owned()),
                    ("status", status.to_string()),
                    ("code", code.to_owned()),
                ];
                let counter = metrics::counter!(REQUESTS, &pairs);
                handles.push((labels, counter, metrics::histogram!(DURATION, &pairs)));
                handles.len() - 1
            }
        };
        let (_, counter, histogram) = &handles[index];
        counter.increment(1);
        histogram.record(seconds);
    });
}

/// Adds `delta` to [`IN_FLIGHT`].
pub(super) fn in_flight(delta: f64) {
    with_series(|series| {
        series
            .in_flight
            .get_or_insert_with(|| metrics::gauge!(IN_FLIGHT))
            .increment(delta);
    });
}
