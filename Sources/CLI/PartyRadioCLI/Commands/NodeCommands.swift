import Foundation
import PartyRadioCatalog
import PartyRadioCore
import PartyRadioNode

/// Runs the networked commands: dj and listen (the guests' one-shot commands and stations have their own files).
enum NodeCommands {
    static func settings(
        _ common: CommonOptions, network: NetworkOptions, playback: PlaybackFlags = PlaybackFlags(),
        reporter: any NodeReporter, context: CommandContext
    ) -> NodeSettings {
        let stateDirectory = StateDirectory.resolve(common.stateDir, environment: context.environment)
        return NodeSettings(
            interfaceName: network.interface, stateDirectory: URL(fileURLWithPath: stateDirectory),
            clock: NodeClock(offsetMs: playback.clockOffsetMs, driftPPM: playback.clockDriftPPM),
            reporter: reporter, code: network.code, sessionBus: context.sessionBus,
            domain: network.domain.map {
                DomainSettings(
                    domain: $0, server: network.dnsServer, keyFile: network.dnsKey, lease: context.knobs.dnsLease)
            })
    }

    static func playbackOptions(_ flags: PlaybackFlags, context: CommandContext) -> PlaybackOptions {
        PlaybackOptions(
            noAudio: flags.noAudio, audioDriver: flags.audioDriver, tracePath: flags.tracePath,
            tuning: context.knobs.player, soundServer: context.soundServer)
    }

    /// A node's runtime failure: one line (it says what to do), and the node's exit code.
    static func fail(_ error: NodeError, console: Console) -> Int32 {
        console.error(error.description)
        return error.exitCode
    }

    static func dj(_ options: Command.DJOptions, context: CommandContext) -> Int32 {
        let console = context.console
        let printer = EventPrinter(
            jsonEvents: options.jsonEvents, role: "dj", console: console, environment: context.environment)
        defer { printer.finish() }
        let inbox = Inbox<NodeInput>()
        let interrupts = Interrupts(inbox: inbox)
        defer { withExtendedLifetime(interrupts) {} }
        let nodeSettings = settings(
            options.common, network: options.network, playback: options.playback, reporter: printer, context: context)
        let (catalog, notices) = Catalog.withCache(
            stateDirectory: nodeSettings.stateDirectory.path, endpoints: context.knobs.catalogEndpoints)
        for notice in notices { printer.report(.warning(notice)) }
        let source = CatalogTrackSource(
            catalog: catalog, country: options.country ?? Storefront.fromLocale(context.environment),
            allowExplicit: !options.noExplicit)
        let catalogTracks: [Track]
        let fetched: Result<[Track], NodeError> = Blocking.run {
            do throws(NodeError) { return .success(try await startingTracks(options, source: source)) } catch {
                return .failure(error)
            }
        }
        switch fetched {
        case .success(let tracks): catalogTracks = tracks
        case .failure(let error): return fail(error, console: console)
        }
        do {
            var configuration = DJConfiguration(
                name: options.name, libraries: options.libraries, extraTracks: catalogTracks, port: options.port,
                playback: playbackOptions(options.playback, context: context), catalog: source,
                crowdSkipPercent: options.crowdSkipPercent, requestMode: options.requestMode,
                maxRequestsPerGuest: options.maxRequestsPerGuest, votersPerAddress: options.votersPerAddress,
                voteWeightAfterNs: Nanos.seconds(Double(options.voteWeightAfterSeconds)), fresh: options.fresh,
                isPrivate: options.isPrivate, newCode: options.newCode, live: options.live,
                liveSettings: LiveSender.Settings(
                    duration: options.liveFrame, bitrate: options.liveBitrateKbit * 1000,
                    delayMs: UInt16(options.latencyMs), protection: options.liveRepairs))
            configuration.liveDefaultOutput = options.liveDefaultOutput
            configuration.livePlayer = options.livePlayer
            let node = try DJNode(configuration: configuration, settings: nodeSettings, inbox: inbox)
            // `--live -` reads the audio from stdin: no controls there then.
            let readsStdin = if case .standardInput = options.live { true } else { false }
            let controls = readsStdin ? nil : ControlReader(.dj, inbox: inbox, reporter: printer)
            defer { controls?.restore() }
            let reload = LibraryReloadSignal(node)
            defer { withExtendedLifetime(reload) {} }
            try node.run()
            return ExitCode.success.rawValue
        } catch { return fail(error, console: console) }
    }

