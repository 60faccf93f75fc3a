import PartyRadioCore
import Synchronization
import Testing

@testable import PartyRadioCLI

/// The one redraw every live view uses, played into a terminal (``VirtualTerminal``): whatever is
/// printed between frames, whatever the frames' heights and the terminal's size do, the screen
/// holds the printed lines in order, each once, and below them the last frame alone, one row per
/// line.
@Suite struct LiveFrameTests {
    /// A screen drawing into `terminal`, at its size.
    struct Harness {
        let terminal: SharedTerminal
        let screen: LiveScreen

        init(width: Int, height: Int, reflows: Bool = true) {
            let terminal = SharedTerminal(width: width, height: height, reflows: reflows)
            self.terminal = terminal
            screen = LiveScreen(
                size: { TerminalSize(columns: terminal.state.width, rows: terminal.state.height) },
                write: { text, _ in terminal.feed(text) })
        }

        var state: VirtualTerminal { terminal.state }
        func resize(width: Int, height: Int) {
            terminal.resize(width: width, height: height)
            screen.resized()
        }
    }

    /// The rows of the frame on screen: those above the cursor, as many as the frame has lines.
    func frameRows(_ terminal: VirtualTerminal, count: Int) -> [String] {
        let screen = terminal.screen
        return Array(screen[max(0, terminal.cursorRow - count)..<terminal.cursorRow])
    }

    /// `row` shows `line`: whole, or its start cut with "…" (nothing else).
    func shows(_ row: String, _ line: String) -> Bool {
        row == line || (row.hasSuffix("…") && line.hasPrefix(row.dropLast()) && row.count < line.count + 1)
    }

