import Foundation
import PartyRadioCore
import Synchronization

/// What a live player did so far: the jitter buffer's counters and the output's placement.
public struct LivePlayerCounters: Sendable, Equatable {
    public var buffer = LiveCounters()
    /// Times the output was placed on the station's timeline: the first frame, and again after a
    /// silence or an error too large to take away by resampling.
    public var placements = 0
    /// Decisions dropped because they came far past their time (the output or the machine stalled).
    public var skipped = 0
    /// The last measured error (heard minus due), in ns; positive: late.
    public var lastErrorNs: Int64 = 0
    /// The resampling ratio's departure from 1 now, in ppm.
    public var ppm: Double = 0

    public init() {}
}

/// A listener's live output (docs/LIVE.md, "The listener's output"): frames and repairs go into a
/// ``LiveJitterBuffer`` from the node's thread; a dedicated audio thread takes the buffer's
/// decisions, decodes them (Opus, concealment for what is missing), resamples them by the drift
/// controller's ratio and writes them to PulseAudio, so that a frame sampled at station time `T`
/// is heard at `T + delay`. The audio thread never runs on the node's reactor: the output's
/// blocking write paces it.
public final class LivePlayer: @unchecked Sendable {
    public struct Options: Sendable {
        /// The station's delay plus the listener's own extra.
        public var delayNs: Int64
        public var server: String?
        public var sink: String?
        /// The output's buffer: its part of the latency.
        public var bufferNs: Int64

        public init(
            delayNs: Int64 = 60_000_000, server: String? = nil, sink: String? = nil, bufferNs: Int64 = 20_000_000
        ) {
            self.delayNs = delayNs
            self.server = server
            self.sink = sink
            self.bufferNs = bufferNs
        }
    }

    /// How much later than its input libopus's output comes: the encoder's lookahead at 48 kHz
    /// with application `audio` (312 samples, 6.5 ms), which docs/LIVE.md fixes for the carrier. A
    /// frame stamped with the station time of its first captured sample has that sample this much
    /// into its decoded PCM, so the PCM starts this much before its stamp.
    public static let codecDelayNs: Int64 = 312 * 1_000_000_000 / 48_000

    /// An error beyond what resampling takes away soon (1 ms takes a second at the controller's
    /// most): the output is placed again instead. An output that ran dry (a loaded machine, the
    /// sound server's restart) shows up as a jump of the error by the time it lost.
    public static let replaceBeyondNs: Int64 = 8_000_000

    public let options: Options
    /// The station clock now, nil while the listener's clock is not synchronised.
    private let stationNow: @Sendable () -> DJTime?
    private let shared: Mutex<Shared>
    private var thread: Thread?
    private let done = DispatchSemaphore(value: 0)

    private struct Shared: @unchecked Sendable {
        var buffer: LiveJitterBuffer
        var counters = LivePlayerCounters()
        var running = true
        var failure: String?
        var started = false
        /// The output's gain (``LiveGain``): 1 until a volume is set.
        var gain = 1.0
    }

    public init(options: Options, stationNow: @escaping @Sendable () -> DJTime?) {
        self.options = options
        self.stationNow = stationNow
        shared = Mutex(
            Shared(
                buffer: LiveJitterBuffer(
                    settings: .init(delayNs: options.delayNs), code: ISALErasureCode())))
    }

    /// A frame from the station (already authenticated): into the buffer.
    public func receive(_ frame: LiveFrame) {
        guard let now = stationNow() else { return }
        shared.withLock { _ = $0.buffer.insert(frame, now: now) }
    }

    /// A repair from the station (already authenticated): into the buffer.
    public func receive(_ repair: LiveRepair) {
        guard let now = stationNow() else { return }
        shared.withLock { _ = $0.buffer.insert(repair, now: now) }
    }

    public var counters: LivePlayerCounters {
        shared.withLock { shared in
            var counters = shared.counters
            counters.buffer = shared.buffer.counters
            return counters
        }
    }

    /// The output's volume, 0–100 (0: silent), on the same curve as libmpv's (``LiveGain``); from the
    /// next frame on.
    public func setVolume(_ level: Int) { shared.withLock { $0.gain = LiveGain.factor(volume: level) } }

    /// Whether the output plays and reports its latency: frames are placed from then on.
    public var isStarted: Bool { shared.withLock { $0.started } }

    /// Why the audio thread stopped, if it did.
    public var failure: String? { shared.withLock { $0.failure } }

