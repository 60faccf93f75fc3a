import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// Now playing from the player a live DJ follows over MPRIS (docs/LIVE.md): the parser of what the
/// player says (untrusted), and the DJ machine's reactions to it.
@Suite struct LivePlayerTests {
    // MARK: The parser

    static let metadata: [String: PlayerValue] = [
        "mpris:trackid": .objectPath("/org/mpv/Track/1"),
        "xesam:title": .string("Alpha"),
        "xesam:artist": .strings(["Band", "Guest"]),
        "xesam:album": .string("Record"),
        "mpris:artUrl": .string("https://example.org/a.jpg"),
        "mpris:length": .int64(180_000_000),
    ]

    static func state(
        _ metadata: [String: PlayerValue] = metadata, status: String = "Playing", positionUs: Int64? = 0
    ) -> LivePlayerState {
        LivePlayerState.parse(
            player: "mpv", metadata: metadata, status: .string(status), positionUs: positionUs.map { .int64($0) })
    }

    @Test("a well-formed player's metadata becomes its track; artists are joined")
    func wellFormed() throws {
        let state = Self.state(positionUs: 5_000_000)
        let track = try #require(state.track)
        #expect(state.player == "mpv" && state.status == .playing && state.positionUs == 5_000_000)
        #expect(track.title == "Alpha" && track.artist == "Band, Guest" && track.album == "Record")
        #expect(track.trackID == "/org/mpv/Track/1" && track.lengthUs == 180_000_000)
        #expect(track.artURL == "https://example.org/a.jpg")
        let station = track.stationTrack
        #expect(station.isLive && station.id.hasPrefix("live:") && station.durationMs == 180_000)
        #expect(station.title == "Alpha" && station.id != Track.live.id)
    }

    @Test("other types players send for the same keys are taken: a string artist and track ID, unsigned length")
    func lenientTypes() throws {
        var metadata = Self.metadata
        metadata["xesam:artist"] = .string("Solo")
        metadata["mpris:trackid"] = .string("spotify:track:1")
        metadata["mpris:length"] = .uint64(2_000_000)
        let track = try #require(Self.state(metadata).track)
        #expect(track.artist == "Solo" && track.trackID == "spotify:track:1" && track.lengthUs == 2_000_000)
    }

    @Test("control characters, escapes and bidi overrides are stripped and text is cut to the snapshot's limit")
    func untrustedText() throws {
        var metadata = Self.metadata
        metadata["xesam:title"] = .string("\u{1B}[31mRed\u{202E}evil\u{0007}")
        metadata["xesam:album"] = .string(String(repeating: "é", count: 500))
        let track = try #require(Self.state(metadata).track)
        #expect(track.title == "Redevil")
        #expect(track.album.utf8.count <= StateSnapshot.Limit.text && track.album.hasPrefix("éé"))
    }

    @Test("nonsense is dropped: wrong types, negative or absurd lengths, unknown status, bad URLs; no title, no track")
    func nonsense() throws {
        var metadata = Self.metadata
        metadata["xesam:album"] = .int64(3)
        metadata["mpris:length"] = .int64(-5)
        metadata["mpris:artUrl"] = .string("javascript:alert(1)")
        metadata["mpris:trackid"] = .objectPath(LivePlayerState.noTrack)
        let state = Self.state(metadata, status: "Dancing", positionUs: -1)
        let track = try #require(state.track)
        #expect(track.album == "" && track.lengthUs == 0 && track.artURL == nil && track.trackID == "")
        #expect(state.status == .stopped && state.positionUs == nil)
        metadata["mpris:length"] = .uint64(.max)
        #expect(Self.state(metadata).track?.lengthUs == 0)
        metadata["xesam:title"] = .strings(["Alpha"])
        #expect(Self.state(metadata).track == nil)
        metadata["xesam:title"] = .string(" \u{200B}\u{202E} ")
        #expect(Self.state(metadata).track == nil)
        #expect(Self.state([:]).track == nil)
    }

    @Test("a position beyond the track's length is the length")
    func positionCapped() {
        #expect(Self.state(positionUs: 999_000_000).positionUs == 180_000_000)
    }

