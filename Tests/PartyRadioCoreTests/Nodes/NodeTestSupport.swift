import NodeTestSupport
import PartyRadioCore

// Support for the node machine tests: a stand-in signature, peers that sign datagrams, a
// station fixture, and ways to pick effects apart (Effect and NodeEvent are not Equatable).

/// Signs with one key while the header names another: what a forger without the key can do.
struct ForgingSigner: Signer {
    let publicKey: PublicKey
    let realKey: PublicKey
    func sign(_ bytes: [UInt8]) -> [UInt8] { ChecksumSigner.signature(bytes, by: realKey) }
}

func testKey(_ seed: UInt8) -> PublicKey { PublicKey(bytes: [UInt8](repeating: seed, count: 32))! }

/// Someone on the network: an address, a key, and the next sequence number.
struct Peer {
    let address: PeerAddress
    let signer: ChecksumSigner
    var sequence: UInt64 = 1000

    init(_ host: String, port: UInt16 = 40_100, key seed: UInt8) {
        address = PeerAddress(host: host, port: port)
        signer = ChecksumSigner(publicKey: testKey(seed))
    }

    init(address: PeerAddress, publicKey: PublicKey) {
        self.address = address
        signer = ChecksumSigner(publicKey: publicKey)
    }

    var publicKey: PublicKey { signer.publicKey }

    /// The signed bytes of `message` for `station`, with this peer's next sequence number.
    mutating func bytes(_ message: Message, station: StationID, cookie: UInt64? = nil) -> [UInt8] {
        sequence += 1
        return try! Datagram.encode(message, stationID: station, sequence: sequence, signer: signer, cookie: cookie)
    }

    /// The input a machine gets when `message` arrives from this peer.
    mutating func send(_ message: Message, station: StationID, cookie: UInt64? = nil) -> NodeInput {
        .datagram(bytes(message, station: station, cookie: cookie), from: address)
    }
}

/// Instants: the tests' clocks start at an arbitrary positive reading.
let t0 = LocalTime(ns: 1_000_000_000_000)
func at(ms: Int64) -> LocalTime { t0 + Nanos.ms(ms) }

/// One station as DJ and listeners see it.
enum Fixture {
    static let stationID = StationID(rawValue: 0x1234_5678_9ABC_DEF0)
    static let otherStationID = StationID(rawValue: 0x0FED_CBA9_8765_4321)
    static let djKeySeed: UInt8 = 0xD1
    static let advert = StationAdvert(
        stationID: stationID, group: stationID.multicastGroup, publicKey: testKey(djKeySeed))
    static let group = advert.group
    static let djAddress = PeerAddress(host: "10.0.0.1", port: 40_000)
    static let serviceName = "Rooftop"

    static let tracks = [
        Track(id: "t0", title: "First", artist: "A", album: "", durationMs: 10_000, source: "http://10.0.0.1/0"),
        Track(id: "t1", title: "Second", artist: "B", album: "", durationMs: 20_000, source: "http://10.0.0.1/1"),
        Track(id: "t2", title: "Third", artist: "C", album: "", durationMs: 30_000, source: "http://10.0.0.1/2"),
    ]

    static func djConfiguration(queue: [Track] = tracks, playsAudio: Bool = true) -> DJMachine.Configuration {
        DJMachine.Configuration(
            name: "Rooftop", advert: advert, queue: queue, port: djAddress.port, interfaceName: "eth0",
            address: djAddress.host, playsAudio: playsAudio)
    }

    /// A DJ on ``djConfiguration(queue:playsAudio:)``, started at `t0`.
    static func startedDJ(queue: [Track] = tracks, playsAudio: Bool = true) -> DJMachine {
        var dj = DJMachine(
            configuration: djConfiguration(queue: queue, playsAudio: playsAudio), verifier: ChecksumVerifier(), now: t0)
        _ = dj.handle(.start, at: t0)
        return dj
    }

    /// The DJ as a peer (its datagrams, signed with the station key).
    static var djPeer: Peer { Peer(djAddress.host, port: djAddress.port, key: djKeySeed) }

    static func resolved(
        name: String = serviceName, advert: StationAdvert = advert, address: PeerAddress = djAddress
    ) -> NodeInput {
        .discovery(.resolved(name: name, address: address.host, port: address.port, txt: advert.txtRecord))
    }

    /// A snapshot as the DJ sends it: `track` playing from `positionNs` at DJ instant `dj`.
    static func snapshot(
        name: String = "Rooftop", track: Track? = tracks[0], dj: DJTime, positionNs: Int64 = 0, paused: Bool = false,
        tally: Tally = Tally(), listeners: UInt32 = 0
    ) -> StateSnapshot {
        StateSnapshot(
            stationName: name, nowPlaying: track,
            anchor: paused ? .paused(at: positionNs, djTime: dj) : .playing(at: positionNs, djTime: dj),
            tally: tally, listenerCount: listeners, queueLength: UInt32(tracks.count), queueIndex: 0, sentAtNs: dj.ns)
    }
}

