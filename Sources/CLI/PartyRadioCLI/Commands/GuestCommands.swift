import PartyRadioCatalog
import PartyRadioCore
import PartyRadioNode

/// The guests' one-shot commands: `vote`, `vote --request`, `chat`, `request` and `queue`. Each
/// builds its request, asks the station through ``GuestClient`` and prints the answer, in the
/// words of ``AckText``.
///
/// Exit codes: 0 when the DJ took it (queued the request, counted the vote, delivered the line),
/// 1 when it refused (the reason goes to stderr; with `--json` the answer is on stdout too, but
/// for a vote on the playing track) or the user quit, 2 for a usage error (a `--pick` beyond the
/// results), 3 when the station was not found or did not answer in time.
enum GuestCommands {
    static func vote(_ options: Command.VoteOptions, context: CommandContext) -> Int32 {
        if let id = options.request { return requestVote(options, request: id, context: context) }
        let settings = settings(role: "voter", options.common, options.network, context)
        return ask(
            GuestVote(options.choice), station: options.station, timeout: options.timeout, key: "voter",
            trustNewKey: options.network.trustNewKey, settings: settings, context: context
        ) { result in
            let ack = result.answer.ack
            let sentence = AckText.sentence(ack, title: result.answer.trackTitle, station: result.station.name)
            guard ack.status.isAccepted else { return refuse(sentence, context) }
            if options.json {
                context.console.out(
                    JSON.object(
                        stationFields(result)
                            + [
                                ("track_id", .string(ack.trackID)),
                                ("title", result.answer.trackTitle.map(JSON.string) ?? .null),
                                ("choice", .string(ack.choice.name)), ("up", .int(ack.tally.up)),
                                ("down", .int(ack.tally.down)), ("listeners", .int(ack.listenerCount)),
                            ] + measures(result)
                    ).shown.rendered)
            } else {
                context.console.out(sentence)
            }
            return ExitCode.success.rawValue
        }
    }

    /// `vote up|down|clear --request ID`.
    static func requestVote(_ options: Command.VoteOptions, request id: UInt32, context: CommandContext) -> Int32 {
        ask(
            GuestRequestVote(RequestVote(queueID: id, choice: options.choice)), station: options.station,
            timeout: options.timeout, key: "voter", trustNewKey: options.network.trustNewKey,
            settings: settings(role: "voter", options.common, options.network, context),
            context: context
        ) { result in
            let ack = result.answer
            if options.json {
                context.console.out(
                    JSON.object(
                        stationFields(result)
                            + [
                                ("request_id", .int(ack.queueID)), ("status", .string(ack.status.name)),
                                ("choice", .string(ack.choice.name)), ("up", .int(ack.tally.up)),
                                ("down", .int(ack.tally.down)),
                                ("position", ack.position == 0 ? .null : .int(ack.position)),
                            ] + measures(result)
                    ).shown.rendered)
            }
            let sentence = AckText.sentence(ack, station: result.station.name)
            guard ack.status.isAccepted else { return refuse(sentence, context) }
            if !options.json { context.console.out(sentence) }
            return ExitCode.success.rawValue
        }
    }

    static func chat(_ options: Command.ChatOptions, context: CommandContext) -> Int32 {
        let name = options.displayName ?? NodeCommands.defaultGuestName(context)
        let settings = settings(role: "chatter", options.common, options.network, context)
        // The clock in microseconds: a later `chat` from this key always has a higher ID.
        let line = ChatSend(
            messageID: UInt64(max(1, settings.clock.now().ns / 1000)), name: name.value, text: options.text)
        return ask(
            GuestChat(line), station: options.station, timeout: options.timeout, key: "voter",
            trustNewKey: options.network.trustNewKey, settings: settings, context: context
        ) { result in
            let ack = result.answer
            if options.json {
                context.console.out(
                    JSON.object(
                        stationFields(result) + [
                            ("message_id", .int(ack.messageID)), ("delivered", .bool(ack.status.isAccepted)),
                            ("status", .string(ack.status.name)), ("retry_after_ms", .int(ack.retryAfterMs)),
                            ("attempts", .int(result.attempts)),
                        ]
                    ).shown.rendered)
            }
            let sentence = AckText.sentence(ack, station: result.station.name, as: name.value)
            guard ack.status.isAccepted else { return refuse(sentence, context) }
            if !options.json { context.console.out(sentence) }
            return ExitCode.success.rawValue
        }
    }