    /// Opens the output and starts the audio thread.
    public func start() throws(PulseError) {
        let output = try PulseOutput(
            server: options.server, sink: options.sink, streamName: "live station", bufferNs: options.bufferNs,
            requestNs: 5_000_000)
        let decoder: OpusDecoder
        do { decoder = try OpusDecoder() } catch { throw PulseError("\(error)") }
        let parts = AudioParts(output: output, decoder: decoder, resampler: try SpeexResampler())
        let thread = Thread { [self] in
            Thread.current.name = "partyradio-live"  // set from the thread itself: its name in top -H
            run(output: parts.output, decoder: parts.decoder, resampler: parts.resampler)
            done.signal()
        }
        thread.qualityOfService = .userInteractive
        self.thread = thread
        thread.start()
    }

    /// Stops the audio thread and closes the output.
    public func stop() {
        guard thread != nil else { return }
        shared.withLock { $0.running = false }
        done.wait()
        thread = nil
    }

    private func run(output: PulseOutput, decoder: OpusDecoder, resampler: SpeexResampler) {
        var controller = LiveDriftController()
        var placed = false
        var started = false
        var idleSinceNs: Int64?
        let silence5ms = [Int16](repeating: 0, count: 240 * 2)
        let filterDelayNs = Int64(resampler.delaySamples) * 1_000_000_000 / 48_000
        do {
            // The stream plays once its buffer is full, and reports its latency only then (before,
            // libpulse's query waits for a timing report, whose interval grows to 1.5 s).
            try output.write([Int16](repeating: 0, count: Int(options.bufferNs * 48_000 / 1_000_000_000) * 2))
            while shared.withLock({ $0.running }) {
                guard let now = stationNow() else {
                    try output.write(silence5ms)
                    continue
                }
                // What is written now is heard at `horizon`, on the station clock.
                let horizon = now + (try output.latencyNs()) + filterDelayNs
                if !started { shared.withLock { $0.started = true } }
                started = true
                // The buffer's playout time is `T + delay`; ours is the codec's delay before it. A
                // frame is taken up to 5 ms before its time: the output holds more than that.
                let decision = shared.withLock { $0.buffer.next(at: horizon + Self.codecDelayNs + 5_000_000) }
                guard let decision else {
                    let mono = monotonicNs()
                    if placed {
                        // Ahead of the next frame's time: the output still holds enough.
                        if let since = idleSinceNs, mono - since > 50_000_000 {
                            placed = false  // the station went silent: keep the output running
                        } else {
                            if idleSinceNs == nil { idleSinceNs = mono }
                            Thread.sleep(forTimeInterval: 0.001)
                            continue
                        }
                    }
                    try output.write(silence5ms)
                    continue
                }
                idleSinceNs = nil
                let pcm: [Int16]
                do { pcm = try decoder.pcm(for: decision) } catch { pcm = try decoder.conceal(decision.duration) }
                let due = decision.firstSample + options.delayNs - Self.codecDelayNs
                let errorNs = horizon - due
                if !placed || abs(errorNs) > Self.replaceBeyondNs {
                    if errorNs > 0 {
                        // Placing, and past its time (the output started late or stalled): skipped,
                        // so that the stream starts on time at a later frame.
                        shared.withLock { $0.counters.skipped += 1 }
                        placed = false
                        continue
                    }
                    placed = true
                    controller.restart()
                    let gap = due - horizon
                    if gap > 0 {
                        try output.write([Int16](repeating: 0, count: Int(gap * 48_000 / 1_000_000_000) * 2))
                    }
                    shared.withLock { $0.counters.placements += 1 }
                } else {
                    resampler.setRatio(controller.update(errorNs: errorNs, at: monotonicNs()))
                }
                let gain = shared.withLock {
                    $0.counters.lastErrorNs = errorNs
                    $0.counters.ppm = controller.ppm
                    return $0.gain
                }
                try output.write(resampler.process(LiveGain.apply(gain, to: pcm)))
            }
        } catch {
            shared.withLock { $0.failure = "\(error)" }
        }
    }
}

/// The output, decoder and resampler, made here and handed to the audio thread, the only one that
/// uses them from then on.
private struct AudioParts: @unchecked Sendable {
    let output: PulseOutput
    let decoder: OpusDecoder
    let resampler: SpeexResampler
}

func monotonicNs() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
}