/// A second station, for the tests that need two.
enum OtherStation {
    static let keySeed: UInt8 = 0xD2
    static let advert = StationAdvert(
        stationID: Fixture.otherStationID, group: Fixture.otherStationID.multicastGroup, publicKey: testKey(keySeed))
    static let address = PeerAddress(host: "10.0.0.2", port: 40_000)
    static var peer: Peer { Peer(address.host, port: address.port, key: keySeed) }
    static var resolved: NodeInput { Fixture.resolved(name: "Basement", advert: advert, address: address) }
}

// MARK: Picking effects apart

struct Sent {
    var message: Message
    var to: Destination
    var station: StationID
}

extension Array where Element == Effect {
    var sent: [Sent] {
        compactMap {
            if case .send(let message, let to, let station) = $0 {
                Sent(message: message, to: to, station: station)
            } else {
                nil
            }
        }
    }

    var reports: [NodeEvent] { compactMap { if case .report(let event) = $0 { event } else { nil } } }

    var records: [PlayRecord] { compactMap { if case .record(let play) = $0 { play } else { nil } } }

    var player: [PlayerCommand] { compactMap { if case .player(let command) = $0 { command } else { nil } } }

    var follows: [StationClockView] { compactMap { if case .follow(let view) = $0 { view } else { nil } } }

    var catalog: [CatalogRequest] { compactMap { if case .catalog(let request) = $0 { request } else { nil } } }

    var joinedGroups: [MulticastGroup] { compactMap { if case .joinGroup(let group) = $0 { group } else { nil } } }

    var browses: Int { filter { if case .browse = $0 { true } else { false } }.count }

    var publishes: [(name: String, port: UInt16, txt: [String])] {
        compactMap { if case .publish(let name, let port, let txt) = $0 { (name, port, txt) } else { nil } }
    }

    /// The report tags in order, e.g. ["stationStarted", "state"].
    var reportTags: [String] { reports.map(\.tag) }

    /// Only the messages of sends, in order.
    var messages: [Message] { sent.map(\.message) }

    /// The snapshots sent to `destination`.
    func snapshots(to destination: Destination) -> [StateSnapshot] {
        sent.compactMap { if case .stateSnapshot(let s) = $0.message, $0.to == destination { s } else { nil } }
    }

    /// The `.state` reports' changes, in order.
    var stateChanges: [NodeEvent.StateChange] {
        reports.compactMap { if case .state(_, _, let change) = $0 { change } else { nil } }
    }

    /// The warnings reported.
    var warnings: [String] { reports.compactMap { if case .warning(let text) = $0 { text } else { nil } } }
    var notices: [String] { reports.compactMap { if case .notice(let text) = $0 { text } else { nil } } }
}

extension Message {
    var tag: String {
        switch self {
        case .stateSnapshot: "stateSnapshot"
        case .hello: "hello"
        case .heartbeat: "heartbeat"
        case .leave: "leave"
        case .vote: "vote"
        case .voteAck: "voteAck"
        case .goodbye: "goodbye"
        case .query: "query"
        case .timePing: "timePing"
        case .timePong: "timePong"
        case .trackSkipped: "trackSkipped"
        case .roster: "roster"
        case .chatSend: "chatSend"
        case .chatAck: "chatAck"
        case .chatLine: "chatLine"
        case .requestSend: "requestSend"
        case .requestAck: "requestAck"
        case .requestVote: "requestVote"
        case .requestVoteAck: "requestVoteAck"
        case .queueList: "queueList"
        case .nextSources: "nextSources"
        case .cookieChallenge: "cookieChallenge"
        case .liveFrame: "liveFrame"
        case .liveRepair: "liveRepair"
        case .liveResend: "liveResend"
        case .speakerStatus: "speakerStatus"
        case .speakerControl: "speakerControl"
        case .timePongs: "timePongs"
        }
    }
}

extension NodeEvent {
    var tag: String {
        switch self {
        case .stationStarted: "stationStarted"
        case .stationPublished: "stationPublished"
        case .webPage: "webPage"
        case .webQR: "webQR"
        case .joinCode: "joinCode"
        case .discoveryDaemon: "discoveryDaemon"
        case .stationRenamed: "stationRenamed"
        case .listenersChanged: "listenersChanged"
        case .voteCounted: "voteCounted"
        case .trackSkipped: "trackSkipped"
        case .roster: "roster"
        case .chat: "chat"
        case .notice: "notice"
        case .djSettings: "djSettings"
        case .stationStopped: "stationStopped"
        case .tunedIn: "tunedIn"
        case .stationSilent: "stationSilent"
        case .stationBack: "stationBack"
        case .stationGone: "stationGone"
        case .stationKeyChanged: "stationKeyChanged"
        case .listenerSettings: "listenerSettings"
        case .listenerStopped: "listenerStopped"
        case .liveStatus: "liveStatus"
        case .liveSent: "liveSent"
        case .state: "state"
        case .warning: "warning"
        case .searchResults: "searchResults"
        case .queued: "queued"
        case .upNext: "upNext"
        case .requestAnswered: "requestAnswered"
        case .stationsChanged: "stationsChanged"
        case .speakers: "speakers"
        case .speakerSettings: "speakerSettings"
        }
    }
}

