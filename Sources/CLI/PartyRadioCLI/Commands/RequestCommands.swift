import PartyRadioCatalog
import PartyRadioCore
import PartyRadioNode

/// Runs the guests' request commands: `request`, `queue` and `vote --request`.
///
/// Exit codes: 0 when the DJ queued the request (or counted the vote), 1 when it refused (the
/// reason goes to stderr; with `--json` the answer is on stdout too), 2 for a usage error (a
/// `--pick` beyond the results), 3 when the station was not found or did not answer in time.
enum RequestCommands {
    static func request(_ options: Command.RequestOptions, context: CommandContext) -> Int32 {
        let console = context.console
        let inbox = Inbox<NodeInput>()
        let interrupts = Interrupts(inbox: inbox)
        defer { withExtendedLifetime(interrupts) {} }
        let silent = EventPrinter(jsonEvents: true, role: "requester", console: console)
        let settings = NodeCommands.settings(
            options.common, network: options.network, reporter: silent, context: context)
        let (catalog, notices) = Catalog.withCache(
            stateDirectory: settings.stateDirectory.path, endpoints: context.knobs.catalogEndpoints)
        for notice in notices { console.err("Warning: \(notice)") }
        let source = CatalogTrackSource(
            catalog: catalog, country: options.country ?? Storefront.fromLocale(context.environment),
            allowExplicit: !options.noExplicit)
        let name = options.displayName ?? NodeCommands.defaultGuestName(context)
        do {
            guard
                let result = try RequestClient.request(
                    options.query, as: name, station: options.station, timeoutNs: Nanos.seconds(options.timeout),
                    catalog: source, settings: settings, inbox: inbox)
            else { return ExitCode.failure.rawValue }
            let ack = result.ack
            let station = Render.plain(result.station.name)
            if options.json {
                console.out(
                    JSON.object(
                        [
                            ("station", .string(result.station.name)), ("station_id", .string(result.station.id.hex)),
                            ("status", .string(ack.status.name)), ("queued", .bool(ack.status.isQueued)),
                            ("request_id", ack.queueID == 0 ? .null : .int(ack.queueID)),
                            ("position", ack.position == 0 ? .null : .int(ack.position)), ("limit", .int(ack.limit)),
                            ("title", ack.title.isEmpty ? .null : .string(ack.title)),
                            ("artist", ack.artist.isEmpty ? .null : .string(ack.artist)),
                            ("track_id", result.trackID.map(JSON.string) ?? .null),
                            ("resolved_by", .string(result.resolution.rawValue)),
                            ("library_missed", .bool(result.libraryMissed)), ("name", .string(name.value)),
                            ("attempts", .int(result.attempts)),
                            ("latency_ms", .double(Double(result.latencyNs) / 1e6)),
                        ]
                    ).rendered)
            } else if let picked = result.picked {
                let found = "“\(Render.plain(picked.title))” by \(Render.plain(picked.artist)) (ID \(picked.id))"
                console.out(
                    result.libraryMissed
                        ? "No title in the DJ's library matches; the catalog search found \(found)."
                        : "The catalog search found \(found).")
            }
            guard ack.status.isQueued else {
                console.error(RequestText.sentence(ack, station: result.station.name))
                return ExitCode.failure.rawValue
            }
            if !options.json { console.out(RequestText.sentence(ack) + " At '\(station)', as \(name.value).") }
            return ExitCode.success.rawValue
        } catch { return NodeCommands.fail(error, console: console) }
    }

