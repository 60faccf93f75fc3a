import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// What a listener hands its player from a station's snapshot: the source is opened by libmpv
/// (and fetched by libcurl), and it comes from the network, so only an `http`/`https` URL of the
/// fetchable form is taken (docs/SECURITY.md, "A station's source names a local file").
extension ListenerMachineTests {
    /// Sources a rogue station might send: local files, libmpv's own protocols, other schemes,
    /// URLs of a shape no media server uses.
    static let unplayableSources = [
        "file:///etc/passwd", "/etc/passwd", "../../.ssh/id_ed25519", "av://lavfi:sine=frequency=440",
        "lavfi://sine", "memory://hello", "fd://0", "fdclose://3", "edl://%7%/etc/passwd", "appending:///etc/passwd",
        "smb://host/share/x.mp3", "ftp://10.0.0.1/x.mp3", "HTTP://10.0.0.1/0", "http://user:pw@10.0.0.1/0",
        "http://10.0.0.1/0#frag", "http://10.0.0.1/a b", "s0", "",
    ]

    /// The track of `source`, as the station's snapshot names it.
    func track(_ source: String, id: String = "rogue") -> Track {
        Track(id: id, title: "Rogue", artist: "X", album: "", durationMs: 10_000, source: source)
    }

    /// The station's snapshot at listener instant `local` with `track` playing.
    func snapshot(_ track: Track, at local: LocalTime) -> StateSnapshot {
        var s = Fixture.snapshot(track: track, dj: dj(at(ms: 100)))
        s.sentAtNs = dj(local).ns
        return s
    }

    func logs(_ effects: [Effect]) -> [String] {
        effects.compactMap { if case .log(_, let line) = $0 { line } else { nil } }
    }

    @Test(arguments: unplayableSources)
    func aSourceThatIsNotAWebAddressIsNeitherLoadedNorFetched(_ source: String) {
        var machine = listener()
        var station = Fixture.djPeer
        var (now, out) = synchronised(&machine, &station)
        #expect(out.player == [.load(Fixture.tracks[0], paused: false)])

        // The station switches to the rogue track: the player stops and is given nothing else.
        var later: [Effect] = []
        for _ in 0..<5 {
            now += Nanos.ms(500)
            later += machine.handle(
                station.send(.stateSnapshot(snapshot(track(source), at: now)), station: id), at: now)
            later += machine.run(until: now + Nanos.ms(400), from: now)
        }
        #expect(later.player == [.stop], "\(source.debugDescription): \(later.player)")
        // Counted and logged once, however often the station repeats it.
        #expect(machine.refused.counts == [ListenerMachine.unplayableSource: 1])
        #expect(logs(later).filter { $0.contains("refused to play") }.count == 1)
        // A playable track afterwards plays as ever.
        now += Nanos.ms(500)
        let back = machine.handle(station.send(.stateSnapshot(snapshot(at: now)), station: id), at: now)
        #expect(back.player.contains(.load(Fixture.tracks[0], paused: false)))
    }

    @Test func aRogueFirstTrackIsNeverLoadedNorFetched() {
        var machine = listener()
        var station = Fixture.djPeer
        _ = machine.handle(.start, at: t0)
        _ = machine.handle(Fixture.resolved(), at: at(ms: 20))
        var out = machine.handle(
            station.send(.stateSnapshot(snapshot(track("file:///etc/passwd"), at: at(ms: 100))), station: id),
            at: at(ms: 100))
        for n in 0..<8 {
            let sent = at(ms: 100 + Int64(n) * 75)
            out += machine.handle(pong(&station, pingAt: sent), at: sent + Nanos.ms(2))
        }
        out += machine.run(until: at(ms: 3_000), from: at(ms: 700))
        #expect(machine.clock.isSynchronized && machine.tuned != nil)
        #expect(out.player.isEmpty, "\(out.player)")
        // The stop report counts it with the datagrams dropped.
        let stopped = machine.handle(.quit, at: at(ms: 3_000))
        let dropped = stopped.reports.compactMap { if case .listenerStopped(let d) = $0 { d } else { nil } }
        #expect(dropped.first?.counts[ListenerMachine.unplayableSource] == 1)
    }

    @Test func theLogLineShowsNoControlCharacters() {
        var machine = listener()
        var station = Fixture.djPeer
        _ = machine.handle(.start, at: t0)
        _ = machine.handle(Fixture.resolved(), at: at(ms: 20))
        let rogue = track("file:///etc/\u{1B}[2Jpasswd\u{202E}", id: "x\u{1B}]0;owned\u{07}")
        let out = machine.handle(
            station.send(.stateSnapshot(snapshot(rogue, at: at(ms: 100))), station: id), at: at(ms: 100))
        let lines = logs(out).filter { $0.contains("refused to play") }
        #expect(lines.count == 1)
        #expect(lines.allSatisfy { !$0.unicodeScalars.contains { $0.properties.generalCategory == .control } })
        #expect(lines.allSatisfy { !$0.unicodeScalars.contains { $0.properties.isBidiControl } })
    }

    /// A live station's now playing (`live:`, docs/LIVE.md) is no rogue source: nothing is loaded
    /// or fetched, but nothing is counted as a bad record (the stop line would call it a dropped
    /// datagram) nor logged as refused, and the one log line comes once.
    @Test func aLiveStationsTrackIsNotCountedAsRefused() {
        var machine = listener()
        var station = Fixture.djPeer
        var (now, _) = synchronised(&machine, &station)
        var later: [Effect] = []
        for _ in 0..<5 {
            now += Nanos.ms(500)
            later += machine.handle(
                station.send(.stateSnapshot(snapshot(Track.live, at: now)), station: id), at: now)
            later += machine.run(until: now + Nanos.ms(400), from: now)
        }
        #expect(later.player == [.stop], "\(later.player)")
        #expect(machine.refused.total == 0)
        #expect(logs(later).filter { $0.contains("refused to play") }.isEmpty)
        #expect(logs(later).filter { $0.contains("live") }.count == 1)
        let stopped = machine.handle(.quit, at: now + Nanos.ms(500))
        let dropped = stopped.reports.compactMap { if case .listenerStopped(let d) = $0 { d } else { nil } }
        #expect(dropped.first?.total == 0)
    }

    /// Every form the station's own media server and the catalog's previews use still plays.
    @Test(arguments: [
        "http://10.0.0.1:8080/media/abc", "http://[fe80::1%25eth0]:8080/media/abc", "http://[2001:db8::1]:8080/media/a",
        "https://audio-ssl.itunes.apple.com/itunes-assets/AudioPreview1/v4/p.plus.aac.p.m4a",
        "http://dj.example.net:8080/media/abc",
    ])
    func webSourcesPlay(_ source: String) {
        var machine = listener()
        var station = Fixture.djPeer
        var (now, _) = synchronised(&machine, &station)
        now += Nanos.ms(500)
        let out = machine.handle(station.send(.stateSnapshot(snapshot(track(source), at: now)), station: id), at: now)
        #expect(out.player == [.load(track(source), paused: false), .fetch(source)])
        #expect(machine.refused.total == 0)
    }
}
