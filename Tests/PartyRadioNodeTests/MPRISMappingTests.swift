import PartyRadioCore
import PartyRadioMPRIS
import Testing

@testable import PartyRadioNode

/// The pure part of MPRIS: object paths, status, metadata, and what each method call does.
@Suite struct MPRISMappingTests {
    let catalog = Track(
        id: "1440857781", title: "Get Lucky", artist: "Daft Punk", album: "Random Access Memories",
        durationMs: 30_000, source: "https://example.invalid/preview.m4a")
    let local = Track(
        id: "local:12e388ba", title: "Sunrise", artist: "", album: "Demo", durationMs: 0, source: "http://x/media/t")

    @Test func trackIDsBecomeValidObjectPaths() {
        #expect(MPRISMapping.objectPath(trackID: "1440857781") == "/org/partyradio/track/1440857781")
        #expect(MPRISMapping.objectPath(trackID: "local:ab_c") == "/org/partyradio/track/local_3aab_5fc")
        #expect(MPRISMapping.objectPath(trackID: "") == "/org/partyradio/track/_")
        #expect(MPRISMapping.objectPath(trackID: "é/") == "/org/partyradio/track/_c3_a9_2f")
        // Distinct IDs stay distinct, and every element is [A-Za-z0-9_].
        let ids = ["a_b", "a:b", "a_3ab", "a/b", "a b", "ä"]
        let paths = ids.map { MPRISMapping.objectPath(trackID: $0) }
        #expect(Set(paths).count == ids.count)
        for path in paths {
            let element = path.dropFirst("/org/partyradio/track/".count)
            #expect(
                element.unicodeScalars.allSatisfy {
                    $0.properties.isASCIIHexDigit || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || $0 == "_"
                })
        }
    }

    @Test func statusFollowsTrackPauseAndMute() {
        var view = MPRISView(role: .listener)
        #expect(MPRISMapping.playbackStatus(view) == "Stopped")
        view.track = catalog
        #expect(MPRISMapping.playbackStatus(view) == "Playing")
        view.muted = true
        #expect(MPRISMapping.playbackStatus(view) == "Paused")
        view.muted = false
        view.stationPaused = true
        #expect(MPRISMapping.playbackStatus(view) == "Paused")
    }

    @Test func metadataOfACatalogTrackHasItsArtworkOnTheDJsPage() {
        let view = MPRISView(role: .dj, track: catalog, artBase: "http://10.0.0.1:8080")
        let metadata = MPRISMapping.metadata(view)
        #expect(metadata["mpris:trackid"] == .objectPath("/org/partyradio/track/1440857781"))
        #expect(metadata["xesam:title"] == .string("Get Lucky"))
        #expect(metadata["xesam:artist"] == .strings(["Daft Punk"]))
        #expect(metadata["xesam:album"] == .string("Random Access Memories"))
        #expect(metadata["mpris:length"] == .int64(30_000_000))
        #expect(metadata["mpris:artUrl"] == .string("http://10.0.0.1:8080/art/1440857781"))
    }

    @Test func metadataOfALibraryTrackHasNoArtworkAndNoUnknownLength() {
        let metadata = MPRISMapping.metadata(MPRISView(role: .listener, track: local, artBase: "http://10.0.0.1:8080"))
        #expect(metadata["mpris:artUrl"] == nil)
        #expect(metadata["mpris:length"] == nil)
        #expect(metadata["xesam:artist"] == .strings([]))
        #expect(MPRISMapping.metadata(MPRISView(role: .dj))["mpris:trackid"] == .objectPath(MPRISMapping.noTrack))
    }

    @Test func propertiesDifferByRole() {
        let dj = MPRISMapping.properties(MPRISView(role: .dj, track: catalog, volume: 80))
        let listener = MPRISMapping.properties(MPRISView(role: .listener, track: catalog, muted: true))
        #expect(dj.player["CanSeek"] == .bool(true) && dj.player["CanGoPrevious"] == .bool(true))
        #expect(listener.player["CanSeek"] == .bool(false) && listener.player["CanGoPrevious"] == .bool(false))
        #expect(dj.player["CanGoNext"] == .bool(true) && listener.player["CanGoNext"] == .bool(true))
        #expect(dj.player["Volume"] == .double(0.8) && listener.player["Volume"] == .double(0))
        #expect(dj.root["Identity"] == .string("partyradio") && dj.root["CanQuit"] == .bool(false))
        #expect(dj.moving && !MPRISMapping.properties(MPRISView(role: .dj, track: catalog, stationPaused: true)).moving)
        #expect(dj.player["Rate"] == .double(1))
        #expect(listener.changedPlayerProperties(since: dj).contains("PlaybackStatus"))
    }

    @Test func theDJsCallsAreItsControls() {
        let view = MPRISView(role: .dj, track: catalog)
        let control = { (call: MPRISCall) in MPRISMapping.control(call, view: view, positionUs: 10_000_000) }
        #expect(control(.playPause) == .dj(.toggle))
        #expect(control(.play) == .dj(.resume))
        #expect(control(.pause) == .dj(.pause) && control(.stop) == .dj(.pause))
        #expect(control(.next) == .dj(.next) && control(.previous) == .dj(.previous))
        #expect(control(.seek(offsetUs: 5_000_000)) == .dj(.seek(toNs: 15_000_000_000)))
        #expect(control(.seek(offsetUs: -60_000_000)) == .dj(.seek(toNs: 0)))
        #expect(control(.seek(offsetUs: .max)) == nil, "past any position: nothing, not a crash")
        let path = MPRISMapping.objectPath(trackID: catalog.id)
        #expect(control(.setPosition(trackPath: path, positionUs: 2_500_000)) == .dj(.seek(toNs: 2_500_000_000)))
        #expect(control(.setPosition(trackPath: "/org/partyradio/track/other", positionUs: 2_500_000)) == nil)
        #expect(control(.setPosition(trackPath: path, positionUs: 31_000_000)) == nil)  // past its end
        #expect(control(.setVolume(0.5)) == .dj(.volume(.to(50))))
        #expect(control(.quit) == nil && control(.raise) == nil && control(.openURI("file:///x")) == nil)
        #expect(control(.playPause)?.input.isDJControl == true)
    }

    /// A speaker's MPRIS shows the volume and mute its DJ set (not a listener's own, which a
    /// speaker does not have).
    @Test func aSpeakerShowsWhatItsDJSet() throws {
        let key = try #require(PublicKey(bytes: [UInt8](repeating: 9, count: 32)))
        var kept = SpeakerControlState()
        _ = kept.apply(
            SpeakerControl(
                controlID: 2, target: .speaker(key), fields: .all, settings: SpeakerSettings(volume: 35, muted: true)),
            key: key, room: "")
        let machine = ListenerMachine(
            configuration: .init(
                query: nil, timeoutNs: 1_000_000_000, interfaceName: "eth0", listenerName: "Kitchen", playsAudio: true,
                speaker: .init(name: "Kitchen", room: "", key: key, kept: kept)),
            verifier: SodiumVerifier())
        let view = MPRISView(machine, at: LocalTime(ns: 0))
        #expect(view.volume == 35 && view.muted)
        let plain = MPRISView(
            ListenerMachine(
                configuration: .init(
                    query: nil, timeoutNs: 1_000_000_000, interfaceName: "eth0", listenerName: "Ann", playsAudio: true),
                verifier: SodiumVerifier()), at: LocalTime(ns: 0))
        #expect(plain.volume == 100 && !plain.muted)
    }

    @Test func aListenersCallsAreItsOwn() {
        let view = MPRISView(role: .listener, track: catalog)
        let control = { (call: MPRISCall) in MPRISMapping.control(call, view: view, positionUs: 0) }
        #expect(control(.playPause) == .listener(.toggleMute))
        #expect(control(.play) == .listener(.unmute))
        #expect(control(.pause) == .listener(.mute) && control(.stop) == .listener(.mute))
        #expect(control(.next) == .listener(.vote(.down)))
        #expect(control(.previous) == nil && control(.seek(offsetUs: 1)) == nil)
        #expect(control(.setVolume(2)) == .listener(.volume(.to(100))) && control(.setVolume(.nan)) == nil)
        #expect(control(.playPause)?.input.isDJControl == false)
    }

    @Test func thePositionMovesOnlyWhilePlayingAndStopsAtTheEnd() {
        let playing = MPRISProperties(root: [:], player: [:], positionUs: 1_000_000, moving: true, lengthUs: 3_000_000)
        #expect(MPRISService.position(playing, elapsedNs: 500_000_000) == 1_500_000)
        #expect(MPRISService.position(playing, elapsedNs: 10_000_000_000) == 3_000_000)
        var paused = playing
        paused.moving = false
        #expect(MPRISService.position(paused, elapsedNs: 500_000_000) == 1_000_000)
    }
}

extension NodeInput {
    fileprivate var isDJControl: Bool { if case .djControl = self { true } else { false } }
}