    static func queue(_ options: Command.QueueOptions, context: CommandContext) -> Int32 {
        let console = context.console
        let inbox = Inbox<NodeInput>()
        let interrupts = Interrupts(inbox: inbox)
        defer { withExtendedLifetime(interrupts) {} }
        let silent = EventPrinter(jsonEvents: true, role: "queue", console: console)
        do {
            guard
                let result = try RequestClient.queue(
                    station: options.station, timeoutNs: Nanos.seconds(options.timeout),
                    settings: NodeCommands.settings(
                        options.common, network: options.network, reporter: silent, context: context),
                    inbox: inbox)
            else { return ExitCode.failure.rawValue }
            let list = result.list
            if options.json {
                console.out(
                    JSON.object(
                        [("station", .string(result.station.name)), ("station_id", .string(result.station.id.hex))]
                            + RequestText.list(list)
                            + [
                                ("attempts", .int(result.attempts)),
                                ("latency_ms", .double(Double(result.latencyNs) / 1e6)),
                            ]
                    ).rendered)
                return ExitCode.success.rawValue
            }
            let station = Render.plain(result.station.name)
            let mode =
                switch list.mode {
                case .open: "requests open"
                case .approve: "requests need the DJ's approval"
                case .off: "the DJ takes no requests"
                }
            let lines = RequestText.lines(list)
            guard !lines.isEmpty else {
                console.out("Nothing queued at '\(station)' (\(mode)).")
                return ExitCode.success.rawValue
            }
            let waiting = list.total == 1 ? "1 request waiting" : "\(list.total) requests waiting"
            console.out("Up next at '\(station)' (\(mode); \(waiting)):")
            for line in lines { console.out(Render.plain(line)) }
            let shown = list.entries.count { $0.isRequest }
            if list.total > shown { console.out("… and \(Int(list.total) - shown) more waiting.") }
            if list.entries.contains(where: \.isRequest) {
                console.out("Vote on a request with 'partyradio vote up --request N'.")
            }
            return ExitCode.success.rawValue
        } catch { return NodeCommands.fail(error, console: console) }
    }

    /// `vote up|down|clear --request ID`.
    static func vote(_ options: Command.VoteOptions, request id: UInt32, context: CommandContext) -> Int32 {
        let console = context.console
        let inbox = Inbox<NodeInput>()
        let interrupts = Interrupts(inbox: inbox)
        defer { withExtendedLifetime(interrupts) {} }
        let silent = EventPrinter(jsonEvents: true, role: "voter", console: console)
        do {
            guard
                let result = try RequestClient.vote(
                    RequestVote(queueID: id, choice: options.choice), station: options.station,
                    timeoutNs: Nanos.seconds(options.timeout),
                    settings: NodeCommands.settings(
                        options.common, network: options.network, reporter: silent, context: context),
                    inbox: inbox)
            else { return ExitCode.failure.rawValue }
            let ack = result.ack
            if options.json {
                console.out(
                    JSON.object([
                        ("station", .string(result.station.name)), ("station_id", .string(result.station.id.hex)),
                        ("request_id", .int(ack.queueID)), ("status", .string(ack.status.name)),
                        ("choice", .string(ack.choice.name)), ("up", .int(ack.tally.up)),
                        ("down", .int(ack.tally.down)), ("position", ack.position == 0 ? .null : .int(ack.position)),
                        ("attempts", .int(result.attempts)), ("latency_ms", .double(Double(result.latencyNs) / 1e6)),
                    ]).rendered)
            }
            let station = Render.plain(result.station.name)
            let refusal: String? =
                switch ack.status {
                case .counted: nil
                case .played:
                    "Request #\(id) has already played at '\(station)'; vote on the track playing now with "
                        + "'partyradio vote up' or 'vote down'."
                case .dropped: "The DJ of '\(station)' dropped request #\(id); nothing to vote on."
                case .unknown: "No request #\(id) waits at '\(station)'; see 'partyradio queue' for the numbers."
                case .addressLimit:
                    "Another guest on this machine's address has voted on request #\(id) at '\(station)' already "
                        + "(one guest, one vote; the DJ can allow more with --voters-per-address)."
                }
            if let refusal {
                console.error(refusal)
                return ExitCode.failure.rawValue
            }
            if !options.json {
                let verb = ack.choice == .clear ? "Cleared your vote on" : "Voted \(ack.choice.name) on"
                console.out(
                    "\(verb) request #\(id) at '\(station)': \(ack.tally.up) up, \(ack.tally.down) down; "
                        + "number \(ack.position) of the requests.")
            }
            return ExitCode.success.rawValue
        } catch { return NodeCommands.fail(error, console: console) }
    }
}
