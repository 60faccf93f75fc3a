/// Keeps a live output on time by resampling: the listener's sound card and the station clock
/// drift apart (up to ±200 ppm between two machines' crystals), so each frame's first sample
/// would be heard ever earlier or later than its `T + D`. Dropping or repeating samples to catch
/// up is heard as a click; this controller instead stretches or squeezes the output by a small
/// ratio that changes smoothly (docs/LIVE.md, "Drift").
///
/// Pure: the caller measures the error (when the frame about to be written will be heard, on
/// the station clock, minus its `T + D`) and says when; the controller answers the resampling
/// ratio (output samples per input sample) to use until the next measurement.
///
/// A PI controller on a smoothed error: the proportional part takes an offset away over
/// ``Settings/correctionSeconds``, the integral learns the steady drift, so the error goes to
/// zero rather than to the offset that would hold the drift. The ratio stays within
/// ``Settings/maxPPM`` of 1 and moves at most ``Settings/slewPPMPerSecond``: a change of 500 ppm
/// is under a cent of pitch, and it never jumps.
public struct LiveDriftController: Sendable {
    public struct Settings: Sendable, Equatable {
        /// The most the ratio departs from 1, in parts per million.
        public var maxPPM: Double
        /// The most the ratio moves in a second, in ppm.
        public var slewPPMPerSecond: Double
        /// The time over which an offset is taken away.
        public var correctionSeconds: Double
        /// The time over which the steady drift is learnt (the integral's).
        public var integralSeconds: Double
        /// The time constant of the error's smoothing (the measurements jitter by the output's
        /// timing reports and the clock estimate).
        public var smoothingSeconds: Double
        /// The ratio it starts at and the drift it starts from, in ppm: what an output to the same
        /// sound card learnt before (a speaker's output made again for a new delay trim), so that
        /// it need not learn it again over the integral's seconds, off by up to the drift times
        /// ``correctionSeconds`` meanwhile (0.45 ms at 300 ppm). 0 for a first output.
        public var startPPM: Double

        public init(
            maxPPM: Double = 1000, slewPPMPerSecond: Double = 300, correctionSeconds: Double = 1.5,
            integralSeconds: Double = 6, smoothingSeconds: Double = 0.25, startPPM: Double = 0
        ) {
            self.maxPPM = maxPPM
            self.slewPPMPerSecond = slewPPMPerSecond
            self.correctionSeconds = correctionSeconds
            self.integralSeconds = integralSeconds
            self.smoothingSeconds = smoothingSeconds
            self.startPPM = startPPM
        }
    }

    public let settings: Settings
    /// How far the ratio may lag its target (held by its bound or its slew) while the integral still
    /// learns: the measurements' jitter keeps it a few ppm behind all the time, which is not windup.
    public static let windupPPM = 50.0
    /// The ratio's departure from 1 now, in ppm: positive plays slower (more output per input).
    public private(set) var ppm: Double = 0
    /// The smoothed error, in ns (positive: heard late).
    public private(set) var errorNs: Double?
    /// The integral's estimate of the steady drift, in ppm.
    private var drift: Double = 0
    private var lastAt: Int64?

    public init(settings: Settings = Settings()) {
        self.settings = settings
        let start = settings.startPPM.isFinite ? max(-settings.maxPPM, min(settings.maxPPM, settings.startPPM)) : 0
        ppm = start
        drift = start
    }

    /// The drift learnt so far, in ppm (the integral's): what a later output to the same sound
    /// card may start from (``Settings/startPPM``).
    public var learntPPM: Double { drift }

    /// Output samples per input sample.
    public var ratio: Double { 1 + ppm / 1_000_000 }

    /// Takes one measurement and answers the ratio to use from now on.
    /// - Parameters:
    ///   - errorNs: when the next sample written will be heard minus when it should be (positive: late).
    ///   - at: when it was measured, in ns of any clock that only goes forward.
    @discardableResult
    public mutating func update(errorNs measured: Int64, at now: Int64) -> Double {
        guard let last = lastAt, now > last else {
            if lastAt == nil {
                lastAt = now
                errorNs = Double(measured)
            }
            return ratio
        }
        lastAt = now
        let dt = min(Double(now - last) / 1e9, 1)
        let alpha = dt / (settings.smoothingSeconds + dt)
        let error = (errorNs ?? Double(measured)) + alpha * (Double(measured) - (errorNs ?? Double(measured)))
        errorNs = error
        // An error of e ns taken away over T s is a rate of e / T ns a second: e / T / 1000 ppm.
        // Late (e > 0) wants less output per input: a negative ppm.
        let proportional = -error / settings.correctionSeconds / 1000
        let target = drift + proportional
        let step = settings.slewPPMPerSecond * dt
        let next = max(-settings.maxPPM, min(settings.maxPPM, max(ppm - step, min(ppm + step, target))))
        // The integral learns only while the ratio follows the target: one that keeps integrating while
        // the ratio is held at its bound or its slew learns a drift that is not there, overshoots,
        // and with these gains (a drift step of 240 ppm, as a null sink's when the machine's load
        // changes) swings ever wider.
        if abs(target - next) < Self.windupPPM { drift += proportional * dt / settings.integralSeconds }
        drift = max(-settings.maxPPM, min(settings.maxPPM, drift))
        ppm = next
        return ratio
    }

    /// Forgets the error and keeps the drift learnt (after the output was placed again: a new
    /// stream, an underrun).
    public mutating func restart() {
        errorNs = nil
        lastAt = nil
    }
}
