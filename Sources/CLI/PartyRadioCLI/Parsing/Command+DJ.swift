import PartyRadioCore

extension Command {
    /// `partyradio dj --name NAME [options]`
    public struct DJOptions: Equatable, Sendable {
        /// `--name NAME`, validated (required).
        public var name: StationName
        /// `--library DIR`, repeatable; none: a generated demo library (unless catalog tracks are queued).
        public var libraries: [String] = []
        /// `--search TERM`: queue catalog results (all playable ones, or those `--pick`ed).
        public var search: String?
        /// `--pick N`: 1-based result numbers of `--search` to queue.
        public var picks: [Int] = []
        /// `--add ID`: catalog track IDs to queue.
        public var adds: [String] = []
        /// `--country CC` for the catalog; nil: from the locale.
        public var country: String?
        /// `--no-explicit`: no explicit catalog tracks.
        public var noExplicit = false
        /// `--json-events`: one JSON object per line instead of the live view.
        public var jsonEvents = false
        /// `--port N` for listeners; 0: any free port.
        public var port: UInt16 = 0
        /// `--crowd-skip PERCENT`: the share of the room whose down votes skip a track; 0: off.
        public var crowdSkipPercent = 50
        /// `--requests open|approve|off`: how guests' requests are taken.
        public var requestMode = RequestMode.open
        /// `--max-requests N`: requests one guest may have waiting at once.
        public var maxRequestsPerGuest = 3
        /// `--voters-per-address N`: voter keys counted per machine (one guest, one vote).
        public var votersPerAddress = 1
        /// `--vote-weight-after SECONDS`: a machine's votes weigh toward crowd skip once it has been
        /// present (listening, or its page open) this long; 0: at once.
        public var voteWeightAfterSeconds = Int(DJMachine.defaultVoteWeightAfterNs / Nanos.perSecond)
        /// `--fresh`: start over, without the station saved in the state directory.
        public var fresh = false
        /// `--private`: a private station (a join code; everything sealed under keys from it).
        public var isPrivate = false
        /// `--new-code`: with `--private`, replace the kept join code.
        public var newCode = false
        /// `--live [SOURCE]`: a live station broadcasting the sound server (the default), a pipe or
        /// stdin (docs/LIVE.md).
        public var live: LiveSource?
        /// `--live-default-output`: the station's sink is the default sink while it runs.
        public var liveDefaultOutput = false
        /// `--live-frame-ms MS`: 2.5, 5, 10 or 20.
        public var liveFrame = LiveFrameDuration.ms10
        /// `--live-bitrate KBIT`: Opus's bitrate in kbit/s, 6-510.
        public var liveBitrateKbit = 128
        /// `--live-repairs on-loss|always`: when the FEC repairs go out (docs/LIVE.md).
        public var liveRepairs = LiveSender.Protection.onLoss
        /// `--latency MS`: a live station's delay, from a sample taken in to it heard on every speaker.
        public var latencyMs = Int(PartyRadioCore.LiveFrame.defaultDelayMs)
        /// `--live-player NAME|none`: the MPRIS player whose track is now playing (default: whichever plays).
        public var livePlayer = LivePlayerChoice.playing
        /// Audio, trace and clock-testing options.
        public var playback = PlaybackFlags()
        /// `--interface`.
        public var network = NetworkOptions()
        /// `--state-dir`, `-v`.
        public var common = CommonOptions()
    }

    /// What `dj --latency` takes, in ms: below 20 no block of frames, the network and an output
    /// fit; beyond 2 s the jitter buffer no longer holds the frames.
    public static let latencyRangeMs = 20...2000

