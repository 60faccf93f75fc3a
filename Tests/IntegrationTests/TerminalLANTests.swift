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

    /// The rows the window shows now; with `history`, the scrollback above them first.
    func capture(_ name: String, history: Bool = false) throws -> [String] {
        let text = try tmux(["capture-pane", "-p", "-t", name] + (history ? ["-S", "-"] : []))
        return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

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

    /// The view is on screen once: one header, one keys row, no row that is the wrapped end of
    /// another (the keys row ends with "q quit": that text on a row of its own is a wrap).
    func expectOneView(_ screen: [String], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let shown = screen.joined(separator: "\n")
        #expect(screen.filter(Self.isHeader).count == 1, "\(what): headers\n\(shown)", sourceLocation: sourceLocation)
        #expect(
            screen.filter { $0.contains("keys:") }.count == 1, "\(what): keys rows\n\(shown)",
            sourceLocation: sourceLocation)
        #expect(
            !screen.contains { $0.contains("q quit") && !$0.contains("keys:") }, "\(what): a wrapped row\n\(shown)",
            sourceLocation: sourceLocation)
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
        "dj, listen and stations --watch redraw in place in tmux: a track change, a listener joining, voting and leaving, resizes"
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
        try djTmux.start(
            "dj", columns: 110, rows: 40,
            "env PULSE_SERVER=\(sound[1] ?? "") \(binary) dj --name Rooftop --audio-driver pulse "
                + "--state-dir \(lan.stateDir("dj")); echo EXITED $?")
        var dj = try djTmux.waitFor("dj", "the DJ's view", timeout: .seconds(40), Self.isHeader)
        try djTmux.waitFor("dj", "the guests' QR code") { $0.contains("█") }

        // A listener joins, from a terminal of its own.
        let guestTmux = try Tmux(lan, host: 2)
        terminals.append(guestTmux)
        try guestTmux.start(
            "listen", columns: 110, rows: 40,
            "env PULSE_SERVER=\(sound[2] ?? "") \(binary) listen Rooftop --as Ann --audio-driver pulse "
                + "--state-dir \(lan.stateDir("ann")); echo EXITED $?")
        var guest = try guestTmux.waitFor("listen", "the listener's view", Self.isHeader)
        // And `stations --watch` beside it, on the same host.
        try guestTmux.start(
            "watch", columns: 110, rows: 40,
            "\(binary) stations --watch --state-dir \(lan.stateDir("watch")); echo EXITED $?")
        try guestTmux.waitFor("watch", "the stations table") { $0.hasPrefix("Rooftop ") }
        dj = try djTmux.waitFor("dj", "the listener joining") { $0.hasPrefix("Rooftop  1 listening") }
        expectOneView(dj, "DJ, a listener joined")
        expectOneView(guest, "listener, tuned in")
        // The status lines are above the view: the station's and its announcement above the header,
        // and the header above the QR code.
        let djHistory = try djTmux.capture("dj", history: true)
        let station = djHistory.firstIndex { $0.hasPrefix("Station 'Rooftop'") }
        let announced = djHistory.firstIndex { $0.hasPrefix("Announced as 'Rooftop'") }
        let header = djHistory.lastIndex(where: Self.isHeader)
        let code = djHistory.lastIndex { $0.contains("█") }
        #expect(
            station != nil && announced != nil && header != nil && code != nil, "\(djHistory.joined(separator: "\n"))")
        if let station, let announced, let header, let code {
            #expect(station < header && announced < header && header < code, "\(djHistory.joined(separator: "\n"))")
        }

        // A track change, from the DJ's keyboard.
        let playing = Self.track(dj.first(where: Self.isHeader))
        try djTmux.type("dj", "n")
        dj = try djTmux.waitFor("dj", "the next track") { Self.isHeader($0) && Self.track($0) != playing }
        guest = try guestTmux.waitFor("listen", "the next track on the listener") {
            Self.isHeader($0) && Self.track($0) != playing
        }
        expectOneView(dj, "DJ, after a track change")
        expectOneView(guest, "listener, after a track change")
        try expectOneTable(guestTmux, "after a track change")
        // Nothing stale in the scrollback either (no resize has pushed the view up yet).
        #expect(try djTmux.capture("dj", history: true).filter(Self.isHeader).count == 1, "the DJ's scrollback")
        #expect(try guestTmux.capture("listen", history: true).filter(Self.isHeader).count == 1, "the scrollback")

        // A vote from the listener's keyboard: its view shows its vote, the DJ's the count.
        guest = try guestTmux.waitFor("listen", "the listener's keys") { $0.contains("u vote up") }
        try guestTmux.type("listen", "u")
        guest = try guestTmux.waitFor("listen", "the listener's vote") { $0.contains("your vote:  up ") }
        dj = try djTmux.waitFor("dj", "the vote on the DJ") { $0.contains("votes") && $0.contains("1 up") }
        expectOneView(guest, "listener, after its vote")
        expectOneView(dj, "DJ, after the vote")
        // Its own volume and mute.
        try guestTmux.type("listen", "-")
        guest = try guestTmux.waitFor("listen", "the listener's volume") { $0.contains("volume 90") }
        try guestTmux.type("listen", "m")
        guest = try guestTmux.waitFor("listen", "the listener muted") { $0.contains("muted here") }
        try guestTmux.type("listen", "m")
        guest = try guestTmux.waitFor("listen", "the listener unmuted") { $0.contains("m mute ") }
        #expect(!guest.contains { $0.contains("muted here") }, "\(guest.joined(separator: "\n"))")
        expectOneView(guest, "listener, after volume and mute")

        // Resizes: narrower, narrower than the keys row, back, shorter, back. (A terminal made so
        // small at once that the view, its long lines reflowed, no longer fits keeps the view's top
        // rows in its scrollback, out of anyone's reach: docs/ARCHITECTURE.md.)
        for (columns, rows) in [(64, 40), (44, 40), (110, 40), (110, 32), (110, 40)] {
            try djTmux.resize("dj", columns: columns, rows: rows)
            try guestTmux.resize("listen", columns: columns, rows: rows)
            Thread.sleep(forTimeInterval: 1.5)  // a progress redraw or two as well
            dj = try djTmux.capture("dj")
            guest = try guestTmux.capture("listen")
            expectOneView(dj, "DJ, \(columns)×\(rows)")
            expectOneView(guest, "listener, \(columns)×\(rows)")
            try guestTmux.resize("watch", columns: columns, rows: rows)
            Thread.sleep(forTimeInterval: 1)
            try expectOneTable(guestTmux, "\(columns)×\(rows)")
            #expect(guest.contains { $0.contains("your vote:") }, "\(guest.joined(separator: "\n"))")
        }

        // The listener leaves with its q key; the DJ's view follows.
        try guestTmux.type("listen", "q")
        try guestTmux.waitFor("listen", "the listener ending") { $0.hasPrefix("EXITED 0") }
        dj = try djTmux.waitFor("dj", "the listener leaving") { $0.hasPrefix("Rooftop  0 listening") }
        expectOneView(dj, "DJ, the listener left")
        #expect(dj.contains { $0.hasPrefix("A listener left") }, "\(dj.joined(separator: "\n"))")
        try djTmux.type("dj", "q")
        try djTmux.waitFor("dj", "the DJ ending") { $0.hasPrefix("EXITED 0") }
    }
}
