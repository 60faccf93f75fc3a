import PartyRadioCore
import Testing

@testable import PartyRadioCLI

/// The one redraw every live view uses.
@Suite struct LiveRedrawTests {
    @Test func theFirstFrameDrawsAndLaterOnesReplaceIt() {
        var redraw = LiveRedraw()
        #expect(redraw.frame(["a", "b"], width: 80) == "a\r\nb\r\n")
        // Up two lines, clear below, draw the new block (of any height).
        #expect(redraw.frame(["c", "d", "e"], width: 80) == "\u{1B}[2F\u{1B}[Jc\r\nd\r\ne\r\n")
        #expect(redraw.frame([], width: 80) == "\u{1B}[3F\u{1B}[J")
    }

    @Test func linesAreCutToTheWidthSoTheyNeverWrap() {
        var redraw = LiveRedraw()
        let frame = redraw.frame([String(repeating: "x", count: 100), "short"], width: 20)
        let lines = frame.split(separator: "\r\n")
        #expect(lines[0].count == 19 && lines[0].hasSuffix("…"))
        #expect(lines[1] == "short")
    }
}

/// Network and file text reaches a terminal without control characters.
@Suite struct PlainTextTests {
    @Test func escapeSequencesAndBellsAreDroppedLineBreaksKept() {
        #expect(Render.plain("Evil\u{1B}[2J\u{1B}]0;pwned\u{7}Title\r") == "Evil[2J]0;pwnedTitle")
        #expect(Render.plain("two\nlines 🎸 é") == "two\nlines 🎸 é")
        #expect(Render.plain("👨\u{200D}👩\u{200D}👧") == "👨\u{200D}👩\u{200D}👧")  // joiners are not controls
    }

    @Test func theStationsTableShowsNoControlCharacters() {
        let track = Track(
            id: "1", title: "Bad\u{1B}[31mTitle", artist: "A\u{7}", album: "", durationMs: 1000, source: "x")
        let snapshot = StateSnapshot(
            stationName: "Roof\u{1B}[2Jtop", nowPlaying: track, anchor: .playing(at: 0, djTime: DJTime(ns: 0)),
            tally: Tally(), listenerCount: 0, queueLength: 1, queueIndex: 0, sentAtNs: 0)
        let summary = StationSummary(
            id: StationID(rawValue: 1), serviceName: "Rooftop", address: "10.0.0.1", port: 1,
            advert: StationAdvert(
                stationID: StationID(rawValue: 1), group: StationID(rawValue: 1).multicastGroup,
                publicKey: PublicKey(bytes: [UInt8](repeating: 1, count: 32))!),
            snapshot: snapshot, positionNs: 0)
        let table = StationsCommand.table([summary])
        #expect(!table.unicodeScalars.contains { $0.properties.generalCategory == .control && $0 != "\n" })
        #expect(table.contains("Roof[2Jtop") && table.contains("Bad[31mTitle"))
    }
}