    /// The catalog tracks `--search`/`--pick` and `--add` ask for, in that order.
    static func startingTracks(_ options: Command.DJOptions, source: CatalogTrackSource) async throws(NodeError)
        -> [Track]
    {
        var tracks: [Track] = []
        do {
            if let term = options.search {
                let found = try await source.search(term)
                guard !found.isEmpty else {
                    throw NodeError(.catalog, "The catalog has no playable tracks for '\(term)'; try another --search.")
                }
                if options.picks.isEmpty {
                    tracks += found
                } else {
                    for pick in options.picks {
                        guard pick <= found.count else {
                            throw NodeError(
                                .usage,
                                "'--pick \(pick)': the search for '\(term)' found \(found.count) playable tracks; "
                                    + "pick one of 1–\(found.count).")
                        }
                        tracks.append(found[pick - 1])
                    }
                }
            }
            if !options.adds.isEmpty {
                let found = try await source.lookup(options.adds)
                let missing = options.adds.filter { id in !found.contains { $0.id == id } }
                guard missing.isEmpty else {
                    throw NodeError(
                        .catalog,
                        "The catalog has no playable track with ID \(missing.joined(separator: ", ")); "
                            + "check the IDs with 'partyradio lookup'.")
                }
                tracks += found
            }
        } catch let error as NodeError {
            throw error
        } catch {
            throw NodeError(.catalog, "The catalog could not be reached: \(error)")
        }
        return tracks
    }

    static func listen(_ options: Command.ListenOptions, context: CommandContext) -> Int32 {
        let printer = EventPrinter(
            jsonEvents: options.jsonEvents, role: "listener", console: context.console,
            environment: context.environment)
        return runTunedIn(printer: printer, context: context, keys: true) { inbox throws(NodeError) in
            try ListenerNode.tuneIn(
                options.station, timeoutNs: Nanos.seconds(options.timeout),
                playback: playbackOptions(options.playback, context: context),
                name: options.displayName ?? defaultGuestName(context),
                trustNewKey: options.trustNewKey, liveExtraNs: Nanos.ms(Int64(options.latencyExtraMs)),
                settings: settings(
                    options.common, network: options.network, playback: options.playback, reporter: printer,
                    context: context),
                inbox: inbox)
        }
    }

    static func speaker(_ options: Command.SpeakerOptions, context: CommandContext) -> Int32 {
        let printer = EventPrinter(
            jsonEvents: options.jsonEvents, role: "speaker", console: context.console,
            environment: context.environment, headless: true)
        return runTunedIn(printer: printer, context: context, keys: false) { inbox throws(NodeError) in
            // It looks for its station for ever: the timeout only paces what it says while it waits.
            try ListenerNode.tuneIn(
                options.station, timeoutNs: Nanos.seconds(10),
                playback: playbackOptions(options.playback, context: context), name: options.name,
                trustNewKey: options.trustNewKey, speaker: options.room?.value ?? "",
                settings: settings(
                    options.common, network: options.network, playback: options.playback, reporter: printer,
                    context: context),
                inbox: inbox)
        }
    }

    /// Runs a node that tunes in (`listen`, `speaker`) until it ends: signals go to its inbox, and
    /// with `keys` the listener's keys or stdin lines too (a speaker takes none).
    private static func runTunedIn(
        printer: EventPrinter, context: CommandContext, keys: Bool,
        tuneIn: (Inbox<NodeInput>) throws(NodeError) -> ListenerNode?
    ) -> Int32 {
        defer { printer.finish() }
        let inbox = Inbox<NodeInput>()
        let interrupts = Interrupts(inbox: inbox)
        defer { withExtendedLifetime(interrupts) {} }
        do throws(NodeError) {
            guard let node = try tuneIn(inbox) else { return ExitCode.success.rawValue }
            let controls = keys ? ControlReader(.listener, inbox: inbox, reporter: printer) : nil
            defer { controls?.restore() }
            try node.run()
            return ExitCode.success.rawValue
        } catch { return fail(error, console: context.console) }
    }

    /// The guest name when `--as` gives none: `user@host`.
    static func defaultGuestName(_ context: CommandContext) -> GuestName {
        GuestName.defaultName(
            user: context.environment["USER"] ?? context.environment["LOGNAME"] ?? "", host: ListenerNode.hostName())
    }
}
