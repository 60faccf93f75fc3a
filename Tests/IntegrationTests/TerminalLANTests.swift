import Foundation
import Testing

private let hasTmux = FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux")

/// A tmux server on one testbed host (its socket in the testbed's state directory): windows that
/// run a command in a real terminal, typed into with `send-keys` and read with `capture-pane`.
struct Tmux {
    let lan: Testbed
    let host: Int
    let socket: String
    let config: String
    /// The server, in the foreground (`-D`): a daemon would keep `run`'s descriptors open.
    let server: TestbedProcess

    init(_ lan: Testbed, host: Int) throws {
        self.lan = lan
        self.host = host
        let directory = lan.stateDir("tmux\(host)")
        socket = "\(directory)/socket"
        config = "\(directory)/tmux.conf"
        // A pane whose command ended stays, so a failure shows what it printed last.
        try "set -g remain-on-exit on\nset -g history-limit 10000\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        server = try lan.spawn(
            host: host, ["/usr/bin/tmux", "-u", "-S", socket, "-f", config, "-D"], env: ["LANG": "C.UTF-8"])
        let deadline = ContinuousClock.now + .seconds(10)
        while !FileManager.default.fileExists(atPath: socket) {
            guard ContinuousClock.now < deadline, server.isRunning else {
                throw TestbedError("tmux did not start on host \(host): \(server.text(.stderr))")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    @discardableResult
    func tmux(_ args: [String]) throws -> String {
        let result = try lan.run(
            host: host, ["/usr/bin/tmux", "-u", "-S", socket, "-f", config] + args, env: ["LANG": "C.UTF-8"])
        guard result.exit == 0 else { throw TestbedError("tmux \(args) on host \(host): \(result.stderr)") }
        return result.stdout
    }

    /// A detached window `name`, `columns` × `rows`, running `command` (a shell command line).
    func start(_ name: String, columns: Int, rows: Int, _ command: String) throws {
        try tmux(["new-session", "-d", "-s", name, "-x", String(columns), "-y", String(rows), command])
    }

    /// Types `keys` literally, as a user at that terminal.
    func type(_ name: String, _ keys: String) throws { try tmux(["send-keys", "-t", name, "-l", keys]) }

    /// The rows the window shows now; with `history`, the scrollback above them first; with
    /// `joined`, a row the terminal wrapped joined to the next (tmux's own record of wraps); with
    /// `escapes`, the colours and attributes as escape sequences.
    func capture(_ name: String, history: Bool = false, joined: Bool = false, escapes: Bool = false) throws
        -> [String]
    {
        let text = try tmux(
            ["capture-pane", "-p", "-t", name] + (history ? ["-S", "-"] : []) + (joined ? ["-J"] : [])
                + (escapes ? ["-e"] : []))
        return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// Closes the window as a user closes a terminal: its processes get a hang-up.
    func close(_ name: String) throws { try tmux(["kill-session", "-t", name]) }

    func resize(_ name: String, columns: Int, rows: Int) throws {
        try tmux(["resize-window", "-t", name, "-x", String(columns), "-y", String(rows)])
    }

    /// Waits until the window shows a row for which `matches` holds; returns the screen.
    @discardableResult
    func waitFor(
        _ name: String, _ what: String, timeout: Duration = .seconds(20), _ matches: (String) -> Bool
    ) throws -> [String] {
        let deadline = ContinuousClock.now + timeout
        var screen: [String] = []
        while ContinuousClock.now < deadline {
            screen = try capture(name)
            if screen.contains(where: matches) { return screen }
            Thread.sleep(forTimeInterval: 0.2)
        }
        throw TestbedError(
            "window \(name) on host \(host) never showed \(what) within \(timeout):\n" + screen.joined(separator: "\n"))
    }
}

/// The live views in a real terminal (issue 30): `dj` and `listen` in tmux on testbed hosts that
/// play into a real sound server (PulseAudio with a null sink), across a track change, a listener
/// joining, voting from its keyboard and leaving, and resizes, narrower than the views' lines too.
/// What holds throughout: the view is on screen once (one header row, one keys row), the lines
/// printed while it runs stay above it, and no line wraps.
@Suite(
    "Live views in tmux", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"),
    .enabled(if: hasTmux, "tmux is not installed (scripts/ensure-packages.sh --for test)"),
    .enabled(if: hasPulseAudio, "PulseAudio is not installed (scripts/ensure-packages.sh --for test)"))
struct TerminalLANTests {
    /// The header row of a view of station Rooftop.
    static func isHeader(_ row: String) -> Bool { row.hasPrefix("Rooftop") && row.contains(" listening  track ") }

    /// "3/6" of a header row.
    static func track(_ header: String?) -> String? {
        header.flatMap { $0.components(separatedBy: "track ").last }
    }

    /// The view is on screen once: one header and one first keys row, and no row of the view
    /// (from its header down) wrapped by the terminal: tmux's capture with wrapped rows joined
    /// shows the same rows. At 80 columns or more, every key shows ("q quit" is the last).
    func expectOneView(
        _ tmux: Tmux, _ window: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let screen = try tmux.capture(window)
        let shown = screen.joined(separator: "\n")
        #expect(screen.filter(Self.isHeader).count == 1, "\(what): headers\n\(shown)", sourceLocation: sourceLocation)
        #expect(
            screen.filter { $0.contains("keys:") }.count == 1, "\(what): keys rows\n\(shown)",
            sourceLocation: sourceLocation)
        // Both captures hold the rows below the header alike unless one of them is a wrap (the
        // progress may move between them, so the rows are counted, not compared).
        func viewRows(_ rows: [String]) -> [String] {
            guard let header = rows.firstIndex(where: Self.isHeader),
                let last = rows.lastIndex(where: {
                    !$0.isEmpty && !$0.hasPrefix("EXITED") && !$0.hasPrefix("Pane is dead")
                })
            else { return [] }
            return header <= last ? Array(rows[header...last]) : []
        }
        let view = viewRows(screen)
        let joined = viewRows(try tmux.capture(window, joined: true))
        #expect(
            view.count == joined.count, "\(what): a row of the view wrapped\n\(joined.joined(separator: "\n"))",
            sourceLocation: sourceLocation)
        let columns =
            Int(
                try tmux.tmux(["display", "-p", "-t", window, "#{window_width}"]).trimmingCharacters(
                    in: .whitespacesAndNewlines)) ?? 0
        if columns >= 80 {
            #expect(
                view.contains { $0.contains("q quit") }, "\(what): keys cut at \(columns) columns\n\(shown)",
                sourceLocation: sourceLocation)
        }
    }

