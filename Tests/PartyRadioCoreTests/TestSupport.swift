@testable import PartyRadioCore

/// A deterministic stand-in signer: the core's codec is tested without libsodium; the real
/// Ed25519 signer is tested in the adapter tests.
struct FakeSigner: Signer {
    let publicKey: PublicKey
    init(_ seed: UInt8) { publicKey = PublicKey(bytes: [UInt8](repeating: seed, count: 32))! }
    func sign(_ bytes: [UInt8]) -> [UInt8] {
        (0..<64).map { index in bytes.reduce(UInt8(index)) { $0 &+ $1 } }
    }
}

// SeededGenerator (SplitMix64) lives in SimulatedTimeNetwork.swift.

enum Samples {
    static let track = Track(
        id: "1440857781", title: "Señorita 🎶", artist: "Shawn Mendes & Camila Cabello", album: "Señorita - Single",
        durationMs: 190_799, source: "https://audio-ssl.itunes.apple.com/preview.m4a")

    static let longTrack = Track(
        id: String(repeating: "9", count: 300), title: String(repeating: "é", count: 300),
        artist: String(repeating: "🎸", count: 100), album: String(repeating: "a", count: 1000),
        durationMs: .max, source: "http://" + String(repeating: "x", count: 2000))

    static func snapshot(_ track: Track? = track) -> StateSnapshot {
        StateSnapshot(
            stationName: "Rooftop", nowPlaying: track,
            anchor: PlaybackAnchor(
                djTimeNs: 1_700_000_000_000_000_000, positionNs: 12_345_678_901, rateMicros: 1_000_000),
            tally: Tally(up: 3, down: 1), listenerCount: 7, queueLength: 12, queueIndex: 4,
            sentAtNs: 1_700_000_000_123_000_000)
    }

    /// Messages whose last field is optional: a truncation that cuts it off is the message without
    /// it (the signature still fails), so they round-trip and take mutations, but are left out of
    /// the truncation test.
    static let withOptionalEnds: [Message] = [
        .timePing(TimePing(clientSendNs: .max, batched: true)),
        .hello(Hello(listenerName: "kitchen-pi", isRepeat: true)),
        .hello(Hello(listenerName: "far", wantsUnicast: true, cookie: .max, isRepeat: true)),
    ]

    /// One of every message kind.
    static let messages: [Message] = [
        .stateSnapshot(snapshot()), .stateSnapshot(snapshot(nil)), .hello(Hello(listenerName: "kitchen-pi")),
        .heartbeat(Heartbeat()), .leave(Leave()), .vote(Vote(trackID: "1440857781", choice: .down)),
        .voteAck(
            VoteAck(
                voteSequence: 42, status: .counted, trackID: "1440857781", choice: .up, tally: Tally(up: 5, down: 2),
                listenerCount: 9)),
        .goodbye(Goodbye(reason: "The DJ ended the station.")), .query(Query()),
        .liveFrame(
            LiveFrame(
                sequence: .max, firstSample: DJTime(ns: -1), duration: .ms20,
                payload: [UInt8](repeating: 9, count: 1000))),
        .liveRepair(
            LiveRepair(
                firstSequence: 7, dataCount: 16, parityCount: 8, parityIndex: 7, shard: [UInt8](repeating: 1, count: 15)
            )),
        .liveResend(LiveResend(firstSequence: .max - 31, mask: .max)),
        .speakerStatus(
            SpeakerStatus(
                name: "Kitchen 🎸", room: "Downstairs",
                settings: SpeakerSettings(volume: 100, muted: true, delayMs: -500),
                playing: true, lastControl: .max)),
        .speakerControl(
            SpeakerControl(
                controlID: 1, target: .speaker(PublicKey(bytes: [UInt8](repeating: 7, count: 32))!), fields: .all,
                settings: SpeakerSettings(volume: 0, muted: false, delayMs: 500))),
        .speakerControl(
            SpeakerControl(
                controlID: .max, target: .room("Ünten"), fields: .delay, settings: SpeakerSettings(delayMs: -1))),
        .timePing(TimePing(clientSendNs: -5)),
        .timePong(TimePong(clientSendNs: 1, serverReceiveNs: .max, serverSendNs: .min)),
        .timePongs(
            TimePongs(
                serverSendNs: -1,
                entries: (0..<TimePongs.entryRange.upperBound).map {
                    .init(guest: UInt64($0) &* 0x9E37_79B9_7F4A_7C15, clientSendNs: -Int64($0), serverReceiveNs: .max)
                })),
        .trackSkipped(TrackSkipped(trackID: "1440857781", title: "Señorita 🎶", reason: .crowd, down: 3, room: 5)),
        .chatSend(
            ChatSend(
                messageID: 1_764_000_000_000_001, name: "Bob 🎸",
                text: "great track! " + String(repeating: "é", count: 200))),
        .chatAck(ChatAck(messageID: 7, status: .rateLimited, retryAfterMs: 4_200)),
        .chatLine(ChatLine(sender: "0123456789abcdef", messageID: .max, name: "Alice", text: "hello 👋")),
        .roster(
            Roster(
                total: 40,
                entries: (0..<20).map { Roster.Entry(name: "Gäst \($0) 🎸", listeningForMs: .max) })),
        .requestSend(RequestSend(requestID: 1_764_000_000_000_002, name: "Bob 🎸", wanted: .catalogID("1440857781"))),
        .requestSend(RequestSend(requestID: 9, name: "", wanted: .library(String(repeating: "ü", count: 100)))),
        .requestAck(
            RequestAck(
                requestID: .max, status: .awaitingApproval, queueID: 17, position: 2, limit: 3, title: "Señorita 🎶",
                artist: "Ünïcødé")),
        .requestVote(RequestVote(queueID: .max, choice: .down)),
        .requestVoteAck(
            RequestVoteAck(
                voteSequence: 5, queueID: 3, status: .played, choice: .up, tally: Tally(up: 1, down: .max), position: 4)
        ),
        .queueList(
            QueueList(
                mode: .approve, total: 600,
                entries: (0..<5).map {
                    QueueList.Entry(
                        queueID: UInt32($0), trackID: "local:\($0)", title: "Señorita 🎶 \($0)",
                        artist: "Artist \($0)", requester: "Gäst \($0) 🎸", tally: Tally(up: 3, down: 1),
                        awaitingApproval: $0 % 2 == 0)
                })),
        .nextSources(
            NextSources(entries: [
                .init(
                    trackID: "1440857781", source: "https://audio-ssl.itunes.apple.com/itunes-assets/p.m4a?a=1&b=%20"),
                .init(trackID: "local:abc", source: "http://[fe80::1%25eth0]:8080/media/abc"),
            ])),
        .cookieChallenge(CookieChallenge(echo: .max, cookie: 0x0123_4567_89AB_CDEF)),
    ]
}

/// Wraps a mutating call so `#expect` does not try to take its receiver apart.
func ok(_ value: Bool) -> Bool { value }
