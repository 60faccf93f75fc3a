/// Estimates the DJ clock from NTP-style time samples: offset and drift, robust to jitter,
/// asymmetric delay, outliers and loss. Pure: no clock reads, no I/O; every instant is a parameter.
///
/// The filter (docs/CLOCK-SYNC.md has the maths):
/// 1. keep a window of recent plausible samples (by default the last 60 s, at most 256);
/// 2. each sample bounds the true offset at its midpoint to `θ̂ ± δ/2` whatever the asymmetry, and
///    queueing only ever widens those bounds;
/// 3. fit `offset = a + b·(t − tRef)` as the line with the widest clearance from every bound
///    (`OffsetLineFit`): only the fastest outbound and the fastest return samples pin it, so slow
///    packets and outliers do not pull it, and a dense burst of samples does not outweigh the rest
///    of the window. `b` is the drift. While the samples span too little time for a slope, keep the
///    previous drift and fit only the offset; `tRef` is the newest sample;
/// 4. a run of samples that contradict the model beyond their own error bound means the DJ clock
///    stepped: start again from those samples.
///
/// Ping at once and quickly right after joining until synchronised, then in a burst, a little slower
/// while the drift settles, then slowly: see `suggestedPingIntervalNs(at:pingsSent:)`. The estimate
/// drives playback (`isSynchronized`) once a few samples pin the offset to within a millisecond, or
/// after eight.
public struct ClockSync: Sendable {
    public struct Configuration: Hashable, Sendable {
        /// Samples older than this (by local midpoint, relative to the newest) leave the window.
        public var windowNs: Int64 = 60 * Nanos.perSecond
        /// Hard cap on the window size; the oldest samples go first.
        public var maxSamples: Int = 256
        /// The window must span at least this much local time before a drift is fitted.
        public var minDriftSpanNs: Int64 = 1_000 * Nanos.perMillisecond
        /// Drift estimates are clamped to ± this (crystal oscillators stay well within 200 ppm).
        public var maxDriftPPM: Double = 1_000
        /// Ping interval from the first ping until synchronised (at most ``joiningPings`` pings): a
        /// listener plays once its estimate is good, so the first samples are asked for at once.
        public var joiningIntervalNs: Int64 = 10 * Nanos.perMillisecond
        /// The joining pace stops after this many pings, synchronised or not (a DJ that does not
        /// answer is not pinged a hundred times a second).
        public var joiningPings: Int = 12
        /// Ping interval in the burst that follows, while the window fills.
        public var burstIntervalNs: Int64 = 75 * Nanos.perMillisecond
        /// The burst lasts at least this long after the first sample…
        public var burstDurationNs: Int64 = 2 * Nanos.perSecond
        /// …and until this many samples have arrived.
        public var burstMinSamples: Int = 16
        /// After the burst, ping at this interval until `settleDurationNs` after the first sample, so
        /// that the drift is pinned down early from many samples.
        public var settleIntervalNs: Int64 = 200 * Nanos.perMillisecond
        public var settleDurationNs: Int64 = 10 * Nanos.perSecond
        /// Ping interval once synchronised.
        public var steadyIntervalNs: Int64 = 500 * Nanos.perMillisecond
        /// A sample whose offset misses the model by more than half its round trip plus this margin
        /// contradicts the model.
        public var stepMarginNs: Int64 = 2 * Nanos.perMillisecond
        /// This many contradicting samples in a row reset the estimator (the DJ clock stepped).
        public var stepRun: Int = 3
        /// The estimate counts as synchronised once the window holds this many samples…
        public var minSamplesForSync: Int = 8
        /// …or sooner, once it holds this many and the offset is pinned to within
        /// ``quickSyncUncertaintyNs``: on a quiet LAN the first few round trips already bound the
        /// offset to a fraction of a millisecond (section 1 of docs/CLOCK-SYNC.md), and waiting for
        /// more only delays the first audio. Step detection still waits for ``minSamplesForSync``.
        public var quickSyncSamples: Int = 3
        public var quickSyncUncertaintyNs: Int64 = 1 * Nanos.perMillisecond
        /// Slopes whose clearance band is narrower than the widest by less than this (timestamping
        /// noise) count as equally good, and the fit takes the middle one, in nanoseconds.
        public var slopeToleranceNs: Double = 20_000

        public init() {}
    }

    /// What became of a sample handed to `add(_:)`.
    public enum Verdict: Hashable, Sendable {
        /// In the window and in the estimate.
        case accepted
        /// Timestamps that cannot describe a real exchange; ignored.
        case implausible
        /// Contradicts the current model; held back in case the DJ clock stepped.
        case contradicting
        /// The last samples all contradicted the model: the estimator restarted from them.
        case reset
    }

