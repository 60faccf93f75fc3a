import Foundation
import Glibc
import PartyRadioCore
import PartyRadioNode

/// `partyradio stations`: one listing, or `--watch` to follow.
enum StationsCommand {
    static func run(_ options: Command.StationsOptions, context: CommandContext) -> Int32 {
        let console = context.console
        let inbox = Inbox<NodeInput>()
        let interrupts = Interrupts(inbox: inbox)
        defer { withExtendedLifetime(interrupts) {} }
        let printer = EventPrinter(jsonEvents: true, role: "observer", console: console)
        let observer: StationObserver
        do {
            observer = try StationObserver(
                settings: NodeCommands.settings(
                    options.common, network: options.network, reporter: printer, context: context),
                inbox: inbox)
        } catch { return NodeCommands.fail(error, console: console) }
        defer { observer.close() }
        let clock = NodeClock()
        do {
            if options.watch {
                return try watch(
                    observer, options: options, console: console,
                    style: TerminalStyle(console: console, environment: context.environment))
            }
            let deadline = clock.now() + Nanos.seconds(options.timeout)
            while clock.now() < deadline && !observer.settled {
                _ = try observer.pump(timeoutMs: 50)
                if observer.takeOtherInputs().contains(where: isQuit) { break }
            }
        } catch { return NodeCommands.fail(error, console: console) }
        let stations = observer.summaries()
        reportDrops(observer, console: console)
        // Private stations this node cannot open are listed by name and nothing else: that is all
        // their advert says.
        let locked = observer.lockedStations()
        if options.json {
            let closed = locked.map { station in
                JSON.object([
                    ("name", .string(station.name)), ("private", .bool(true)),
                    ("locked", .string(station.wrongCode ? "wrong_code" : "no_code")),
                ])
            }
            console.out(JSON.array(stations.map(Render.station) + closed).shown.rendered)
        } else if stations.isEmpty && locked.isEmpty {
            console.out("No stations on the air.")
        } else {
            if !stations.isEmpty { console.out(table(stations)) }
            for station in locked {
                let why = station.wrongCode ? "the code given does not open it" : "join with --code CODE"
                console.out("Private station '\(Render.plain(station.name))' (\(why)).")
            }
        }
        return ExitCode.success.rawValue
    }

    /// What the listing dropped (bad datagrams, adverts, records of a DNS domain), by reason, on
    /// stderr: stdout stays the listing alone.
    static func reportDrops(_ observer: StationObserver, console: Console) {
        let dropped = observer.drops
        if dropped.total > 0 { console.err(EventPrinter.describe(dropped).trimmingWhitespace()) }
    }

    static func isQuit(_ input: NodeInput) -> Bool { if case .quit = input { true } else { false } }

    private static func watch(
        _ observer: StationObserver, options: Command.StationsOptions, console: Console, style: TerminalStyle
    ) throws(NodeError) -> Int32 {
        let live = !options.json && style.redraws
        let screen = live ? LiveScreen.make(for: console) : nil
        if let screen, console.isProcessTerminal { screen.attach() }
        defer { screen?.detach() }
        var lastDraw: Int64 = 0
        let clock = NodeClock()
        while true {
            let changes = try observer.pump(timeoutMs: 100)
            if observer.takeOtherInputs().contains(where: isQuit) {
                reportDrops(observer, console: console)
                return ExitCode.success.rawValue
            }
            let stations = observer.summaries()
            for change in changes {
                if options.json {
                    console.out(
                        JSON.object([
                            ("event", .string(EventPrinter.describe(change))),
                            ("time_ns", .int(NodeClock.realTimeNs())),
                            ("station_id", .string(id(of: change).hex)),
                            ("reason", reason(of: change).map(JSON.string) ?? .null),
                            ("stations", .array(stations.map(Render.station))),
                        ]).shown.rendered)
                } else if !live {
                    console.out(Render.plain(describe(change, stations: stations)))
                }
            }
            if let screen, !changes.isEmpty || clock.now().ns - lastDraw > Nanos.ms(500) {
                lastDraw = clock.now().ns
                let text = stations.isEmpty ? "No stations on the air (watching; Ctrl-C to stop)." : table(stations)
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                screen.show([LiveSection(lines)])
            }
        }
    }

    static func id(of change: StationDirectory.Change) -> StationID {
        switch change {
        case .appeared(let id), .updated(let id), .vanished(let id, _, _): id
        }
    }

    static func reason(of change: StationDirectory.Change) -> String? {
        if case .vanished(_, _, let reason) = change { reason } else { nil }
    }

    static func describe(_ change: StationDirectory.Change, stations: [StationSummary]) -> String {
        switch change {
        case .appeared(let id), .updated(let id):
            guard let station = stations.first(where: { $0.id == id }) else { return "Station \(id.hex) changed." }
            let verb = if case .appeared = change { "On the air" } else { "Now" }
            let snapshot = station.snapshot
            return "\(verb): '\(station.name)' (\(id.hex)) — \(Render.trackLine(snapshot.nowPlaying)), "
                + "\(snapshot.listenerCount) listening, \(snapshot.tally.up) up, \(snapshot.tally.down) down."
        case .vanished(let id, let name, let reason):
            return "Gone: '\(name)' (\(id.hex)) \(reason)."
        }
    }

    /// The listing: one row per station.
    static func table(_ stations: [StationSummary]) -> String {
        let header = ["STATION", "ID", "NOW PLAYING", "POSITION", "LISTENERS", "VOTES", "HOST", "WEB"]
        let rows = stations.map { station -> [String] in
            let track = station.snapshot.nowPlaying
            let duration = Render.durationNs(track)
            return [
                Render.plain(station.name), station.id.hex,
                track.map { Render.plain("\($0.title) — \($0.artist)") } ?? "(nothing)",
                (station.snapshot.anchor.isPaused ? "paused " : "")
                    + "\(Render.time(station.positionNs))/\(Render.time(duration))",
                String(station.snapshot.listenerCount), "+\(station.snapshot.tally.up) -\(station.snapshot.tally.down)",
                PeerAddress(host: station.address, port: station.port).description, Render.webURL(station) ?? "-",
            ]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            row.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingWhitespace()
        }.joined(separator: "\n")
    }
}
