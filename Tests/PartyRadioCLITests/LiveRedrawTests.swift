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
