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

    @Test func theDJsCallsAreItsControlLines() {
        let view = MPRISView(role: .dj, track: catalog)
        let command = { (call: MPRISCall) in MPRISMapping.command(call, view: view, positionUs: 10_000_000) }
        #expect(command(.playPause) == "toggle")
        #expect(command(.play) == "resume")
        #expect(command(.pause) == "pause" && command(.stop) == "pause")
        #expect(command(.next) == "next" && command(.previous) == "prev")
        #expect(command(.seek(offsetUs: 5_000_000)) == "seek 15.0")
        #expect(command(.seek(offsetUs: -60_000_000)) == "seek 0.0")
        let path = MPRISMapping.objectPath(trackID: catalog.id)
        #expect(command(.setPosition(trackPath: path, positionUs: 2_500_000)) == "seek 2.5")
        #expect(command(.setPosition(trackPath: "/org/partyradio/track/other", positionUs: 2_500_000)) == nil)
        #expect(command(.setPosition(trackPath: path, positionUs: 31_000_000)) == nil)  // past its end
        #expect(command(.setVolume(0.5)) == "volume 50")
        #expect(command(.quit) == nil && command(.raise) == nil && command(.openURI("file:///x")) == nil)
    }

    @Test func aListenersCallsAreItsOwn() {
        let view = MPRISView(role: .listener, track: catalog)
        let command = { (call: MPRISCall) in MPRISMapping.command(call, view: view, positionUs: 0) }
        #expect(command(.playPause) == "toggle-mute")
        #expect(command(.play) == "unmute")
        #expect(command(.pause) == "mute" && command(.stop) == "mute")
        #expect(command(.next) == "vote down")
        #expect(command(.previous) == nil && command(.seek(offsetUs: 1)) == nil)
        #expect(command(.setVolume(2)) == "volume 100" && command(.setVolume(.nan)) == nil)
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