    static func request(_ options: Command.RequestOptions, context: CommandContext) -> Int32 {
        let console = context.console
        let name = options.displayName ?? NodeCommands.defaultGuestName(context)
        let settings = settings(role: "requester", options.common, options.network, context)
        let (catalog, notices) = Catalog.withCache(
            stateDirectory: settings.stateDirectory.path, endpoints: context.knobs.catalogEndpoints)
        for notice in notices { console.err("Warning: \(notice)") }
        let source = CatalogTrackSource(
            catalog: catalog, country: options.country ?? Storefront.fromLocale(context.environment),
            allowExplicit: !options.noExplicit)
        return ask(
            GuestTrackRequest(options.query, name: name.value), station: options.station, timeout: options.timeout,
            key: "voter", catalog: source, trustNewKey: options.network.trustNewKey, settings: settings,
            context: context
        ) { result in
            let answer = result.answer
            let ack = answer.ack
            if options.json {
                console.out(
                    JSON.object(
                        stationFields(result)
                            + [
                                ("status", .string(ack.status.name)), ("queued", .bool(ack.status.isQueued)),
                                ("request_id", ack.queueID == 0 ? .null : .int(ack.queueID)),
                                ("position", ack.position == 0 ? .null : .int(ack.position)),
                                ("limit", .int(ack.limit)), ("title", ack.title.isEmpty ? .null : .string(ack.title)),
                                ("artist", ack.artist.isEmpty ? .null : .string(ack.artist)),
                                ("track_id", answer.trackID.map(JSON.string) ?? .null),
                                ("resolved_by", .string(answer.resolution.rawValue)),
                                ("library_missed", .bool(answer.libraryMissed)), ("name", .string(name.value)),
                            ] + measures(result)
                    ).shown.rendered)
            } else if let picked = answer.picked {
                let found = "“\(Render.plain(picked.title))” by \(Render.plain(picked.artist)) (ID \(picked.id))"
                console.out(
                    answer.libraryMissed
                        ? "No title in the DJ's library matches; the catalog search found \(found)."
                        : "The catalog search found \(found).")
            }
            guard ack.status.isQueued else {
                return refuse(AckText.sentence(ack, station: result.station.name), context)
            }
            if !options.json {
                console.out(
                    AckText.sentence(ack) + " At '\(Render.plain(result.station.name))', as \(name.value).")
            }
            return ExitCode.success.rawValue
        }
    }

    static func queue(_ options: Command.QueueOptions, context: CommandContext) -> Int32 {
        let console = context.console
        return ask(
            GuestQueueRead(), station: options.station, timeout: options.timeout, key: nil,
            trustNewKey: options.network.trustNewKey,
            settings: settings(role: "queue", options.common, options.network, context), context: context
        ) { result in
            let list = result.answer
            if options.json {
                console.out(
                    JSON.object(stationFields(result) + RequestText.list(list) + measures(result)).shown.rendered)
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
        }
    }

    /// A guest node's settings; its events (`role` names it) are not shown: the command prints
    /// the answer.
    private static func settings(
        role: String, _ common: CommonOptions, _ network: NetworkOptions, _ context: CommandContext
    ) -> NodeSettings {
        let silent = EventPrinter(jsonEvents: true, role: role, console: context.console)
        return NodeCommands.settings(common, network: network, reporter: silent, context: context)
    }

    /// Runs `request` on a guest node until the station answers, and hands the answer to
    /// `answered` for its exit code. The user quitting first is exit 1; a failure (not found,
    /// timed out, …) is printed with its own exit code.
    /// - Parameter key: the guest's key in the state directory; nil: a throwaway key.
    private static func ask<Request: StationRequest>(
        _ request: Request, station: String?, timeout: Double, key: String?, catalog: (any TrackCatalog)? = nil,
        trustNewKey: Bool, settings: NodeSettings, context: CommandContext,
        then answered: (GuestExchange<Request>.Answered) -> Int32
    ) -> Int32 {
        let inbox = Inbox<NodeInput>()
        let interrupts = Interrupts(inbox: inbox)
        defer { withExtendedLifetime(interrupts) {} }
        do {
            guard
                let result = try GuestClient.ask(
                    request, station: station, timeoutNs: Nanos.seconds(timeout), key: key, catalog: catalog,
                    trustNewKey: trustNewKey, settings: settings, inbox: inbox)
            else { return ExitCode.failure.rawValue }
            return answered(result)
        } catch { return NodeCommands.fail(error, console: context.console) }
    }

    private static func refuse(_ sentence: String, _ context: CommandContext) -> Int32 {
        context.console.error(sentence)
        return ExitCode.failure.rawValue
    }

    private static func stationFields<Request>(_ result: GuestExchange<Request>.Answered) -> [(String, JSON)] {
        [("station", .string(result.station.name)), ("station_id", .string(result.station.id.hex))]
    }

    private static func measures<Request>(_ result: GuestExchange<Request>.Answered) -> [(String, JSON)] {
        [("attempts", .int(result.attempts)), ("latency_ms", .double(Double(result.latencyNs) / 1e6))]
    }
}
