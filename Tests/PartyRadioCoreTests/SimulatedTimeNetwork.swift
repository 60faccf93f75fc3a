import PartyRadioCore

/// Deterministic random numbers for simulations (the core's SplitMix64).
struct SeededGenerator: RandomNumberGenerator {
    private var generator: SplitMix64
    init(seed: UInt64) { generator = SplitMix64(seed: seed) }
    mutating func next() -> UInt64 { generator.next() }
    mutating func unit() -> Double { generator.unit() }
    /// Exponentially distributed with the given mean.
    mutating func exponential(mean: Double) -> Double {
        var u = unit()
        if u >= 1 { u = 0.999_999_999 }
        return -mean * logApprox(1 - u)
    }
}

/// Natural logarithm without Foundation (argument in (0, 1]); accurate to ~1e-12.
func logApprox(_ x: Double) -> Double {
    // ln(x) = 2·atanh((x−1)/(x+1)), after scaling x into [0.5, 1) by powers of two.
    var value = x
    var exponent = 0.0
    while value < 0.5 {
        value *= 2
        exponent -= 1
    }
    let z = (value - 1) / (value + 1)
    let z2 = z * z
    var term = z
    var sum = 0.0
    var n = 1.0
    while term.magnitude > 1e-17 {
        sum += term / n
        term *= z2
        n += 2
    }
    return 2 * sum + exponent * 0.693_147_180_559_945_3
}

/// A LAN with asymmetric jitter, loss and outliers between a listener and the DJ, both with wrong
/// clocks, against a shared true clock — the situation on the namespace testbed.
struct SimulatedTimeNetwork {
    struct Clock {
        var offsetNs: Int64
        var driftPPM: Double
        func read(trueTime: Int64, epoch: Int64) -> Int64 {
            trueTime + offsetNs + Int64((Double(trueTime - epoch) * driftPPM / 1e6).rounded())
        }
    }

    var epoch: Int64 = 1_764_000_000 * 1_000_000_000
    var listener: Clock
    var dj = Clock(offsetNs: 0, driftPPM: 0)
    var lossRate = 0.3
    var outlierRate = 0.05
    var baseDelayNs = 120_000.0
    var upJitterMeanNs = 400_000.0
    var downJitterMeanNs = 80_000.0
    var rng: SeededGenerator

    init(seed: UInt64, listenerOffsetNs: Int64, listenerDriftPPM: Double) {
        rng = SeededGenerator(seed: seed)
        listener = Clock(offsetNs: listenerOffsetNs, driftPPM: listenerDriftPPM)
    }

    func local(_ trueTime: Int64) -> Int64 { listener.read(trueTime: trueTime, epoch: epoch) }
    func djClock(_ trueTime: Int64) -> Int64 { dj.read(trueTime: trueTime, epoch: epoch) }

    private mutating func legDelay(jitterMean: Double) -> Int64 {
        var delay = baseDelayNs + rng.exponential(mean: jitterMean)
        if rng.unit() < outlierRate { delay += 2_000_000 + rng.unit() * 38_000_000 }
        return Int64(delay)
    }

    /// One exchange started at true time `start`: the sample and the true time it completes, or nil if lost.
    mutating func exchange(at start: Int64) -> (completesAt: Int64, sample: TimeSample)? {
        let lost = rng.unit() < lossRate
        let up = legDelay(jitterMean: upJitterMeanNs)
        let hold = Int64(20_000 + rng.unit() * 180_000)
        let down = legDelay(jitterMean: downJitterMeanNs)
        if lost { return nil }
        let received = start + up
        let sent = received + hold
        let back = sent + down
        return (back, TimeSample(t1: local(start), t2: djClock(received), t3: djClock(sent), t4: local(back)))
    }

    struct Run {
        var errorsAfterWarmupNs: [Int64] = []
        /// True time from the first ping until the error stayed below 1 ms for good.
        var convergenceNs: Int64 = 0
        /// The same for 100 µs.
        var convergence100usNs: Int64 = 0
        var final: ClockSync
    }

    /// Runs the ping loop for `durationNs` of true time and measures `djTime(local:)` against the DJ
    /// clock every `evalEveryNs` from `warmupNs` on. `change` may alter the network mid-run.
    mutating func run(
        durationNs: Int64, warmupNs: Int64 = 3_000_000_000, evalEveryNs: Int64 = 50_000_000,
        configuration: ClockSync.Configuration = .init(),
        change: ((Int64, inout SimulatedTimeNetwork) -> Void)? = nil
    ) -> Run {
        var sync = ClockSync(configuration: configuration)
        let start = epoch + 1_000_000_000
        var nextPing = start
        var nextEval = start
        var pending: [(completesAt: Int64, sample: TimeSample)] = []
        var errors: [Int64] = []
        var lastBad = start
        var lastBad100 = start
        var pings = 0
        while true {
            let nextArrival = pending.map(\.completesAt).min() ?? .max
            let now = min(nextPing, nextEval, nextArrival)
            if now > start + durationNs { break }
            change?(now - start, &self)
            if now == nextArrival {
                let index = pending.firstIndex { $0.completesAt == now }!
                sync.add(pending.remove(at: index).sample)
            } else if now == nextPing {
                if let done = exchange(at: now) { pending.append(done) }
                pings += 1
                nextPing = now + sync.suggestedPingIntervalNs(atLocal: local(now), pingsSent: pings)
            } else {
                let error: Int64 = sync.djTime(local: local(now)).map { $0 - djClock(now) } ?? .max
                if error == .max || error.magnitude >= 1_000_000 { lastBad = now }
                if error == .max || error.magnitude >= 100_000 { lastBad100 = now }
                if now - start >= warmupNs { errors.append(error == .max ? Int64.max / 2 : error) }
                nextEval = now + evalEveryNs
            }
        }
        return Run(
            errorsAfterWarmupNs: errors, convergenceNs: lastBad - start, convergence100usNs: lastBad100 - start,
            final: sync)
    }
}

/// The q-quantile (0…1) of the magnitudes.
func quantile(_ values: [Int64], _ q: Double) -> Int64 {
    let sorted = values.map { $0.magnitude }.sorted()
    guard !sorted.isEmpty else { return 0 }
    let index = min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))
    return Int64(sorted[index])
}
