import CPulseShim

/// A connection to the sound server (PulseAudio, or PipeWire's pulse server) for the DJ's capture
/// (docs/LIVE.md, "Sources"): the station's sink made and unloaded, the default sink, the sources there
/// are, and one record stream whose latency says when each frame was captured.
///
/// Every call runs libpulse's asynchronous API to its end on the calling thread (the shim's own main
/// loop), so no callback reaches Swift. One thread at a time: the DJ opens it, then hands it to the
/// capture thread, which alone uses it after.
public final class PulseSession: @unchecked Sendable {
    private let session: OpaquePointer

    /// What to say when no sound server answers: what to start, or how to do without.
    public static let noServerFix =
        "start PulseAudio ('pulseaudio --start') or PipeWire with its pulse server ('systemctl --user start "
        + "pipewire-pulse'), check PULSE_SERVER, or broadcast a pipe instead (--live pipe:PATH)"

    /// Connects to `server` (nil: $PULSE_SERVER or the session's own); never starts one.
    public init(server: String? = nil, application: String = "partyradio") throws(PulseError) {
        guard prpulse_load() == 0 else { throw PulseError(String(cString: prpulse_load_error())) }
        var code: Int32 = 0
        guard let opened = prpulse_session_open(server, application, &code) else {
            let at = server.map { " at \($0)" } ?? ""
            if code == PulseError.accessDenied { throw PulseError.refused(server: server) }
            throw PulseError(
                "No sound server answers\(at) (\(String(cString: prpulse_strerror(code))))", fix: Self.noServerFix)
        }
        session = opened
    }

    deinit { prpulse_session_close(session) }

    /// The server's default sink; nil when it has none.
    public func defaultSink() throws(PulseError) -> String? {
        var name = [CChar](repeating: 0, count: 512)
        var code: Int32 = 0
        guard prpulse_default_sink(session, &name, name.count, &code) == 0 else {
            throw .call("pa_context_get_server_info", code)
        }
        let text = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.isEmpty ? nil : text
    }

    /// Makes `name` the default sink (where applications play unless told otherwise).
    public func setDefaultSink(_ name: String) throws(PulseError) {
        var code: Int32 = 0
        guard prpulse_set_default_sink(session, name, &code) == 0 else {
            throw .call("pa_context_set_default_sink", code)
        }
    }

    /// The index of the module that owns sink `name`; nil when there is no such sink.
    public func sinkOwner(named name: String) throws(PulseError) -> UInt32? {
        try sink(named: name, property: nil)?.owner
    }

    /// The module that owns sink `name` and the sink's `property` (nil when it has none); nil when
    /// there is no such sink.
    public func sink(named name: String, property: String?) throws(PulseError) -> (owner: UInt32, value: String?)? {
        var owner: UInt32 = 0
        var code: Int32 = 0
        var value = [CChar](repeating: 0, count: 512)
        switch prpulse_find_sink(session, name, &owner, property, &value, value.count, &code) {
        case 1:
            let text = String(decoding: value.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return (owner, text.isEmpty ? nil : text)
        case 0: return nil
        default:
            // An unknown name is an error of its own (PA_ERR_NOENTITY, 5) rather than an empty answer.
            if code == 5 { return nil }
            throw .call("pa_context_get_sink_info_by_name", code)
        }
    }

    /// Loads a module (`argument` as `pactl load-module` takes it); its index.
    public func loadModule(_ name: String, argument: String) throws(PulseError) -> UInt32 {
        var index: UInt32 = 0
        var code: Int32 = 0
        guard prpulse_load_module(session, name, argument, &index, &code) == 0 else {
            throw .call("pa_context_load_module(\(name))", code)
        }
        return index
    }

    /// Unloads a module.
    public func unloadModule(_ index: UInt32) throws(PulseError) {
        var code: Int32 = 0
        guard prpulse_unload_module(session, index, &code) == 0 else { throw .call("pa_context_unload_module", code) }
    }

    /// The names of the server's sources (inputs and every sink's `.monitor`).
    public func sourceNames() throws(PulseError) -> [String] {
        var names = [CChar](repeating: 0, count: 16_384)
        var code: Int32 = 0
        guard prpulse_source_names(session, &names, names.count, &code) >= 0 else {
            throw .call("pa_context_get_source_info_list", code)
        }
        let text = String(decoding: names.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.split(separator: "\n").map(String.init)
    }

    /// How long ``openRecord(source:fragmentBytes:streamName:timeoutMs:)`` waits for the stream by default:
    /// PulseAudio makes it at once, PipeWire's pulse server once its session manager linked it (well
    /// under a second), and without one never (libpulse would wait 30 s).
    public static let recordTimeoutMs: Int32 = 5_000

    /// Opens the record stream: interleaved 16-bit stereo at 48 kHz from `source`, sent in fragments of
    /// `fragmentBytes` (a frame), the server converting whatever the source's own format is; waits at
    /// most `timeoutMs` for the server to make it.
    public func openRecord(
        source: String, fragmentBytes: Int, streamName: String = "live station",
        timeoutMs: Int32 = PulseSession.recordTimeoutMs
    ) throws(PulseError) {
        var code: Int32 = 0
        guard prpulse_record_open(session, source, streamName, UInt32(clamping: fragmentBytes), timeoutMs, &code) == 0
        else {
            // PA_ERR_TIMEOUT: the server never said the stream was ready, which is what PipeWire's pulse
            // server does when no session manager runs to connect it to its source.
            if code == 8 {
                throw PulseError(
                    "the sound server did not start the record stream of \(source) within "
                        + (timeoutMs % 1000 == 0 ? "\(timeoutMs / 1000) s" : "\(timeoutMs) ms"),
                    fix: "under PipeWire, start its session manager, which connects the streams ('systemctl --user "
                        + "start wireplumber'); check the server with 'pactl info'")
            }
            throw PulseError(
                "cannot record from \(source): \(String(cString: prpulse_strerror(code))).")
        }
    }

    /// Copies what was recorded into `buffer` from `offset` (at most to its end), waiting at most
    /// `timeoutMs` when nothing is there; how many bytes (0: nothing came).
    public func read(into buffer: inout [UInt8], from offset: Int, timeoutMs: Int32) throws(PulseError) -> Int {
        var code: Int32 = 0
        let count = buffer.withUnsafeMutableBytes { raw in
            prpulse_record_read(session, raw.baseAddress! + offset, raw.count - offset, timeoutMs, &code)
        }
        guard count >= 0 else { throw .call("pa_stream_peek", code) }
        return Int(count)
    }

    /// How long ago the next sample to be read was captured (negative: a monitor whose sink has not
    /// played it yet); nil until the server's first timing report.
    public func recordLatencyNs() -> Int64? {
        var latency: Int64 = 0
        var code: Int32 = 0
        guard prpulse_record_latency(session, &latency, &code) == 0 else { return nil }
        return latency * 1000
    }

    /// Closes the record stream.
    public func closeRecord() { prpulse_record_close(session) }
}
