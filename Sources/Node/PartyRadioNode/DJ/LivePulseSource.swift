import Glibc
import PartyRadioCore
import PartyRadioLive
import Synchronization

/// The sound server's side of a live capture (docs/LIVE.md, "Sources"): `--live pulse` makes a null
/// sink named after the station that any application plays into and records its monitor; `pulse:NAME`
/// records a source that exists. Opened before the station goes on air, so that every failure is a
/// clear error first; closed (the sink unloaded, the default sink given back) when the DJ quits.
final class LivePulseSource: Sendable {
    let session: PulseSession
    /// The source recorded: the station's sink's `.monitor`, or the one named.
    let recorded: String
    /// The station's sink, when it is ours: its name and its module, unloaded at the end.
    let sink: (name: String, module: UInt32)?
    /// With `--live-default-output`: the default sink before ours took its place.
    let previousDefault: String?
    /// What to tell the user once on air (a stale sink taken over), if anything.
    let notice: String?
    /// Where the DJ's own speakers play the station (docs/LIVE.md, "The DJ's own speakers"): the
    /// sink that was the default before ours, named so that the station never plays into its own
    /// sink (a loop) whatever becomes the default later. nil: they do not play — `pulse:NAME`, whose
    /// sound is already heard where it plays, or no sink but ours to play to.
    let speakersSink: String?
    /// Whether ``close()`` ran: once, from the capture thread's end or, when the DJ never went on
    /// air, from deinit.
    private let closed = Atomic<Bool>(false)

    /// Connects, makes (or takes over) the station's sink or finds the source, makes the sink the
    /// default when asked, and opens the record stream of `frameBytes` fragments.
    init(source: LiveSource, station: String, defaultOutput: Bool, frameBytes: Int) throws(NodeError) {
        let session = try Self.connect()
        var notice: String?
        var sink: (name: String, module: UInt32)?
        var previousDefault: String?
        var recorded = ""
        var speakersSink: String?
        do throws(PulseError) {
            switch source {
            case .pulseSource(let name):
                try Self.requireSource(name, in: session)
                recorded = name
            case .stationSink, .pipe, .standardInput:
                let name = LiveSource.pulseSinkName(station: station)
                let current = try session.defaultSink()
                var recordedDefault: String?
                if let stale = try session.sink(named: name, property: Self.speakersProperty) {
                    // A DJ killed before it could unload its sink left it: take it over (players still
                    // pointed at it keep playing into the station) rather than make `NAME.2` beside it.
                    sink = (name, stale.owner)
                    recordedDefault = stale.value
                    notice = "Took over the sound server's sink \(name), left by an earlier run of this station."
                } else {
                    // The sink keeps the default it was made beside, for a run after a kill -9 to give back.
                    let description = LiveSource.pulseSinkDescription(station: station)
                    let speakers = current.flatMap { Self.isPlainSinkName($0) && $0 != name ? $0 : nil }
                    let module = try session.loadModule(
                        "module-null-sink",
                        argument: "sink_name=\(name) rate=48000 channels=2 "
                            + "sink_properties='device.description=\"\(description)\""
                            + (speakers.map { " \(Self.speakersProperty)=\($0)" } ?? "") + "'")
                    sink = (name, module)
                }
                recorded = "\(name).monitor"
                if current == name {
                    // A run killed with --live-default-output left our sink the default: the one it took
                    // the place of is the user's output (if it is still there), and the default again
                    // unless this run takes the place itself.
                    var left: String?
                    if let recordedDefault, try session.sinkOwner(named: recordedDefault) != nil {
                        left = recordedDefault
                    }
                    speakersSink = left
                    if let left, !defaultOutput {
                        try session.setDefaultSink(left)
                        notice = (notice ?? "") + " Gave the default output back to \(left)."
                    }
                } else {
                    speakersSink = current
                }
                if defaultOutput {
                    previousDefault = speakersSink
                    try session.setDefaultSink(name)
                }
            }
            try session.openRecord(source: recorded, fragmentBytes: frameBytes)
        } catch {
            if let previousDefault { try? session.setDefaultSink(previousDefault) }
            if let sink { try? session.unloadModule(sink.module) }
            throw NodeError(.player, "Cannot capture the live source \(source): \(error.description)", cause: error)
        }
        self.session = session
        self.recorded = recorded
        self.sink = sink
        self.previousDefault = previousDefault
        self.notice = notice
        self.speakersSink = speakersSink
    }

    /// The station's sink's property naming the default sink it was made beside.
    static let speakersProperty = "partyradio.speakers"