extension NodeInput {
    /// The DJ's control a line on stdin stands for (``DJControl/parse(line:)``); the line must parse.
    static func control(_ line: String) -> NodeInput {
        do { return .djControl(try DJControl.parse(line: line)) } catch { fatalError("'\(line)': \(error)") }
    }
}

/// Feeds inputs one after another at one instant and collects every effect.
extension NodeMachine {
    mutating func handle(_ inputs: [NodeInput], at now: LocalTime) -> [Effect] {
        inputs.flatMap { handle($0, at: now) }
    }

    /// Delivers `.timer` at every wakeup up to and including `end`, then once at `end`; returns
    /// every effect. Stops early if the machine finishes or asks for a wakeup in the past.
    mutating func run(until end: LocalTime, from start: LocalTime) -> [Effect] {
        var out: [Effect] = []
        var now = start
        while !isFinished, let wake = nextWakeup, wake <= end, wake >= now {
            now = wake
            out += handle(.timer, at: now)
            if nextWakeup == now { break }  // would spin; the caller's checks will say so
        }
        if !isFinished && now < end { out += handle(.timer, at: end) }
        return out
    }
}

extension NodeEvent {
    /// A short rendering of the parts the tests compare.
    var brief: String {
        switch self {
        case .listenersChanged(let count, let joined, let left):
            "listeners \(count)" + (joined.map { " +\($0)" } ?? "") + (left ? " left" : "")
        case .voteCounted(let trackID, let choice, let tally, _, _):
            "vote \(trackID) \(choice.name) \(tally.up)/\(tally.down)"
        case .chat(let line): "chat \(line.name): \(line.text)"
        case .notice(let text): "notice \(text)"
        case .djSettings(let mode, let volume): "settings \(mode) \(volume)"
        case .roster(let roster): "roster \(roster.total) [\(roster.entries.map(\.name).joined(separator: ", "))]"
        case .trackSkipped(let notice): "skipped \(notice.trackID) \(notice.reason.name) \(notice.down)/\(notice.room)"
        case .stationStopped(let name, let dropped): "stopped \(name) dropped \(dropped.total)"
        case .stationPublished(let name): "published \(name)"
        case .webPage(let url, _): "web \(url)"
        case .webQR(let forDJ): "qr \(forDJ ? "dj" : "guests")"
        case .joinCode(let code): "join code \(code)"
        case .discoveryDaemon(let running): running ? "avahi back" : "avahi lost"
        case .stationRenamed(let from, let to): "renamed \(from) → \(to)"
        case .tunedIn(let station): "tuned in \(station.name)"
        case .stationSilent(let name): "silent \(name)"
        case .stationBack(let name): "back \(name)"
        case .stationGone(let name, let reason): "gone \(name): \(reason)"
        case .stationKeyChanged(let name, let known, let shown): "key changed \(name) \(known) → \(shown)"
        case .listenerSettings(let settings):
            "listener settings \(settings.muted ? "muted" : "on") \(settings.volume) \(settings.vote?.name ?? "-")"
        case .listenerStopped(let dropped): "listener stopped dropped \(dropped.total)"
        case .speakers(let list): "speakers [\(list.map(\.name).joined(separator: ", "))]"
        case .speakerSettings(let s): "speaker \(s.volume) \(s.muted ? "muted" : "on") \(s.delayMs)"
        case .liveStatus(let status): "live played \(status.counters.played)"
        case .liveSent(let sent): "live sent \(sent.frames)"
        case .state(let snapshot, _, let change): "state \(change.rawValue) \(snapshot.nowPlaying?.id ?? "-")"
        case .warning(let text): "warning \(text)"
        case .searchResults(let term, let tracks): "results \(term) \(tracks.count)"
        case .queued(let tracks, let length): "queued \(tracks.count) of \(length)"
        case .upNext(let list):
            "up next \(list.total) [\(list.entries.filter(\.isRequest).map { "#\($0.queueID) \($0.trackID) +\($0.tally.up)-\($0.tally.down)" }.joined(separator: ", "))]"
        case .requestAnswered(let ack, let guest): "request \(guest) \(ack.status) #\(ack.queueID) at \(ack.position)"
        case .stationsChanged(let stations, let change):
            "stations [\(stations.map(\.name).joined(separator: ", "))] \(change.brief)"
        case .stationStarted(let name, _, _, _, _, _, _, let queueLength, _): "started \(name) queue \(queueLength)"
        }
    }
}

extension StationDirectory.Change {
    var brief: String {
        switch self {
        case .appeared(let id): "appeared \(id.hex)"
        case .updated(let id): "updated \(id.hex)"
        case .vanished(let id, let name, let reason): "vanished \(id.hex) \(name): \(reason)"
        }
    }
}