    @Test func aFrameRewritesOnlyTheRowsThatChanged() {
        var frame = LiveFrame()
        let size = TerminalSize(columns: 80, rows: 24)
        // Drawn with the terminal's automatic wrap off, and on again after.
        #expect(
            frame.show([LiveSection(["top", "middle", "bottom"])], size: size)
                == "\u{1B}[?7ltop\r\nmiddle\r\nbottom\r\n\u{1B}[?7h")
        let next = frame.show([LiveSection(["top", "changed", "bottom"])], size: size)
        #expect(next.contains("changed") && !next.contains("top") && !next.contains("bottom"))
        #expect(frame.show([LiveSection(["top", "changed", "bottom"])], size: size).isEmpty)  // nothing changed
    }

    @Test func linesPrintedBetweenFramesStayAboveAndNoFrameIsLeftBehind() {
        let harness = Harness(width: 60, height: 20)
        harness.screen.print("Station 'Rooftop' on eth0.")
        harness.screen.show([LiveSection(["HEADER 1", "progress 0:01"])])
        harness.screen.print("Announced as 'Rooftop'.")
        harness.screen.show([LiveSection(["HEADER 2", "progress 0:02", "listening: ann"])])  // taller
        harness.screen.print("Listener joined: ann.")
        harness.screen.show([LiveSection(["HEADER 3"])])  // shorter
        let terminal = harness.state
        #expect(terminal.allRows.filter { $0.contains("HEADER") } == ["HEADER 3"])
        #expect(
            terminal.lines == [
                "Station 'Rooftop' on eth0.", "Announced as 'Rooftop'.", "Listener joined: ann.", "HEADER 3",
            ])
        #expect(terminal.cursorRow == 4)
    }

    @Test func aLineWiderThanTheTerminalIsCutNotWrapped() {
        let harness = Harness(width: 20, height: 10)
        let long = "HEADER " + String(repeating: "x", count: 40)
        harness.screen.show([LiveSection([long, "界界界界界界界界界界界界", "short"])])
        let rows = frameRows(harness.state, count: 3)
        #expect(rows.count == 3 && shows(rows[0], long) && rows[0].count <= 19)
        #expect(rows[1].hasSuffix("…") && rows[1].filter { $0 == "界" }.count <= 9)  // 2 columns each
        #expect(rows[2] == "short")
        #expect(harness.state.allRows.filter { $0.contains("HEADER") }.count == 1)
    }

    @Test func aResizeDrawsTheViewAgainWithNoStaleRows() {
        for reflows in [true, false] {
            let harness = Harness(width: 70, height: 20, reflows: reflows)
            harness.screen.print("before the view")
            let lines = ["HEADER " + String(repeating: "=", count: 60), String(repeating: "-", count: 65), "end"]
            harness.screen.show([LiveSection(lines)])
            harness.resize(width: 25, height: 20)  // each long line reflows into three rows
            harness.screen.print("after the resize")
            harness.resize(width: 90, height: 12)
            let terminal = harness.state
            #expect(terminal.allRows.filter { $0.contains("HEADER") }.count == 1, "reflows: \(reflows)")
            #expect(terminal.allRows.filter { $0.contains("end") } == ["end"], "reflows: \(reflows)")
            #expect(terminal.lines.last == "end" && terminal.lines.contains("after the resize"))
            #expect(frameRows(terminal, count: 3).first.map { shows($0, lines[0]) } == true)
        }
    }

    @Test func aViewTallerThanTheTerminalGivesUpItsQRCodeThenItsLastLines() {
        let header = LiveSection(["HEADER", "track"])
        let qr = LiveSection(["link"] + Array(repeating: "██  ██", count: 10), compact: ["link"])
        let upNext = LiveSection(["up next:", "a", "b", "c"], compact: ["up next:", "a"])
        let tall = TerminalSize(columns: 80, rows: 40)
        #expect(LiveFrame.layout([header, qr, upNext], size: tall).count == 2 + 11 + 4)
        let short = LiveFrame.layout([header, qr, upNext], size: TerminalSize(columns: 80, rows: 10))
        #expect(short == ["HEADER", "track", "link", "up next:", "a"])  // the code goes only after the list is short
        let tiny = LiveFrame.layout([header, qr, upNext], size: TerminalSize(columns: 80, rows: 4))
        #expect(tiny.count == 3 && tiny[0] == "HEADER" && tiny[2].hasPrefix("…"))
    }

    /// A resize racing a redraw: the frame was made for the old width, and the terminal reads it
    /// after it narrowed (tmux reflows at once, the bytes were still on their way). Its lines are
    /// cut at the new edge, not wrapped into rows the next erase does not count: the redraw for
    /// the new size leaves no stale row (seen in tmux: a stations table's header twice). What
    /// cannot be known is how far the late frame moved the cursor: the erase may take a printed
    /// line above the view with it, in this race only.
    @Test func aFrameReadAfterTheTerminalNarrowedLeavesNoStaleRow() {
        let terminal = SharedTerminal(width: 80, height: 20)
        var frame = LiveFrame()
        let wide = TerminalSize(columns: 80, rows: 20)
        let row = String(repeating: "r", count: 70)
        terminal.feed("log line\r\n")
        terminal.feed(frame.show([LiveSection(["HEADER 1 " + row, "second " + row])], size: wide))
        let late = frame.show([LiveSection(["HEADER 2 " + row, "second " + row, "third " + row])], size: wide)
        terminal.resize(width: 40, height: 20)
        terminal.feed(late)
        terminal.feed(frame.show(frame.sections, size: TerminalSize(columns: 40, rows: 20)))
        let rows = terminal.state.allRows
        #expect(rows.filter { $0.contains("HEADER") }.count == 1, "\(rows)")
        #expect(rows.filter { $0.hasPrefix("third") || $0.hasPrefix("second") }.count == 2, "\(rows)")
    }

    /// Random frames, prints and resizes (seeded): after each step the screen holds every printed
    /// line once, in order (a terminal that cuts lines on a resize may lose older ones), and the
    /// last frame below them, once; so does the scrollback, unless a resize made the view, its rows
    /// reflowed, taller than the terminal (the terminal itself then pushed its top rows there).
    @Test(arguments: [true, false]) func anySequenceLeavesOneFrameBelowThePrintedLines(reflows: Bool) {
        var random = SplitMix(seed: reflows ? 30 : 31)
        let harness = Harness(width: 50, height: 16, reflows: reflows)
        var printed: [String] = []
        var frame: [String] = []
        var pushedUp = false
        for step in 0..<300 {
            switch random.next() % 10 {
            case 0...4:
                let extra = (0..<(random.next() % 6)).map { index in
                    "row \(index) " + String(repeating: index % 2 == 0 ? "界" : "y", count: Int(random.next() % 40))
                }
                frame = ["HEADER \(step)-" + String(repeating: "h", count: Int(random.next() % 60))] + extra
                harness.screen.show([LiveSection(frame)])
            case 5...7:
                let line = "log \(step) " + String(repeating: "z", count: Int(random.next() % 90))
                printed.append(line)
                harness.screen.print(line)
            default:
                let (width, height) = (12 + Int(random.next() % 70), 8 + Int(random.next() % 20))
                let before = harness.state
                let drawn = before.screenWidths[max(0, before.cursorRow - frame.count)..<before.cursorRow]
                let reflowed = drawn.reduce(0) { $0 + max(1, ($1 + width - 1) / width) }
                pushedUp = pushedUp || (reflows && reflowed + 1 > height)
                harness.resize(width: width, height: height)
            }
            let terminal = harness.state
            let headers = terminal.screen.filter { $0.contains("HEADER") }
            #expect(headers.count == (frame.isEmpty ? 0 : 1), "step \(step): \(terminal.screen)")
            if !pushedUp {
                #expect(terminal.allRows.filter { $0.contains("HEADER") }.count == headers.count, "step \(step)")
            }
            let logs = terminal.lines.filter { $0.hasPrefix("log ") }
            if reflows {
                #expect(logs == printed, "step \(step)")
            } else {
                // Cut lines lose their ends (and a line cut in two its second row): by their numbers.
                let numbers = logs.compactMap { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } }
                #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count, "step \(step)")
            }
            let rows = frameRows(terminal, count: frame.count)
            #expect(rows.first.map { shows($0, frame[0]) } ?? frame.isEmpty, "step \(step): \(terminal.screen)")
            if headers.count != (frame.isEmpty ? 0 : 1) { break }
        }
    }
}

