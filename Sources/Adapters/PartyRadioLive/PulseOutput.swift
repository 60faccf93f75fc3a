import CPulseShim

/// A libpulse call that failed: what was asked and libpulse's sentence, with the fix where there is one.
public struct PulseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What failed, without the fix.
    public let what: String
    /// What to do about it, when there is something to say.
    public let fix: String?

    public init(_ description: String, fix: String? = nil) {
        what = description
        self.fix = fix
    }

    /// What failed and what to do.
    public var description: String { fix.map { "\(what): \($0)." } ?? what }

    static func call(_ call: String, _ code: Int32) -> PulseError {
        let sentence = String(cString: prpulse_strerror(code))
        return PulseError("\(call) failed: \(sentence) (\(code))")
    }

    /// libpulse's `PA_ERR_ACCESS`: the server answered and would not let this user in.
    static let accessDenied: Int32 = 1

    /// The server (`server`, nil for libpulse's own choice: $PULSE_SERVER or the session's) refused
    /// this user: a system-wide PulseAudio lets in only its group, and checks it as the primary group
    /// or /etc/group's list of members, so a unit's supplementary group is not enough (docs/LIVE.md,
    /// "A sound server for the services").
    static func refused(server: String?) -> PulseError {
        PulseError(
            "The sound server\(server.map { " at \($0)" } ?? "") refused this user (access denied)",
            fix: "a system-wide PulseAudio lets in the group pulse-access as the primary group (a service "
                + "needs Group=pulse-access in a drop-in; SupplementaryGroups= is not enough) or a user "
                + "named in /etc/group; a user's own server, the user whose cookie (~/.config/pulse/cookie) it has")
    }
}

/// A live station's sound: a PulseAudio playback stream (PipeWire's pulse server the same) of
/// interleaved 16-bit stereo at 48 kHz, written from one audio thread, that says how long a
/// sample written now takes to be heard (docs/LIVE.md, "The listener's output").
///
/// Writes block until the stream's buffer has room: the writer is paced by the sound card, and
/// what it writes next is heard ``latencyNs()`` after the call. One thread at a time.
public final class PulseOutput {
    /// 48 kHz stereo: samples per channel in a second.
    public static let rate = 48_000
    public static let channels = 2

    private let stream: OpaquePointer

    /// Opens the stream.
    /// - Parameters:
    ///   - server: the sound server (`unix:/path`); nil for the default ($PULSE_SERVER, the session's).
    ///   - sink: the sink to play on; nil for the default.
    ///   - bufferNs: how much the stream holds ahead of the sink (its `tlength`): the part of the
    ///     output's latency that is ours.
    ///   - requestNs: how often the server asks for more (`minreq`).
    ///   - startNs: how much the stream holds before it plays, at first and again after it ran dry
    ///     (`prebuf`); nil for libpulse's default, the whole buffer. A writer that keeps the stream
    ///     below its buffer needs it smaller, or the stream never plays again after running dry.
    public init(
        server: String? = nil, sink: String? = nil, streamName: String = "live station",
        bufferNs: Int64 = 20_000_000, requestNs: Int64 = 5_000_000, startNs: Int64? = nil
    ) throws(PulseError) {
        guard prpulse_load() == 0 else { throw PulseError(String(cString: prpulse_load_error())) }
        var code: Int32 = 0
        let opened = prpulse_open(
            server, "partyradio", sink, streamName, UInt32(clamping: bufferNs / 1000),
            UInt32(clamping: requestNs / 1000), UInt32(clamping: max((startNs ?? 0) / 1000, 0)), &code)
        guard let opened else {
            let at = server.map { " at \($0)" } ?? ""
            if code == PulseError.accessDenied { throw PulseError.refused(server: server) }
            // PA_ERR_TIMEOUT: the server never started the stream (5 s), as PipeWire's pulse server does
            // when no session manager runs to link it to its sink.
            if code == 8 {
                throw PulseError(
                    "the sound server\(at) did not start the playback stream within 5 s",
                    fix: "under PipeWire, start its session manager, which connects the streams ('systemctl --user "
                        + "start wireplumber'); check the server with 'pactl info'")
            }
            throw PulseError(
                "cannot open a PulseAudio playback stream\(at): \(String(cString: prpulse_strerror(code))). "
                    + "Is a sound server running (PulseAudio, or PipeWire with pipewire-pulse)?")
        }
        stream = opened
    }

    deinit { prpulse_close(stream) }

    /// Writes interleaved stereo samples, blocking until the stream took them all.
    public func write(_ samples: [Int16]) throws(PulseError) { try write(samples[...]) }

    /// Writes interleaved stereo samples from a slice (the live player's aligned writes), uncopied.
    public func write(_ samples: ArraySlice<Int16>) throws(PulseError) {
        guard !samples.isEmpty else { return }
        var code: Int32 = 0
        let result = samples.withUnsafeBytes { prpulse_write(stream, $0.baseAddress, $0.count, &code) }
        guard result == 0 else { throw .call("pa_stream_write", code) }
    }

    /// Waits `ns`, taking in what the server sends meanwhile (its requests for more, its timing
    /// reports): the connection is driven by whoever calls, never by a thread of libpulse's.
    public func wait(ns: Int64) throws(PulseError) {
        var code: Int32 = 0
        guard prpulse_sleep(stream, UInt32(clamping: max(ns, 0) / 1000), &code) == 0 else {
            throw .call("pa_mainloop_poll", code)
        }
    }

    /// How long until a sample written now is heard: what the stream holds plus the sink's own
    /// latency, interpolated by libpulse between the server's timing reports.
    public func latencyNs() throws(PulseError) -> Int64 {
        var code: Int32 = 0
        var latency: UInt64 = 0
        guard prpulse_latency(stream, &latency, &code) == 0 else { throw .call("pa_stream_get_latency", code) }
        return Int64(clamping: latency) * 1000
    }
}