    public private(set) var configuration: Configuration
    /// The current model, nil until the first sample arrives.
    public private(set) var estimate: ClockEstimate?
    /// Samples currently in the window, oldest first.
    public private(set) var samples: [TimeSample] = []
    /// Counters for diagnostics (`doctor`, traces).
    public private(set) var acceptedCount = 0
    public private(set) var rejectedCount = 0
    public private(set) var resetCount = 0

    private var firstSampleLocalNs: Int64?
    private var contradicting: [TimeSample] = []
    /// Set once the quick rule was met; holds until ``reset()``, so that a sample that widens the
    /// band a little does not take the clock away from a player already started on it.
    private var quickSynchronized = false

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Whether the estimate rests on enough samples to drive playback: ``Configuration/minSamplesForSync``
    /// samples, or ``Configuration/quickSyncSamples`` that pin the offset closely.
    public var isSynchronized: Bool {
        estimate != nil && (samples.count >= configuration.minSamplesForSync || quickSynchronized)
    }

    /// DJ clock minus local clock at `local`, or nil before the first sample.
    public func offset(at local: LocalTime) -> Int64? { estimate?.offset(at: local) }

    /// The DJ-clock reading for local instant `local`, or nil before the first sample.
    public func djTime(at local: LocalTime) -> DJTime? { estimate?.djTime(at: local) }

    /// Drift of the DJ clock relative to the local clock, in ppm (0 before there is an estimate).
    public var driftPPM: Double { estimate?.driftPPM ?? 0 }

    /// How long to wait before the next ping, given local time `now` and how many pings were sent
    /// since joining: `joiningIntervalNs` until synchronised (for the first `joiningPings`),
    /// `burstIntervalNs` while the window fills, `settleIntervalNs` while the drift settles,
    /// `steadyIntervalNs` afterwards.
    public func suggestedPingIntervalNs(at now: LocalTime, pingsSent: Int = .max) -> Int64 {
        if !isSynchronized && pingsSent < configuration.joiningPings { return configuration.joiningIntervalNs }
        guard let first = firstSampleLocalNs else { return configuration.burstIntervalNs }
        let elapsed = now.ns &- first
        if elapsed < configuration.burstDurationNs || samples.count < configuration.burstMinSamples {
            return configuration.burstIntervalNs
        }
        if elapsed < configuration.settleDurationNs { return configuration.settleIntervalNs }
        return configuration.steadyIntervalNs
    }

    /// Forgets every sample (e.g. after switching to another station).
    public mutating func reset() {
        samples.removeAll()
        contradicting.removeAll()
        estimate = nil
        firstSampleLocalNs = nil
        quickSynchronized = false
    }

    /// Feeds one completed exchange into the filter and updates `estimate`.
    @discardableResult
    public mutating func add(_ sample: TimeSample) -> Verdict {
        guard sample.isPlausible else {
            rejectedCount += 1
            return .implausible
        }
        if let estimate, samples.count >= configuration.minSamplesForSync {
            let residual = sample.offsetNs &- estimate.offset(atLocal: sample.midpointNs)
            if residual.magnitude > UInt64(sample.delayNs / 2 &+ configuration.stepMarginNs) {
                contradicting.append(sample)
                guard contradicting.count >= configuration.stepRun else { return .contradicting }
                let fresh = contradicting
                reset()
                resetCount += 1
                for held in fresh { insert(held) }
                recompute()
                return .reset
            }
        }
        contradicting.removeAll()
        insert(sample)
        recompute()
        return .accepted
    }

    private mutating func insert(_ sample: TimeSample) {
        acceptedCount += 1
        if firstSampleLocalNs == nil { firstSampleLocalNs = sample.midpointNs }
        // Keep the window ordered by midpoint; pongs can arrive out of order.
        let index = samples.lastIndex(where: { $0.midpointNs <= sample.midpointNs }).map { $0 + 1 } ?? 0
        samples.insert(sample, at: index)
        let newest = samples[samples.count - 1].midpointNs
        let cutoff = newest &- configuration.windowNs
        if let keepFrom = samples.firstIndex(where: { $0.midpointNs >= cutoff }), keepFrom > 0 {
            samples.removeFirst(keepFrom)
        }
        if samples.count > configuration.maxSamples { samples.removeFirst(samples.count - configuration.maxSamples) }
    }

    private mutating func recompute() {
        guard !samples.isEmpty else {
            estimate = nil
            return
        }
        let fit = OffsetLineFit(
            samples: samples, toleranceNs: configuration.slopeToleranceNs,
            minDriftSpanNs: configuration.minDriftSpanNs, maxDriftPPM: configuration.maxDriftPPM,
            fallbackDriftPPM: estimate?.driftPPM ?? 0)
        estimate = fit.estimate
        if let estimate, samples.count >= configuration.quickSyncSamples,
            estimate.uncertaintyNs <= configuration.quickSyncUncertaintyNs
        {
            quickSynchronized = true
        }
    }
}