/// A small seeded generator (SplitMix64), so a failing sequence can be run again.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Columns a line takes, for cutting it to a terminal's width.
@Suite struct TextWidthTests {
    @Test func wideCharactersTakeTwoColumnsMarksNoneAndEscapesNone() {
        #expect(TextWidth.columns("abc") == 3)
        #expect(TextWidth.columns("a界🎸") == 5)
        #expect(TextWidth.columns("e\u{301}") == 1)  // e and a combining accent
        #expect(TextWidth.columns("❤\u{FE0F}") == 2)
        #expect(TextWidth.columns("\u{1B}[1mbold\u{1B}[0m") == 4)
        #expect(TextWidth.columns("▶ — █▀▄") == 7)
    }

    @Test func aCutKeepsWholeCharactersAndEndsAColour() {
        #expect(TextWidth.fit("short", columns: 10) == "short")
        #expect(TextWidth.fit("abcdefghij", columns: 5) == "abcd…")
        #expect(TextWidth.fit("界界界界", columns: 6) == "界界…")
        let cut = TextWidth.fit("\u{1B}[32m12345678\u{1B}[0m", columns: 4)
        #expect(cut == "\u{1B}[32m123…\u{1B}[0m")
    }
}

/// Network and file text reaches a terminal without control characters.
@Suite struct PlainTextTests {
    @Test func escapeSequencesAndBellsAreDroppedLineBreaksKept() {
        // Whole sequences go, not their ESC alone; a carriage return becomes a space.
        #expect(Render.plain("Evil\u{1B}[2J\u{1B}]0;pwned\u{7}Title\r") == "EvilTitle ")
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
        #expect(table.contains("Rooftop") && table.contains("BadTitle"))
    }
}
