/// How a listener's player fetches and plays, where the benchmarks compare another way with the
/// shipped one. The defaults are what ships; the command sets others from its environment (the
/// experimental `PARTYRADIO_*` variables of partyradio(1)).
public struct PlayerTuning: Sendable, Equatable {
    /// Whether a listener fetches its tracks ahead into the media cache (false: mpv streams each
    /// URL itself; scripts/bench-lossy.py, mode `stream`).
    public var mediaCache = true
    /// Whether a track still being fetched is played from what is there (false: the load waits
    /// for the whole file; scripts/bench-lossy.py, mode `whole`).
    public var playsPartialFiles = true
    /// Whether the mappings of the pages a start touched are dropped a while after the player
    /// plays each newly loaded track (``StartupPages``; scripts/bench-memory.py compares without).
    public var releasesStartupPages = true
    /// mpv options that add to or replace the player's own (scripts/bench-speaker.py).
    public var mpvOptions: [String: String] = [:]
    /// How often PulseAudio asks the player for audio, in milliseconds; 0 leaves it to the server
    /// (every 20 ms). See ``defaultPulseRequestMs``.
    public var pulseRequestMs = PlayerTuning.defaultPulseRequestMs
    /// How long one answered PulseAudio timing report serves mpv's delay queries, in
    /// milliseconds (0–1000); 0: a round trip to the sound server for each, as mpv does. See
    /// ``defaultPulseTimingReuseMs``.
    public var pulseTimingReuseMs = PlayerTuning.defaultPulseTimingReuseMs

    /// Each request costs mpv a round trip to the server with `pulse-latency-hacks` unless a
    /// timing report is reused. A request every 50 ms of mpv's 100 ms buffer, with reports reused
    /// for 100 ms, took a playing listener from 1.85–2.32 % of a core to 1.27–1.43 % in an
    /// alternated series under load, the speaker's p99 at most 0.2 ms in every run; a 100 ms
    /// request alone did not hold 1 ms under load (docs/BENCHMARKS.md, "The request size",
    /// "Timing reports").
    public static let defaultPulseRequestMs = 50
    /// A report read later is as right as a fresh one while the stream plays on (libpulse counts
    /// what is written since, and the server plays at its clock's rate, within tens of ppm:
    /// microseconds in 250 ms); a cork or a flush ends it. 250 ms rather than 100 saves about 10
    /// of a listener's 160 wake-ups a second; the speaker's p99 held under load
    /// (docs/BENCHMARKS.md, "Fewer wake-ups in mpv and of the node").
    public static let defaultPulseTimingReuseMs = 250
    /// What ``pulseTimingReuseMs`` may be.
    public static let pulseTimingReuseRangeMs = 0...1000

    public init() {}
}
