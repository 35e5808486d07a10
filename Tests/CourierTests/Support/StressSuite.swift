import Testing

/// The stress tests (thousands of requests each), one at a time: run side by side under
/// ThreadSanitizer they starved the cooperative pool long enough for unrelated tests with real
/// deadlines to fail. Everything else still runs in parallel with them.
@Suite(.serialized) enum Stress {}