    /// `stations --watch` shows its table once: one header row, one row for Rooftop.
    func expectOneTable(_ tmux: Tmux, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let screen = try tmux.capture("watch")
        let shown = screen.joined(separator: "\n")
        #expect(
            screen.filter { $0.hasPrefix("STATION ") }.count == 1, "stations --watch, \(what)\n\(shown)",
            sourceLocation: sourceLocation)
        #expect(
            screen.filter { $0.hasPrefix("Rooftop ") }.count == 1, "stations --watch, \(what)\n\(shown)",
            sourceLocation: sourceLocation)
    }

    @Test(
        "dj, listen and stations --watch redraw in place in tmux: a track change, a listener joining, voting and leaving, resizes, NO_COLOR, a pipe, a closed window"
    )
    func liveViewsInTmux() throws {
        let lan = try Testbed(hosts: 2)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        var servers: [TestbedProcess] = []
        defer { for server in servers { server.kill() } }
        var terminals: [Tmux] = []
        defer { for terminal in terminals { terminal.server.kill() } }
        var sound: [Int: String] = [:]
        for host in [1, 2] {
            let (server, env) = try lan.startSoundServer(host: host)
            servers.append(server)
            sound[host] = env["PULSE_SERVER"]
        }
        let binary = Testbed.partyradioBinary
        let djTmux = try Tmux(lan, host: 1)
        terminals.append(djTmux)
        // As a user on a desktop with PulseAudio starts it: no audio option, PULSE_SERVER set; and
        // NO_COLOR, whose view has no colour.
        try djTmux.start(
            "dj", columns: 110, rows: 40,
            "env NO_COLOR=1 PULSE_SERVER=\(sound[1] ?? "") \(binary) dj --name Rooftop "
                + "--state-dir \(lan.stateDir("dj")); echo EXITED $?")
        var dj = try djTmux.waitFor("dj", "the DJ's view", timeout: .seconds(40), Self.isHeader)
        try djTmux.waitFor("dj", "the guests' QR code") { $0.contains("█") }
        try djTmux.waitFor("dj", "the station announced") { $0.contains("announced as 'Rooftop' on the local network") }

        // A listener joins, from a terminal of its own. Its player tries PipeWire and ALSA first,
        // which have no server here, and ALSA a configuration without a default device: ALSA
        // complains on descriptor 2 from C (where libasound2-plugins is installed, ALSA's default
        // would otherwise be the running PulseAudio, and PipeWire's libraries are quiet once its
        // configuration is installed). Those lines must go above the view, not into it.
        let guestTmux = try Tmux(lan, host: 2)
        terminals.append(guestTmux)
        let alsaConfig = lan.stateDir("ann") + "-alsa.conf"
        try "# no PCM defined: opening ALSA's default fails, loudly\n".write(
            toFile: alsaConfig, atomically: true, encoding: .utf8)
        try guestTmux.start(
            "listen", columns: 110, rows: 40,
            "env -u NO_COLOR PULSE_SERVER=\(sound[2] ?? "") ALSA_CONFIG_PATH=\(alsaConfig) "
                + "\(binary) listen Rooftop --as Ann "
                + "--audio-driver pipewire,alsa,pulse "
                + "--state-dir \(lan.stateDir("ann")); echo EXITED $?")
        var guest = try guestTmux.waitFor("listen", "the listener's view", Self.isHeader)
        // And `stations --watch` beside it, on the same host.
        try guestTmux.start(
            "watch", columns: 110, rows: 40,
            "\(binary) stations --watch --state-dir \(lan.stateDir("watch")); echo EXITED $?")
        try guestTmux.waitFor("watch", "the stations table") { $0.hasPrefix("Rooftop ") }
        dj = try djTmux.waitFor("dj", "the listener joining") { $0.hasPrefix("Rooftop  1 listening") }
        // The listener plays (its player opened the sound server), so the libraries have spoken.
        guest = try guestTmux.waitFor("listen", "the track playing", timeout: .seconds(30)) {
            $0.contains("] 0:0") && !$0.contains("] 0:00 ")
        }
        Thread.sleep(forTimeInterval: 2)
        try expectOneView(djTmux, "dj", "DJ, a listener joined")
        try expectOneView(guestTmux, "listen", "listener, tuned in")
        // The station's lines are in the DJ's view, below the keys and above the QR code; nothing
        // of the view was printed above it, or left in the scrollback.
        let djHistory = try djTmux.capture("dj", history: true)
        let shownHistory = djHistory.joined(separator: "\n")
        #expect(djHistory.filter(Self.isHeader).count == 1, "the DJ's scrollback\n\(shownHistory)")
        #expect(
            !djHistory.contains { $0.hasPrefix("Station 'Rooftop'") || $0.hasPrefix("Announced as") }, "\(shownHistory)"
        )
        let keys = djHistory.firstIndex { $0.contains("keys: n next") }
        let station = djHistory.firstIndex { $0.contains("station ID ") && $0.contains(" on eth0 ") }
        let code = djHistory.firstIndex { $0.contains("█") }
        #expect(keys != nil && station != nil && code != nil, "\(shownHistory)")
        if let keys, let station, let code { #expect(keys < station && station < code, "\(shownHistory)") }
        // NO_COLOR: no colour in the DJ's view; the listener's has its colours.
        let escapes = try djTmux.capture("dj", escapes: true).joined(separator: "\n")
        for colour in ["\u{1B}[32m", "\u{1B}[31m", "\u{1B}[1m", "\u{1B}[2m"] {
            #expect(!escapes.contains(colour), "NO_COLOR, yet \(colour.debugDescription) in the DJ's view")
        }
        #expect(
            try guestTmux.capture("listen", escapes: true).joined().contains("\u{1B}[32m"), "the listener's colours")

        // A track change, from the DJ's keyboard.
        let playing = Self.track(dj.first(where: Self.isHeader))
        try djTmux.type("dj", "n")
        dj = try djTmux.waitFor("dj", "the next track") { Self.isHeader($0) && Self.track($0) != playing }
        guest = try guestTmux.waitFor("listen", "the next track on the listener") {
            Self.isHeader($0) && Self.track($0) != playing
        }
        try expectOneView(djTmux, "dj", "DJ, after a track change")
        try expectOneView(guestTmux, "listen", "listener, after a track change")
        try expectOneTable(guestTmux, "after a track change")
        // Nothing stale in the scrollback either (no resize has pushed the view up yet).
        #expect(try djTmux.capture("dj", history: true).filter(Self.isHeader).count == 1, "the DJ's scrollback")
        let listenHistory = try guestTmux.capture("listen", history: true)
        #expect(listenHistory.filter(Self.isHeader).count == 1, "\(listenHistory.joined(separator: "\n"))")

        // A vote from the listener's keyboard: its view shows its vote, the DJ's the count; then
        // it takes it back.
        guest = try guestTmux.waitFor("listen", "the listener's keys") { $0.contains("u vote up") }
        try guestTmux.type("listen", "u")
        guest = try guestTmux.waitFor("listen", "the listener's vote") { $0.contains("your vote:  up ") }
        dj = try djTmux.waitFor("dj", "the vote on the DJ") { $0.contains("votes") && $0.contains("1 up") }
        try expectOneView(guestTmux, "listen", "listener, after its vote")
        try expectOneView(djTmux, "dj", "DJ, after the vote")
        try guestTmux.type("listen", "c")
        guest = try guestTmux.waitFor("listen", "the vote cleared") { $0.contains("your vote: none") }
        dj = try djTmux.waitFor("dj", "the vote cleared on the DJ") { $0.contains("votes") && $0.contains("0 up") }
        // Its own volume and mute.
        try guestTmux.type("listen", "-")
        guest = try guestTmux.waitFor("listen", "the listener's volume") { $0.contains("volume 90") }
        try guestTmux.type("listen", "m")
        guest = try guestTmux.waitFor("listen", "the listener muted") { $0.contains("muted here") }
        try guestTmux.type("listen", "m")
        guest = try guestTmux.waitFor("listen", "the listener unmuted") { $0.contains("m mute ") }
        #expect(!guest.contains { $0.contains("muted here") }, "\(guest.joined(separator: "\n"))")
        try expectOneView(guestTmux, "listen", "listener, after volume and mute")
        // The DJ's volume, shown in its keys.
        try djTmux.type("dj", "-")
        try djTmux.waitFor("dj", "the DJ's volume") { $0.contains("+/- volume (90)") }

        // Resizes: shorter, back, narrower, narrower than the keys row, back, to 60 columns, back.
        // (tmux keeps as many rows when it reflows lines that no longer fit: each narrowing pushes
        // the rows the reflow added off the top into the scrollback, and a taller window later
        // brings them back above the view, out of any program's reach: docs/ARCHITECTURE.md.)
        for (columns, rows) in [(110, 32), (110, 40), (64, 40), (44, 40), (110, 40), (60, 40), (110, 40)] {
            try djTmux.resize("dj", columns: columns, rows: rows)
            try guestTmux.resize("listen", columns: columns, rows: rows)
            Thread.sleep(forTimeInterval: 1.5)  // a progress redraw or two as well
            try expectOneView(djTmux, "dj", "DJ, \(columns)×\(rows)")
            try expectOneView(guestTmux, "listen", "listener, \(columns)×\(rows)")
            try guestTmux.resize("watch", columns: columns, rows: rows)
            Thread.sleep(forTimeInterval: 1)
            try expectOneTable(guestTmux, "\(columns)×\(rows)")
            guest = try guestTmux.capture("listen")
            #expect(guest.contains { $0.contains("your vote:") }, "\(guest.joined(separator: "\n"))")
        }

        // The listener leaves with its q key; the DJ's view follows.
        try guestTmux.type("listen", "q")
        try guestTmux.waitFor("listen", "the listener ending") { $0.hasPrefix("EXITED 0") }
        dj = try djTmux.waitFor("dj", "the listener leaving") { $0.hasPrefix("Rooftop  0 listening") }
        try expectOneView(djTmux, "dj", "DJ, the listener left")
        #expect(dj.contains { $0.hasPrefix("A listener left") }, "\(dj.joined(separator: "\n"))")
        // What the libraries said on descriptor 2 went above the view (and the view stayed whole).
        let listenerLines = try guestTmux.capture("listen", history: true).joined(separator: "\n")
        #expect(listenerLines.contains("ALSA lib "), "\(listenerLines)")

        // Another listener with its stdout in a file: plain lines there, its keys still work.
        let file = lan.stateDir("bob") + "/out.txt"
        try guestTmux.start(
            "piped", columns: 110, rows: 40,
            "env PULSE_SERVER=\(sound[2] ?? "") \(binary) listen Rooftop --as Bob --audio-driver pulse "
                + "--state-dir \(lan.stateDir("bob")) > \(file); echo EXITED $?")
        try djTmux.waitFor("dj", "the second listener") { $0.hasPrefix("Rooftop  1 listening") }
        func fileText() -> String { (try? String(contentsOfFile: file, encoding: .utf8)) ?? "" }
        try waitForText("the piped listener playing", fileText) { $0.contains("Playing: ") }
        try guestTmux.type("piped", "d")
        try waitForText("the piped listener's vote", fileText) { $0.contains("Voted down") }
        try djTmux.waitFor("dj", "the down vote on the DJ") { $0.contains("votes") && $0.contains("1 down") }
        #expect(!fileText().contains("\u{1B}"), "escape sequences in a file: \(fileText())")

        // The DJ's window is closed: the station goes off the air (a DJ left playing unseen would
        // keep its name on the network), and its listener hears so.
        try djTmux.close("dj")
        func watchText() -> String { (try? guestTmux.capture("watch").joined(separator: "\n")) ?? "" }
        try waitForText("the station gone from the watch", watchText) { !$0.contains("Rooftop ") }
        try waitForText("the piped listener told", fileText) { $0.contains("off the air") }
    }

    /// Waits until `read` gives text for which `matches` holds.
    func waitForText(
        _ what: String, _ read: () -> String, timeout: Duration = .seconds(20), _ matches: (String) -> Bool
    ) throws {
        let deadline = ContinuousClock.now + timeout
        var text = read()
        while !matches(text) {
            guard ContinuousClock.now < deadline else {
                throw TestbedError("never \(what) within \(timeout):\n\(text)")
            }
            Thread.sleep(forTimeInterval: 0.2)
            text = read()
        }
    }
}