    @Test("random metadata of any shape never crashes and never yields text beyond the limits or a control character")
    func randomMetadata() {
        var random = SplitMix64(seed: 28)
        let keys = ["xesam:title", "xesam:artist", "xesam:album", "mpris:artUrl", "mpris:length", "mpris:trackid", "x"]
        func text() -> String {
            let scalars: [Unicode.Scalar] = ["a", "é", "\u{1B}", "\u{202E}", "\u{0}", "\n", "🎵", "\u{300}", " ", "["]
            return String(
                String.UnicodeScalarView((0..<Int(random.next() % 300)).map { _ in scalars[Int(random.next() % 10)] }))
        }
        func value() -> PlayerValue {
            switch random.next() % 9 {
            case 0: .string(text())
            case 1: .objectPath(text())
            case 2: .strings((0..<Int(random.next() % 20)).map { _ in text() })
            case 3: .int64(Int64(bitPattern: random.next()))
            case 4: .uint64(random.next())
            case 5: .int32(Int32(truncatingIfNeeded: random.next()))
            case 6: .double(Double(bitPattern: random.next()))
            case 7: .bool(random.next() % 2 == 0)
            default: .other(signature: "a{sv}")
            }
        }
        for _ in 0..<2_000 {
            var metadata: [String: PlayerValue] = [:]
            for key in keys where random.next() % 3 != 0 { metadata[key] = value() }
            let state = LivePlayerState.parse(
                player: text(), metadata: metadata, status: value(), positionUs: random.next() % 2 == 0 ? value() : nil)
            if let position = state.positionUs { #expect(position >= 0 && position <= LivePlayerState.maxLengthUs) }
            guard let track = state.track else { continue }
            for shown in [track.title, track.artist, track.album, state.player] {
                #expect(shown.utf8.count <= LivePlayerState.maxText)
                #expect(!shown.unicodeScalars.contains { $0.isNeverShown || $0 == "\u{1B}" })
            }
            #expect(!track.title.isEmpty && track.lengthUs >= 0 && track.lengthUs <= LivePlayerState.maxLengthUs)
            #expect(track.stationTrack.isLive)
        }
    }

    @Test("--live-player takes a bus name's suffix or none, and refuses anything else")
    func choice() {
        #expect(LivePlayerChoice(argument: "mpv") == .named("mpv"))
        #expect(LivePlayerChoice(argument: "chromium.instance42") == .named("chromium.instance42"))
        #expect(LivePlayerChoice(argument: "none") == LivePlayerChoice.none)
        for bad in ["", "a..b", ".mpv", "mp v", "mpv;rm", "ünï"] { #expect(LivePlayerChoice(argument: bad) == nil) }
    }

    @Test("which player is followed: a name or its instances; else the one that plays, kept while it plays")
    func pick() {
        let p = LivePlayerChoice.busPrefix
        let names = [
            ":1.4", "org.freedesktop.DBus", p + "vlc", p + "mpv.instance7", p + "partyradio",
            p + "partyradio.instance9",
            p + "playerctld", p + "mpvx", p + "mpv",
        ]
        #expect(LivePlayerChoice.named("mpv").candidates(among: names) == [p + "mpv", p + "mpv.instance7"])
        #expect(LivePlayerChoice.named("mpv.instance7").candidates(among: names) == [p + "mpv.instance7"])
        #expect(LivePlayerChoice.named("partyradio").candidates(among: names, own: [p + "partyradio"]).isEmpty == false)
        #expect(LivePlayerChoice.none.candidates(among: names).isEmpty)
        // Never partyradio's own players, nor playerctld's copy of another.
        let any = LivePlayerChoice.playing.candidates(among: names)
        #expect(any == [p + "mpv", p + "mpv.instance7", p + "mpvx", p + "vlc"])

        // A named player is followed whatever it does; none is none.
        #expect(LivePlayerChoice.named("mpv").pick(candidates: [p + "mpv"], current: nil) { _ in false } == p + "mpv")
        #expect(LivePlayerChoice.none.pick(candidates: any, current: nil) { _ in true } == nil)
        // By default: the first that plays; kept while it plays; another once it stops and that one
        // plays; kept while paused when nothing else plays; none while nothing has played.
        let playing = LivePlayerChoice.playing
        #expect(playing.pick(candidates: any, current: nil) { $0 == p + "vlc" } == p + "vlc")
        #expect(playing.pick(candidates: any, current: nil) { _ in false } == nil)
        #expect(playing.pick(candidates: any, current: p + "vlc") { _ in true } == p + "vlc")
        #expect(playing.pick(candidates: any, current: p + "vlc") { $0 == p + "mpvx" } == p + "mpvx")
        #expect(playing.pick(candidates: any, current: p + "vlc") { _ in false } == p + "vlc")
        // A followed player gone from the bus is not kept.
        #expect(playing.pick(candidates: [p + "mpv"], current: p + "vlc") { _ in false } == nil)
        #expect(LivePlayerChoice.shortName(p + "mpv.instance7") == "mpv.instance7")
    }

    // MARK: The DJ machine

    func liveDJ(crowdSkip: Int = 50) -> DJMachine {
        var configuration = Fixture.djConfiguration(queue: [.live], playsAudio: false)
        configuration.live = LiveSender.Settings(parityCount: 1)
        configuration.crowdSkipPercent = crowdSkip
        configuration.voteWeightAfterNs = 0
        var dj = DJMachine(
            configuration: configuration, verifier: ChecksumVerifier(), now: t0,
            erasureCode: LiveJitterBufferTests.XORCode())
        _ = dj.handle(.start, at: t0)
        return dj
    }

    static func titled(_ title: String, id: String) -> LivePlayerState {
        var metadata = metadata
        metadata["xesam:title"] = .string(title)
        metadata["mpris:trackid"] = .objectPath(id)
        return state(metadata)
    }

    func snapshots(_ effects: [Effect]) -> [StateSnapshot] {
        effects.sent.compactMap { if case .stateSnapshot(let s) = $0.message { s } else { nil } }
    }

    func calls(_ effects: [Effect]) -> [LivePlayerCall] {
        effects.compactMap { if case .livePlayer(let call) = $0 { call } else { nil } }
    }

    @Test(
        "the player's track becomes now playing at once; another ID or title is a track change that resets the tally and counts the play"
    )
    func trackChange() throws {
        var dj = liveDJ()
        let first = dj.handle(.live(.player(Self.titled("Alpha", id: "/t/1"))), at: at(ms: 1_000))
        #expect(snapshots(first).first?.nowPlaying?.title == "Alpha")
        #expect(dj.engine.nowPlaying?.artist == "Band, Guest" && dj.engine.nowPlaying?.durationMs == 180_000)
        #expect(first.records.map(\.trackID) == [Track.live.id])  // the live segment before it ended
        var voter = Peer("10.0.1.1", key: 101)
        let trackID = try #require(dj.engine.nowPlaying?.id)
        _ = dj.handle(
            voter.send(.vote(Vote(trackID: trackID, choice: .up)), station: Fixture.stationID), at: at(ms: 2_000))
        #expect(dj.engine.votes.tally.up == 1)
        // The same track read again (its position moved on): nothing changes.
        let same = dj.handle(.live(.player(Self.titled("Alpha", id: "/t/1"))), at: at(ms: 3_000))
        #expect(same.records.isEmpty && dj.engine.votes.tally.up == 1)
        let next = dj.handle(.live(.player(Self.titled("Beta", id: "/t/2"))), at: at(ms: 4_000))
        #expect(dj.engine.nowPlaying?.title == "Beta" && dj.engine.votes.tally == Tally())
        #expect(next.records.map { "\($0.title) \($0.up) \($0.ending.rawValue)" } == ["Alpha 1 played"])
        #expect(snapshots(next).first?.nowPlaying?.title == "Beta")
        // The same ID with another title (a stream's next song) is another track too.
        _ = dj.handle(.live(.player(Self.titled("Gamma", id: "/t/2"))), at: at(ms: 5_000))
        #expect(dj.engine.nowPlaying?.title == "Gamma")
    }

    @Test("a player that vanishes, or says no title, leaves the station Live")
    func vanish() {
        var dj = liveDJ()
        _ = dj.handle(.live(.player(Self.titled("Alpha", id: "/t/1"))), at: at(ms: 1_000))
        let gone = dj.handle(.live(.player(nil)), at: at(ms: 2_000))
        #expect(dj.engine.nowPlaying == .live && snapshots(gone).first?.nowPlaying == .live)
        #expect(gone.records.map(\.title) == ["Alpha"])
        _ = dj.handle(.live(.player(Self.titled("Alpha", id: "/t/1"))), at: at(ms: 3_000))
        _ = dj.handle(.live(.player(Self.state([:]))), at: at(ms: 4_000))
        #expect(dj.engine.nowPlaying == .live)
    }

    @Test("the player's pause and play pause and play the station; a jump in its position moves the station's")
    func pauseAndSeek() {
        var dj = liveDJ()
        _ = dj.handle(.live(.player(Self.titled("Alpha", id: "/t/1"))), at: at(ms: 1_000))
        var paused = Self.titled("Alpha", id: "/t/1")
        paused.status = .paused
        _ = dj.handle(.live(.player(paused)), at: at(ms: 2_000))
        #expect(dj.engine.isPaused)
        var moved = Self.titled("Alpha", id: "/t/1")
        moved.positionUs = 90_000_000
        _ = dj.handle(.live(.player(moved)), at: at(ms: 3_000))
        #expect(!dj.engine.isPaused)
        #expect(abs(dj.engine.positionNs(at: DJTime(onTheDJ: at(ms: 3_000))) - Nanos.seconds(90)) < Nanos.ms(1))
    }

    @Test("the crowd's skip calls the player's Next once; its next track closes the play as a crowd skip")
    func crowdSkipCallsNext() throws {
        var dj = liveDJ()
        _ = dj.handle(.live(.player(Self.titled("Alpha", id: "/t/1"))), at: at(ms: 1_000))
        let trackID = try #require(dj.engine.nowPlaying?.id)
        var effects: [Effect] = []
        for n in 0..<2 {
            var voter = Peer("10.0.1.\(n)", key: UInt8(100 + n))
            let vote = voter.send(.vote(Vote(trackID: trackID, choice: .down)), station: Fixture.stationID)
            effects += dj.handle(vote, at: at(ms: 12_000))
        }
        #expect(calls(effects) == [.next])
        #expect(dj.engine.nowPlaying?.title == "Alpha")  // until the player says what it plays now
        // Crowd skip waits for the player rather than asking again at every tick.
        #expect(calls(dj.handle(.timer, at: at(ms: 12_500))).isEmpty)
        let next = dj.handle(.live(.player(Self.titled("Beta", id: "/t/2"))), at: at(ms: 13_000))
        #expect(next.records.map { "\($0.title) \($0.down) \($0.ending.rawValue)" } == ["Alpha 2 crowd_skip"])
        #expect(dj.engine.votes.tally == Tally())
    }

    @Test("the DJ's next, previous, pause and play call the player; without a player, next starts the segment again")
    func djControls() {
        var dj = liveDJ()
        let alone = dj.handle(.djControl(.next), at: at(ms: 500))
        #expect(calls(alone).isEmpty && dj.engine.nowPlaying == .live)
        _ = dj.handle(.live(.player(Self.titled("Alpha", id: "/t/1"))), at: at(ms: 1_000))
        #expect(calls(dj.handle(.djControl(.next), at: at(ms: 2_000))) == [.next])
        #expect(calls(dj.handle(.djControl(.previous), at: at(ms: 2_100))) == [.previous])
        #expect(calls(dj.handle(.djControl(.pause), at: at(ms: 2_200))) == [.pause])
        #expect(calls(dj.handle(.djControl(.resume), at: at(ms: 2_300))) == [.play])
        let next = dj.handle(.live(.player(Self.titled("Beta", id: "/t/2"))), at: at(ms: 3_000))
        #expect(next.records.map(\.ending) == [.djSkip])
    }

    @Test("the DJ's seek is the player's SetPosition on the track it plays, within its length; no track ID, no call")
    func djSeekSetsThePlayersPosition() {
        var dj = liveDJ()
        _ = dj.handle(.live(.player(Self.titled("Alpha", id: "/t/1"))), at: at(ms: 1_000))
        // Alpha is 180 s long (Self.metadata): 42 s is asked for as such, 500 s as its end, -3 s as 0.
        #expect(
            calls(dj.handle(.djControl(.seek(toNs: 42_000_000_000)), at: at(ms: 2_000)))
                == [.setPosition(trackID: "/t/1", positionUs: 42_000_000)])
        #expect(
            calls(dj.handle(.djControl(.seek(toNs: 500_000_000_000)), at: at(ms: 2_100)))
                == [.setPosition(trackID: "/t/1", positionUs: 180_000_000)])
        #expect(
            calls(dj.handle(.djControl(.seek(toNs: -3_000_000_000)), at: at(ms: 2_200)))
                == [.setPosition(trackID: "/t/1", positionUs: 0)])
        #expect(LivePlayerCall.setPosition(trackID: "/t/1", positionUs: 0).member == "SetPosition")
        // A player that names no track: nothing to seek in, said so.
        var untitled = Self.metadata
        untitled["mpris:trackid"] = nil
        _ = dj.handle(.live(.player(Self.state(untitled))), at: at(ms: 3_000))
        let refused = dj.handle(.djControl(.seek(toNs: 1_000_000_000)), at: at(ms: 3_100))
        #expect(calls(refused).isEmpty)
        #expect(refused.reports.contains { if case .warning(let text) = $0 { text.contains("seek") } else { false } })
    }

    @Test("a guest's words on a live station are a wish the DJ reads: listed, never played, kept across a skip")
    func requestsAreWishes() {
        var dj = liveDJ()
        var guest = Peer("10.0.1.9", key: 109)
        let request = RequestSend(requestID: 1, name: "Bo", wanted: .library("Wonder\u{202E}wall"))
        _ = dj.handle(guest.send(.requestSend(request), station: Fixture.stationID), at: at(ms: 500))
        #expect(dj.requests.waiting.map(\.track.title) == ["Wonderwall"])
        #expect(dj.upNext.entries.map(\.title) == ["Wonderwall"])
        _ = dj.handle(.djControl(.next), at: at(ms: 1_000))
        _ = dj.handle(.live(.player(Self.titled("Alpha", id: "/t/1"))), at: at(ms: 2_000))
        _ = dj.handle(.djControl(.next), at: at(ms: 3_000))
        _ = dj.handle(.timer, at: at(ms: 400_000))
        #expect(dj.engine.nowPlaying?.title == "Alpha" && dj.requests.waiting.map(\.track.title) == ["Wonderwall"])
    }
}
