import PartyRadioCore
import Synchronization
import Testing

@testable import PartyRadioCLI

/// The DJ's and the listener's live views, drawn into a terminal (``VirtualTerminal``, 80 × 24, the
/// size a test console's screen has).
@Suite struct LiveViewTests {
    /// A printer on a terminal console whose stdout feeds `terminal`.
    func printer(role: String, environment: [String: String] = [:]) -> (EventPrinter, SharedTerminal) {
        let terminal = SharedTerminal(width: 80, height: 24)
        let console = Console(isTerminal: true) { stream, text in
            if stream == .out { terminal.feed(text) }
        }
        return (EventPrinter(jsonEvents: false, role: role, console: console, environment: environment), terminal)
    }

    func snapshot(track: Int, up: UInt32 = 0, down: UInt32 = 0, listeners: UInt32 = 1) -> StateSnapshot {
        let tracks = [
            Track(id: "t1", title: "First", artist: "Band", album: "", durationMs: 30_000, source: "x"),
            Track(id: "t2", title: "Second", artist: "Band", album: "", durationMs: 30_000, source: "y"),
        ]
        return StateSnapshot(
            stationName: "Rooftop", nowPlaying: tracks[track], anchor: .playing(at: 0, djTime: DJTime(ns: 0)),
            tally: Tally(up: up, down: down), listenerCount: listeners, queueLength: 6, queueIndex: UInt32(track),
            sentAtNs: 0)
    }

    func headers(_ terminal: SharedTerminal) -> [String] {
        terminal.state.allRows.filter { $0.contains("Rooftop") && $0.contains("listening  track") }
    }

