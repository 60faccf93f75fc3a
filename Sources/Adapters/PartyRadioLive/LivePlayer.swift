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
    /// The output's latency as last read (with the resampler's delay and what the write aligner
    /// held), in ns: `--trace` shows it beside the error, to tell a reading that moved from a clock
    /// that did.
    public var lastLatencyNs: Int64 = 0
    /// The resampling ratio's departure from 1 now, in ppm.
    public var ppm: Double = 0
    /// The drift the controller learnt, in ppm: what another output to the same sink starts from
    /// (``LivePlayer/Options/startPPM``).
    public var learntPPM: Double = 0
    /// Whether the audio thread runs at real-time priority (``RealTimeThread``).
    public var realTime = false

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
        /// What the output holds (its reported latency) once topped up: its part of the latency.
        public var bufferNs: Int64
        /// The drift correction's start, in ppm: what an output to the same sink learnt before
        /// (``LiveDriftController/Settings/startPPM``); 0 for the first.
        public var startPPM: Double

        public init(
            delayNs: Int64 = 60_000_000, server: String? = nil, sink: String? = nil, bufferNs: Int64 = 20_000_000,
            startPPM: Double = 0
        ) {
            self.delayNs = delayNs
            self.server = server
            self.sink = sink
            self.bufferNs = bufferNs
            self.startPPM = startPPM
        }

        /// What the output should hold at a delay of `delayNs` with frames of `frame`: 20 ms, less
        /// when the delay leaves less once a frame has been captured and sent (its length), decoded
        /// (the codec's lookahead) and has crossed the network (5 ms); never under 5 ms. At 60 ms
        /// that is 20 ms; at `--latency 30` with 10 ms frames 8.5 ms.
        /// The most the output may come to hold after it ran dry on a loaded machine: 30 ms, less
        /// when the delay leaves less once a 10 ms frame has come and been decoded, with 10 ms to spare
        /// for its arrival.
        public static func maximumBufferNs(delayNs: Int64) -> Int64 {
            min(30_000_000, max(5_000_000, delayNs - 10_000_000 - LivePlayer.codecDelayNs - 10_000_000))
        }

        public static func bufferNs(delayNs: Int64, frame: LiveFrameDuration) -> Int64 {
            let left = delayNs - frame.ns - LivePlayer.codecDelayNs - 5_000_000
            return min(20_000_000, max(5_000_000, left))
        }
    }

    /// How much later than its input libopus's output comes: the encoder's lookahead at 48 kHz
    /// with application `audio` (312 samples, 6.5 ms), which docs/LIVE.md fixes for the carrier. A
    /// frame stamped with the station time of its first captured sample has that sample this much
    /// into its decoded PCM, so the PCM starts this much before its stamp.
    public static let codecDelayNs: Int64 = 312 * 1_000_000_000 / 48_000

    /// How much more the stream may hold than the player keeps in it: the player's writes never
    /// wait for room. And how much it holds before it plays, at first and after running dry.
    static let headroomNs: Int64 = 5_000_000
    /// How often the server asks for more (`minreq`); each request wakes the audio thread. 10 ms
    /// woke it less, but the server then set the null sink's latency lower and the first frames
    /// were played almost 2 s late (LivePlayerTests, 186 frames skipped).
    static let requestNs: Int64 = 5_000_000

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
            server: options.server, sink: options.sink, streamName: "live station",
            bufferNs: options.bufferNs + Self.headroomNs, requestNs: Self.requestNs, startNs: Self.headroomNs)
        let decoder: OpusDecoder
        do { decoder = try OpusDecoder() } catch { throw PulseError("\(error)") }
        let parts = AudioParts(output: output, decoder: decoder, resampler: try SpeexResampler())
        let thread = Thread { [self] in
            Thread.current.name = "partyradio-live"  // set from the thread itself: its name in top -H
            // Woken on time under load, where allowed (RealTimeThread); said in the counters. The
            // output's connection to the server is driven on this thread too (PulseOutput).
            let realTime = RealTimeThread.enterForCallingThread()
            shared.withLock { $0.counters.realTime = realTime }
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

    /// Executes the pacer's plan (``LivePacer``): the output's latency and the buffer's next frame
    /// in, writes, waits and frames taken out. The pacer decides; this only does the I/O.
    private func run(output: PulseOutput, decoder: OpusDecoder, resampler: SpeexResampler) {
        var pacer = LivePacer(
            settings: .init(
                // Topped up 5 ms at a time: each write wakes the thread, 2.5 ms cost two hundred more a second.
                targetNs: options.bufferNs, minimumWriteNs: 5_000_000, drift: .init(startPPM: options.startPPM),
                maximumTargetNs: Options.maximumBufferNs(delayNs: options.delayNs)))
        var pending: [Int16] = []
        var offset = 0
        var started = false
        let filterDelayNs = Int64(resampler.delaySamples) * 1_000_000_000 / 48_000
        do {
            // The stream plays once it holds its start amount, and reports its latency only then
            // (before, libpulse's query waits for a timing report, whose interval grows to 1.5 s).
            var aligner = WriteAligner()
            func write(_ samples: ArraySlice<Int16>) throws(PulseError) {
                let whole = aligner.take(samples)
                if !whole.isEmpty { try output.write(whole) }
            }
            try write([Int16](repeating: 0, count: Int(options.bufferNs * 48_000 / 1_000_000_000) * 2)[...])
            while shared.withLock({ $0.running }) {
                guard let now = stationNow() else {
                    // No station clock yet: the output runs on silence, paced by its blocking write.
                    try write([Int16](repeating: 0, count: 240 * 2)[...])
                    continue
                }
                // A sample written now is heard at `now + latency`, on the station clock; a frame's
                // decoded PCM is due the codec's delay before its playout time. What the aligner
                // holds back is heard after what the output holds.
                let latencyNs = try output.latencyNs() + filterDelayNs + aligner.heldNs
                if !started {
                    started = true
                    shared.withLock { $0.started = true }
                }
                let next = shared.withLock { $0.buffer.nextDue }.map { $0 - Self.codecDelayNs }
                let step = pacer.step(now: now, latencyNs: latencyNs, next: next)
                switch step {
                case .wait(let ns):
                    try output.wait(ns: ns)
                case .silence(let samples):
                    try write([Int16](repeating: 0, count: samples * 2)[...])
                case .write(let samples):
                    try write(pending[offset..<offset + samples * 2])
                    offset += samples * 2
                case .drop(let samples):
                    offset += samples * 2
                case .take, .skip:
                    guard let next, let decision = shared.withLock({ $0.buffer.next(at: next + Self.codecDelayNs) })
                    else { continue }
                    let pcm: [Int16]
                    do { pcm = try decoder.pcm(for: decision) } catch { pcm = try decoder.conceal(decision.duration) }
                    guard step == .take else { break }
                    resampler.setRatio(pacer.ratio)
                    // The node's volume (LiveGain), on the decoded frame.
                    pending = resampler.process(LiveGain.apply(shared.withLock { $0.gain }, to: pcm))
                    offset = 0
                    pacer.took(
                        due: decision.firstSample + options.delayNs - Self.codecDelayNs,
                        durationNs: decision.duration.ns, samples: pending.count / 2)
                }
                let counters = pacer.counters
                let ppm = pacer.ppm
                let learnt = pacer.learntPPM
                shared.withLock {
                    $0.counters.learntPPM = learnt
                    $0.counters.placements = counters.placements
                    $0.counters.skipped = counters.skipped
                    $0.counters.lastErrorNs = counters.lastErrorNs
                    $0.counters.lastLatencyNs = latencyNs
                    $0.counters.ppm = ppm
                }
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