    static func parseDJ(_ arguments: [String]) throws(UsageError) -> DJOptions {
        var scanner = ArgumentScanner(arguments, command: "dj")
        var name: String?
        var options = DJOptions(name: try! StationName(validating: "x"))
        var liveTuned = false
        var livePlayerGiven = false
        while let option = scanner.nextOption() {
            if try options.common.consume(option, from: &scanner) { continue }
            if try options.network.consume(option, from: &scanner) { continue }
            if try options.playback.consume(option, from: &scanner) { continue }
            switch option {
            case "--name", "-n": name = try scanner.value(for: option)
            case "--library", "-l": options.libraries.append(try scanner.value(for: option))
            case "--search": options.search = try scanner.value(for: option)
            case "--pick": options.picks += try picks(for: option, from: &scanner)
            case "--add": options.adds += try scanner.value(for: option).split(separator: ",").map(String.init)
            case "--country": options.country = try scanner.country(for: option)
            case "--no-explicit": options.noExplicit = true
            case "--json-events": options.jsonEvents = true
            case "--port": options.port = try scanner.integer(for: option, in: 0...65535)
            case "--crowd-skip": options.crowdSkipPercent = try scanner.integer(for: option, in: 0...100)
            case "--requests":
                let raw = try scanner.value(for: option)
                guard let mode = RequestMode(rawValue: raw.lowercased()) else {
                    throw UsageError("'--requests' takes open, approve or off; got '\(raw)'.", command: "dj")
                }
                options.requestMode = mode
            case "--max-requests": options.maxRequestsPerGuest = try scanner.integer(for: option, in: 1...100)
            case "--voters-per-address": options.votersPerAddress = try scanner.integer(for: option, in: 1...1000)
            case "--vote-weight-after":
                options.voteWeightAfterSeconds = try scanner.integer(for: option, in: 0...3600)
            case "--fresh": options.fresh = true
            case "--private": options.isPrivate = true
            case "--new-code": options.newCode = true
            case "--live":
                guard let raw = scanner.optionalValue(for: option) else {
                    options.live = .defaultSource
                    continue
                }
                do throws(LiveSource.Invalid) { options.live = try LiveSource.parse(raw) } catch {
                    throw UsageError(error.description, command: "dj")
                }
            case "--live-default-output":
                options.liveDefaultOutput = true
            case "--live-frame-ms":
                let raw = try scanner.value(for: option)
                guard let ms = Double(raw), let frame = LiveFrameDuration(milliseconds: ms) else {
                    throw UsageError("'--live-frame-ms' takes 2.5, 5, 10 or 20; got '\(raw)'.", command: "dj")
                }
                options.liveFrame = frame
                liveTuned = true
            case "--live-bitrate":
                options.liveBitrateKbit = try scanner.integer(for: option, in: 6...510)
                liveTuned = true
            case "--live-repairs":
                let raw = try scanner.value(for: option)
                switch raw {
                case "on-loss": options.liveRepairs = .onLoss
                case "always": options.liveRepairs = .always
                default:
                    throw UsageError("'--live-repairs' takes on-loss or always; got '\(raw)'.", command: "dj")
                }
                liveTuned = true
            case "--latency":
                options.latencyMs = try scanner.integer(for: option, in: Self.latencyRangeMs)
                liveTuned = true
            case "--live-player":
                let raw = try scanner.value(for: option)
                guard let choice = LivePlayerChoice(argument: raw) else {
                    throw UsageError(
                        "'--live-player' takes a player's MPRIS name (mpv, spotify, vlc: as 'playerctl -l' lists "
                            + "them) or none; got '\(raw)'.", command: "dj")
                }
                options.livePlayer = choice
                livePlayerGiven = true
            default: throw scanner.unknown(option)
            }
        }
        try noPositionals(scanner)
        guard let name else { throw UsageError("A station needs a name: pass --name \"My Party\".", command: "dj") }
        if options.network.code != nil {
            throw UsageError(
                "The DJ makes its own join code: pass --private (and --new-code for a new one).", command: "dj")
        }
        if options.network.domain == nil && (options.network.dnsKey != nil || options.network.dnsServer != nil) {
            throw UsageError("'--dns-key' and '--dns-server' are for a DNS domain; add --domain NAME.", command: "dj")
        }
        if options.newCode && !options.isPrivate {
            throw UsageError("'--new-code' makes a new join code for a private station; add --private.", command: "dj")
        }
        if !options.picks.isEmpty && options.search == nil {
            throw UsageError("'--pick' chooses among '--search' results; add --search TERM.", command: "dj")
        }
        if liveTuned && options.live == nil {
            throw UsageError(
                "'--live-frame-ms', '--live-bitrate', '--live-repairs' and '--latency' tune a live station; add --live "
                    + "(or --live pipe:PATH).",
                command: "dj")
        }
        if livePlayerGiven && options.live == nil {
            throw UsageError(
                "'--live-player' chooses the player whose track a live station shows; add --live.", command: "dj")
        }
        if options.liveDefaultOutput && options.live != .stationSink {
            throw UsageError(
                "'--live-default-output' makes the station's own sink the default; use it with --live or --live pulse.",
                command: "dj")
        }
        if options.live != nil && (!options.libraries.isEmpty || options.search != nil || !options.adds.isEmpty) {
            throw UsageError(
                "A live station broadcasts its --live source, not a queue: drop --library, --search and --add.",
                command: "dj")
        }
        if let bad = options.adds.first(where: { $0.isEmpty || !$0.allSatisfy(\.isNumber) }) {
            throw UsageError("'--add' takes numeric catalog track IDs; got '\(bad)'.", command: "dj")
        }
        do { options.name = try StationName(validating: name) } catch {
            switch error {
            case .empty: throw UsageError("The station name is empty; give 1 to 60 characters.", command: "dj")
            case .tooLong(let count):
                throw UsageError("The station name has \(count) characters; use at most 60.", command: "dj")
            case .tooManyBytes(let bytes, let limit):
                throw UsageError(
                    "The station name takes \(bytes) bytes of UTF-8; DNS-SD allows \(limit) "
                        + "(accented letters take 2 bytes, emoji 4): shorten it.", command: "dj")
            case .controlCharacters:
                throw UsageError(
                    "The station name contains control or invisible characters (or a letter with more than 3 accents); use plain text.",
                    command: "dj")
            }
        }
        return options
    }

    /// `--pick 3` or `--pick 1,4`: result numbers from 1 to 200.
    private static func picks(for option: String, from scanner: inout ArgumentScanner) throws(UsageError) -> [Int] {
        let raw = try scanner.value(for: option)
        let numbers = raw.split(separator: ",").compactMap { Int($0) }.filter { (1...200).contains($0) }
        guard !numbers.isEmpty, numbers.count == raw.split(separator: ",").count else {
            throw UsageError(
                "'\(option)' takes result numbers from 1 to 200, e.g. 2 or 1,3; got '\(raw)'.",
                command: scanner.command)
        }
        return numbers
    }
}