    /// The DJ's station (ID, key, addresses, the name it is announced as) is in the view, below the
    /// keys and above the QR code, not printed above the view once it has started; the keys take
    /// two rows, each whole on 80 columns; and the view is drawn once, in the scrollback too (the
    /// terminal keeps a copy of its screen when erased from its top left corner, as tmux does).
    @Test func theDJsStationIsInTheViewAboveTheQRCodeAndTheViewIsDrawnOnce() {
        let (printer, terminal) = printer(role: "dj")
        printer.report(.webPage(url: "http://10.0.0.1:8080/", djURL: "http://10.0.0.1:8080/#dj=secret"))
        printer.report(
            .stationStarted(
                name: "Rooftop", id: StationID(rawValue: 7), interface: "eth0", address: "10.0.0.1", port: 4000,
                group: StationID(rawValue: 7).multicastGroup, fingerprint: "ab:cd", queueLength: 6))
        printer.report(.notice("Carrying on from the saved station."))
        printer.report(.state(snapshot(track: 0, listeners: 0), positionNs: 0, change: .track))
        #expect(terminal.state.screen.contains { $0.contains("announcing…") })
        printer.report(.stationPublished(name: "Rooftop"))
        printer.report(.listenersChanged(count: 1, joined: "ann", left: false))
        printer.report(.roster(Roster(total: 1, entries: [.init(name: "ann", listeningForMs: 1000)])))
        printer.report(.state(snapshot(track: 1), positionNs: 0, change: .track))
        let rows = terminal.state.allRows
        #expect(headers(terminal).count == 1, "\(rows)")
        #expect(rows.filter { $0.contains("guests: http://10.0.0.1:8080/") }.count == 1, "\(rows)")
        #expect(!rows.contains { $0.hasPrefix("Station 'Rooftop'") || $0.hasPrefix("Announced as") }, "\(rows)")
        let header = rows.firstIndex { $0.contains("listening  track 2/6") }
        let keys = rows.firstIndex { $0.contains("keys: n next") }
        let moreKeys = rows.firstIndex { $0.contains("q quit") }
        let station = rows.firstIndex { $0.contains("station ID \(StationID(rawValue: 7).hex)") && $0.contains("eth0") }
        let announced = rows.firstIndex { $0.contains("announced as 'Rooftop' on the local network") }
        let guests = rows.firstIndex { $0.contains("guests: http://10.0.0.1:8080/") }
        #expect(
            header != nil && keys != nil && moreKeys != nil && station != nil && announced != nil && guests != nil,
            "\(rows)")
        if let header, let keys, let moreKeys, let station, let announced, let guests {
            #expect(
                header < keys && keys + 1 == moreKeys && moreKeys < station && station < announced
                    && announced < guests, "\(rows)")
            #expect(
                rows[keys].hasSuffix("r repeat (all)  k speaker") && rows[moreKeys].hasSuffix("][ M speaker  q quit"),
                "\(rows)")
        }
        #expect(rows.contains { $0.hasPrefix("Listener joined: ann") })
        #expect(rows.contains { $0.hasPrefix("Carrying on") })
    }

    /// The DJ sends who listens when someone joins or leaves; the time each has listened goes on
    /// between (the view added none, and every guest stayed at "0 s").
    @Test func listeningTimesGoOnBetweenRosters() {
        let roster = Roster(
            total: 2, entries: [.init(name: "ann", listeningForMs: 1_500), .init(name: "bob", listeningForMs: 0)])
        #expect(Render.listeningLine(roster) == "   listening: ann (1 s), bob (0 s)")
        #expect(Render.listeningLine(roster, plusMs: 59_000) == "   listening: ann (1 min), bob (59 s)")
    }

    @Test func aListenerSeesItsKeysItsVoteAndItsMute() {
        let (printer, terminal) = printer(role: "listener")
        printer.report(.state(snapshot(track: 0), positionNs: 0, change: .track))
        printer.report(.listenerSettings(ListenerSettings(muted: false, volume: 100)))
        var screen = terminal.state.screen
        #expect(screen.contains { $0.contains("u vote up") && $0.contains("d down") && $0.contains("c clear") })
        #expect(screen.contains { $0.contains("your vote: none") })
        printer.report(.notice("Voted up on “First”: 1 up, 0 down."))
        printer.report(.listenerSettings(ListenerSettings(muted: true, volume: 70, vote: .up, voteTrackID: "t1")))
        printer.report(.state(snapshot(track: 0, up: 1), positionNs: 1_000_000_000, change: .votes))
        screen = terminal.state.screen
        #expect(screen.contains { $0.contains("1 up") })
        #expect(
            screen.contains { $0.contains("your vote:  up ") && $0.contains("volume 70") && $0.contains("muted here") })
        #expect(screen.contains { $0.contains("keys:") && $0.contains("m unmute") })
        // The DJ resets votes on a new track: the view shows none there.
        printer.report(.state(snapshot(track: 1), positionNs: 0, change: .track))
        screen = terminal.state.screen
        #expect(screen.contains { $0.contains("your vote: none") })
        #expect(headers(terminal).count == 1)
        #expect(terminal.state.lines.filter { $0.hasPrefix("Voted up") }.count == 1)
    }

    @Test func coloursUnlessNoColorAndPlainLinesOffATerminal() {
        let colored = Mutex("")
        let console = Console(isTerminal: true) { _, text in colored.withLock { $0 += text } }
        EventPrinter(jsonEvents: false, role: "listener", console: console, environment: [:])
            .report(.state(snapshot(track: 0, up: 1), positionNs: 0, change: .votes))
        #expect(colored.withLock { $0 }.contains("\u{1B}[32m"))

        let plain = Mutex("")
        let noColor = Console(isTerminal: true) { _, text in plain.withLock { $0 += text } }
        EventPrinter(jsonEvents: false, role: "listener", console: noColor, environment: ["NO_COLOR": "1"])
            .report(.state(snapshot(track: 0, up: 1), positionNs: 0, change: .votes))
        let text = plain.withLock { $0 }
        #expect(text.contains("1 up"))
        for code in ["0", "1", "2", "7", "31", "32"] { #expect(!text.contains("\u{1B}[\(code)m"), "\(code)") }

        for (isTerminal, environment) in [(false, [String: String]()), (true, ["TERM": "dumb"])] {
            let lines = Mutex("")
            let pipe = Console(isTerminal: isTerminal) { _, text in lines.withLock { $0 += text } }
            let printer = EventPrinter(jsonEvents: false, role: "listener", console: pipe, environment: environment)
            printer.report(.state(snapshot(track: 0), positionNs: 0, change: .track))
            printer.report(.notice("Muted here (the station plays on)."))
            let out = lines.withLock { $0 }
            #expect(!out.contains("\u{1B}"), "\(environment)")
            #expect(out.split(separator: "\n").count == 2 && out.hasPrefix("Playing: First — Band"), "\(out)")
        }
    }
}