    /// A sink name that can go into a module argument unquoted (what PulseAudio and PipeWire name
    /// devices: letters, digits, `._:-`).
    static func isPlainSinkName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 400
            && name.utf8.allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
                    || "._:-".utf8.contains($0)
            }
    }

    /// Closes the stream, gives the default sink back (when ours still is it) and unloads our sink.
    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        session.closeRecord()
        if let sink {
            if let previousDefault, (try? session.defaultSink()) == sink.name {
                try? session.setDefaultSink(previousDefault)
            }
            try? session.unloadModule(sink.module)
        }
    }

    deinit { close() }

    static func connect() throws(NodeError) -> PulseSession {
        do throws(PulseError) { return try PulseSession() } catch {
            throw NodeError(.player, "Cannot capture live audio: \(error.description)", cause: error)
        }
    }

    /// Fails with the list of sources there are when `name` is not one of them.
    static func requireSource(_ name: String, in session: PulseSession) throws(PulseError) {
        let names = try session.sourceNames()
        guard !names.contains(name) else { return }
        let list = names.isEmpty ? "it has none" : "it has " + names.joined(separator: ", ")
        throw PulseError(
            "the sound server has no source named \(name) (\(list))",
            fix: "pass one of those as --live pulse:NAME, or --live pulse for a sink of the station's own")
    }
}

/// `doctor --live [SOURCE]`: whether a live source can be opened, and what to fix when it cannot.
public enum LiveSourceProbe {
    /// Nil when `source` can be captured now; else what is wrong and what to do.
    public static func problem(with source: LiveSource) -> (detail: String, fix: String)? {
        switch source {
        case .standardInput: return nil
        case .pipe(let path, _):
            var status = stat()
            guard stat(path, &status) == 0 else {
                return (
                    "The live pipe \(path) does not exist (\(String(cString: strerror(errno))))",
                    "Make it with 'mkfifo \(path)' and point the player's pipe output at it."
                )
            }
            guard access(path, R_OK) == 0 else {
                return (
                    "Cannot read the live pipe \(path): \(String(cString: strerror(errno)))",
                    "Give this user read access to it (chmod g+r, chgrp audio) or run as its owner."
                )
            }
            return nil
        case .stationSink, .pulseSource:
            let session: PulseSession
            do { session = try PulseSession() } catch { return (error.what, sentence(error.fix)) }
            do throws(PulseError) {
                var recorded: String?
                if case .pulseSource(let name) = source {
                    try LivePulseSource.requireSource(name, in: session)
                    recorded = name
                } else if let sink = try session.defaultSink(), !sink.isEmpty {
                    // The station's own sink is made when the DJ starts; its monitor is recorded the
                    // way the default output's is.
                    recorded = sink + ".monitor"
                } else {
                    recorded = try session.sourceNames().first
                }
                // A server can answer and still never start a stream: PipeWire's pulse server
                // without its session manager. Open a record stream for real, then close it.
                if let recorded {
                    try session.openRecord(
                        source: recorded, fragmentBytes: 1_920, streamName: "partyradio doctor",
                        timeoutMs: probeTimeoutMs)
                    session.closeRecord()
                }
                return nil
            } catch {
                return (error.what, sentence(error.fix))
            }
        }
    }

    /// How long `doctor` waits for the server to start a stream: PulseAudio starts one at once,
    /// PipeWire's pulse server well under a second after asked when its session manager runs.
    static let probeTimeoutMs: Int32 = 3_000

    /// What stops a live station's output here, or none.
    public struct OutputProblem: Error, Sendable {
        public var detail: String
        public var fix: String
    }

    /// The output a listener or speaker plays a live station into (it plays through the sound
    /// server, which must answer and have a default output): its name, else what is wrong and the fix.
    public static func output() -> Result<String, OutputProblem> {
        let session: PulseSession
        do { session = try PulseSession() } catch {
            return .failure(OutputProblem(detail: error.what, fix: sentence(error.fix)))
        }
        do throws(PulseError) {
            guard let sink = try session.defaultSink(), !sink.isEmpty else {
                return .failure(
                    OutputProblem(
                        detail: "The sound server answers but has no output to play into",
                        fix: "Connect speakers or headphones, or load an output (pactl list short sinks)."))
            }
            // As for recording: a server that never starts a playback stream is no output. (Opened
            // and closed with nothing written: nothing is heard.)
            _ = try PulseOutput(sink: sink, streamName: "partyradio doctor")
            return .success(sink)
        } catch {
            return .failure(OutputProblem(detail: error.what, fix: sentence(error.fix)))
        }
    }

    private static func sentence(_ fix: String?) -> String {
        guard let fix, let first = fix.first else { return "Check the sound server (pactl info)." }
        return first.uppercased() + fix.dropFirst() + "."
    }
}
