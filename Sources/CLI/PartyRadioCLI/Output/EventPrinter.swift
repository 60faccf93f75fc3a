import Glibc
import PartyRadioCore
import PartyRadioNode
import Synchronization

/// Prints a long-running node's events: a live view redrawn in place on a terminal, one line
/// per change when stdout is a pipe (or `TERM=dumb`), or one JSON object per line with `--json-events`.
///
/// The live view owns the terminal (``LiveScreen``): the view itself (what plays, the votes, the
/// keys, the QR codes, what plays next) is redrawn in place, and every other event's line is
/// printed above it, where it stays as the terminal's scrollback.
final class EventPrinter: NodeReporter {
    enum Mode { case live, lines, json }

    private let mode: Mode
    private let role: String
    private let console: Console
    private let style: TerminalStyle
    /// The terminal, in live mode.
    private let screen: LiveScreen?
    private let state = Mutex(ViewState())

    private struct ViewState {
        var snapshot: StateSnapshot?
        var positionNs: Int64 = 0
        /// Who listens, and when the DJ said so: the view adds the time since to each guest's.
        var roster: (Roster, at: ContinuousClock.Instant)?
        var repeatMode = "all"
        var volume = 100
        /// The DJ's station: its ID, key and addresses, and the name it is announced under.
        var station: (line: String, group: String)?
        var announced: String?
        var listener = ListenerSettings()
        var upNext: [String] = []
        /// The station plays live (its now playing is the live segment or its player's track): what
        /// guests ask for are wishes, not a queue (docs/LIVE.md).
        var live = false
        /// The web page's URLs and the QR code shown (the guests' unless the DJ asked for its own).
        var web: LiveSection?
        var urls: (guests: String, dj: String)?
        /// A private station's join code and its QR code.
        var code: LiveSection?
    }

    /// - Parameter headless: plain lines even on a terminal (a speaker has no view).
    init(jsonEvents: Bool, role: String, console: Console, environment: [String: String] = [:], headless: Bool = false)
    {
        self.role = role
        self.console = console
        style = TerminalStyle(console: console, environment: environment)
        mode = jsonEvents ? .json : (style.redraws && !headless ? .live : .lines)
        screen = mode == .live ? LiveScreen.make(for: console) : nil
        if let screen, console.isProcessTerminal { screen.attach() }
    }

    /// Gives the terminal back (the last frame stays); what is printed next goes below the view.
    func finish() { screen?.detach() }

    func report(_ event: NodeEvent) {
        if case .webPage(let url, let djURL) = event { state.withLock { $0.urls = (url, djURL) } }
        if case .state(let snapshot, _, _) = event {
            state.withLock { $0.live = snapshot.nowPlaying?.isLive ?? false }
        }
        switch mode {
        case .json: emit(json(event))
        case .lines: if let line = line(event) { emit(Render.plain(line)) }
        case .live: live(event)
        }
    }

    private func emit(_ text: String) { console.out(text) }

    /// A speaker as `speakers` lists it; its name and room are its own words, cleaned again here.
    // MARK: JSON events

    private func json(_ event: NodeEvent) -> String {
        var fields: [(String, JSON)] = []
        let name: String
        switch event {
        case .stationStarted(
            let station, let id, let interface, let address, let port, let group, let fingerprint, let count,
            let isPrivate):
            name = "station_started"
            fields = [
                ("station", .string(station)), ("id", .string(id.hex)), ("interface", .string(interface)),
                ("address", .string(address)), ("port", .int(port)), ("group", .string(group.description)),
                ("key_fingerprint", .string(fingerprint)), ("queue_length", .int(count)), ("private", .bool(isPrivate)),
            ]
        case .joinCode(let code):
            name = "join_code"
            fields = [("code", .string(code.grouped))]
        case .stationPublished(let station):
            name = "station_published"
            fields = [("station", .string(station))]
        case .webPage(let url, let djURL):
            name = "web_page"
            fields = [("url", .string(url)), ("dj_url", .string(djURL))]
        case .webQR(let forDJ):
            name = "web_qr"
            fields = [("for", .string(forDJ ? "dj" : "guests"))]
        case .discoveryDaemon(let running):
            name = running ? "avahi_back" : "avahi_lost"
        case .stationRenamed(let from, let to):
            name = "station_renamed"
            fields = [("from", .string(from)), ("to", .string(to))]
        case .listenersChanged(let count, let joined, let left):
            name = left ? "listener_left" : "listener_joined"
            fields = [("listeners", .int(count))] + (joined.map { [("listener", JSON.string($0))] } ?? [])
        case .voteCounted(let trackID, let choice, let tally, let voter, let voterName):
            name = "vote_counted"
            fields =
                [
                    ("track_id", .string(trackID)), ("choice", .string(choice.name)), ("up", .int(tally.up)),
                    ("down", .int(tally.down)), ("voter", .string(voter)),
                ] + (voterName.map { [("name", JSON.string($0))] } ?? [])
        case .chat(let line):
            name = "chat"
            fields = [
                ("sender", .string(line.sender)), ("message_id", .int(line.messageID)), ("name", .string(line.name)),
                ("text", .string(line.text)),
            ]
        case .djSettings(let repeatMode, let volume):
            name = "dj_settings"
            fields = [("repeat", .string(repeatMode)), ("volume", .int(volume))]
        case .notice(let message):
            name = "notice"
            fields = [("message", .string(message))]
        case .roster(let roster):
            name = "roster"
            fields = [("listeners", .int(roster.total)), ("names", Render.roster(roster.entries))]
        case .trackSkipped(let notice):
            name = "track_skipped"
            fields = [
                ("track_id", .string(notice.trackID)), ("title", .string(notice.title)),
                ("reason", .string(notice.reason.name)), ("down", .int(notice.down)), ("room", .int(notice.room)),
            ]
        case .stationStopped(let station, let dropped):
            name = "station_stopped"
            fields = [("station", .string(station)), ("dropped", Self.json(dropped))]
        case .listenerSettings(let settings):
            name = "listener_settings"
            fields = [
                ("muted", .bool(settings.muted)), ("volume", .int(settings.volume)),
                ("vote", settings.vote.map { .string($0.name) } ?? .null),
                ("vote_track_id", settings.voteTrackID.map(JSON.string) ?? .null),
            ]
        case .listenerStopped(let dropped):
            name = "listener_stopped"
            fields = [("dropped", Self.json(dropped))]
        case .speakers(let speakers):
            name = "speakers"
            fields = [("speakers", .array(speakers.map(\.json)))]
        case .speakerSettings(let settings):
            name = "speaker_settings"
            fields = [
                ("volume", .int(settings.volume)), ("muted", .bool(settings.muted)),
                ("delay_ms", .int(settings.delayMs)),
            ]
        case .liveStatus(let status):
            name = "live_status"
            let c = status.counters
            fields = [
                ("received", .int(c.received)), ("played", .int(c.played)), ("recovered", .int(c.recovered)),
                ("concealed", .int(c.concealed)), ("late", .int(c.late)), ("duplicate", .int(c.duplicate)),
                ("too_far_ahead", .int(c.tooFarAhead)), ("repairs", .int(c.repairs)),
                ("repairs_late", .int(c.repairsLate)), ("undecodable_blocks", .int(c.undecodableBlocks)),
                ("underruns", .int(c.underruns)), ("placements", .int(status.placements)),
                ("skipped", .int(status.skipped)), ("error_us", .int(Int(status.errorUs))),
                ("ppm", .int(Int(status.ppm.rounded()))), ("asked", .int(Int(status.network.asked))),
                ("arrived_after_asking", .int(Int(status.network.arrivedAfterAsking))),
                ("lost", .int(Int(status.network.lost))), ("dropped", Self.json(status.network.dropped)),
                ("real_time", .bool(status.realTime)),
            ]
        case .liveSent(let sent):
            name = "live_sent"
            fields = [
                ("frames", .int(Int(sent.frames))), ("repairs", .int(Int(sent.repairs))),
                ("short_blocks", .int(Int(sent.shortBlocks))),
                ("unprotected_blocks", .int(Int(sent.unprotectedBlocks))),
                ("loss_reports", .int(Int(sent.lossReports))),
                ("loss_reports_explained", .int(Int(sent.lossReportsExplained))), ("resent", .int(Int(sent.resent))),
                ("resends_missed", .int(Int(sent.resendsMissed))),
                ("resends_over_budget", .int(Int(sent.resendsOverBudget))),
                ("resends_ignored", .int(Int(sent.resendsIgnored))), ("dropped", Self.json(sent.dropped)),
            ]
        case .tunedIn(let summary):
            name = "tuned_in"
            fields = [("station", Render.station(summary))]
        case .stationSilent(let station):
            name = "station_silent"
            fields = [("station", .string(station))]
        case .stationBack(let station):
            name = "station_back"
            fields = [("station", .string(station))]
        case .stationKeyChanged(let station, let known, let shown):
            name = "station_key_changed"
            fields = [("station", .string(station)), ("known_key", .string(known)), ("shown_key", .string(shown))]
        case .stationGone(let station, let reason):
            name = "station_gone"
            fields = [("station", .string(station)), ("reason", .string(reason))]
        case .state(let snapshot, let position, let change):
            name = change == .progress ? "progress" : "state"
            fields = [("change", .string(change.rawValue))] + Render.snapshot(snapshot, positionNs: position)
        case .warning(let message):
            name = "warning"
            fields = [("message", .string(message))]
        case .searchResults(let term, let tracks):
            name = "search_results"
            fields = [("term", .string(term)), ("tracks", .array(tracks.map(Render.track)))]
        case .queued(let tracks, let length):
            name = "queued"
            fields = [("tracks", .array(tracks.map(Render.track))), ("queue_length", .int(length))]
        case .upNext(let list):
            name = "up_next"
            fields = RequestText.list(list)
        case .requestAnswered(let ack, let guest):
            name = "request"
            fields = [
                ("guest", .string(guest)), ("status", .string(ack.status.name)),
                ("request_id", ack.queueID == 0 ? .null : .int(ack.queueID)), ("position", .int(ack.position)),
                ("title", .string(ack.title)), ("artist", .string(ack.artist)),
            ]
        case .stationsChanged(let stations, let change):
            name = "stations"
            fields = [("change", .string(Self.describe(change))), ("stations", .array(stations.map(Render.station)))]
        }
        // Station names, titles and guests' words, cleaned as on a terminal (docs/SECURITY.md).
        let event = JSON.object([("event", .string(name)), ("time_ns", .int(NodeClock.realTimeNs()))] + fields)
        return event.shown.rendered
    }

    static func json(_ dropped: DropCounters) -> JSON {
        .object(dropped.counts.sorted { $0.key < $1.key }.map { ($0.key, JSON.int($0.value)) })
    }

    /// " Dropped 3 datagrams (2 bad_signature, 1 truncated)." or nothing.
    static func describe(_ dropped: DropCounters) -> String {
        guard dropped.total > 0 else { return "" }
        let parts = dropped.counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
        return " Dropped \(dropped.total) bad datagrams or records (\(parts.joined(separator: ", ")))."
    }

    static func describe(_ change: StationDirectory.Change) -> String {
        switch change {
        case .appeared: "appeared"
        case .updated: "updated"
        case .vanished: "vanished"
        }
    }

    // MARK: Plain lines

    private func line(_ event: NodeEvent) -> String? {
        switch event {
        case .stationStarted(
            let station, let id, let interface, let address, let port, let group, let fingerprint, let count,
            let isPrivate):
            return "\(isPrivate ? "Private station" : "Station") '\(station)' (ID \(id.hex), key \(fingerprint)) on "
                + "\(interface) \(PeerAddress(host: address, port: port)), group \(group), \(count) tracks queued."
        case .joinCode(let code):
            return
                (["Join code: \(code.grouped); guests pass --code \(code.grouped), or scan:"]
                + WebQRCode.terminalLines(code.grouped) + ["Only guests with the code find, hear, vote and chat."])
                .joined(separator: "\n")
        case .stationPublished(let station):
            return "Announced as '\(station)' on the local network."
        case .webPage(let url, let djURL):
            return
                (["Guests: open \(url) on a phone, or scan:"] + WebQRCode.terminalLines(url)
                + ["Your DJ page (keep it to yourself): \(djURL)"]).joined(separator: "\n")
        case .webQR(let forDJ):
            guard let urls = state.withLock({ $0.urls }) else { return nil }
            let url = forDJ ? urls.dj : urls.guests
            return
                ([forDJ ? "Your DJ page (keep it to yourself): \(url)" : "Guests: \(url)"]
                + WebQRCode.terminalLines(url)).joined(separator: "\n")
        case .discoveryDaemon(let running):
            return running
                ? "avahi-daemon is back: announcing and finding stations again."
                : "avahi-daemon went away: playing goes on, and the station is announced and found again once it is back."
        case .stationRenamed(let from, let to):
            return "The name '\(from)' is taken on this network; the station is announced as '\(to)'."
        case .listenersChanged(let count, let joined, let left):
            if let joined { return "Listener joined: \(joined) (\(count) listening)." }
            return left ? "A listener left (\(count) listening)." : nil
        case .chat(let line):
            // Both are the guest's own text: cleaned of control characters before the terminal.
            let name = GuestName.fromNetwork(line.name)?.value ?? line.sender
            return "💬 \(name): \(ChatBook.validText(line.text) ?? "")"
        case .djSettings(let repeatMode, let volume):
            return "Repeat \(repeatMode), volume \(volume)."
        case .notice(let message):
            return message
        case .roster:
            return nil  // joins and leaves have their own lines; the live view shows the names
        case .trackSkipped(let notice):
            switch notice.reason {
            case .crowd:
                return "Skipped “\(GuestName.cleaned(notice.title))”: the crowd voted it down "
                    + "(\(notice.down) down of \(notice.room))."
            case .dj:
                return "The DJ skipped “\(GuestName.cleaned(notice.title))”."
            }
        case .voteCounted(_, let choice, let tally, let voter, let name):
            // A guest by the name it gave (its own word: cleaned again here), else its key.
            let who = name.map(GuestName.cleaned).flatMap { $0.isEmpty ? nil : $0 } ?? voter
            return "Vote \(choice.name) from \(who): \(tally.up) up, \(tally.down) down."
        case .stationStopped(let station, let dropped):
            return "Station '\(station)' is off the air." + Self.describe(dropped)
        case .listenerSettings:
            return nil  // the notices say what changed; the live view shows the settings
        case .speakers(let speakers):
            guard !speakers.isEmpty else { return "No speakers." }
            return "Speakers: " + speakers.map(\.line).joined(separator: "; ") + "."
        case .speakerSettings(let settings):
            return
                "Speaker at volume \(settings.volume)\(settings.muted ? ", muted" : ""), delay \(settings.delayMs) ms."

        case .listenerStopped(let dropped):
            return dropped.total > 0 ? "Stopped listening." + Self.describe(dropped) : nil
        case .liveStatus, .liveSent:
            return nil  // counters for --json-events; the terminal says nothing every 5 s
        case .tunedIn(let summary):
            return "Tuned in to '\(summary.name)' (\(summary.id.hex)) at \(summary.address):\(summary.port)."
        case .stationSilent(let station):
            return "Station '\(station)' went silent; waiting for it to come back (Ctrl-C to stop)."
        case .stationBack(let station):
            return "Station '\(station)' is back."
        case .stationKeyChanged(let station, let known, let shown):
            return
                "WARNING: '\(station)' shows another key (\(shown)) than the one this machine met before (\(known)). "
                + "It may be an impostor."
        case .stationGone(let station, let reason):
            return "Station '\(station)' is off the air: \(reason)"
        case .state(let snapshot, let position, let change):
            guard change != .progress else { return nil }
            let track = snapshot.nowPlaying
            let status = snapshot.anchor.isPaused ? "Paused" : "Playing"
            let duration = Render.durationNs(track)
            return "\(status): \(Render.trackLine(track)) \(Render.time(position))/\(Render.time(duration))"
                + " | \(snapshot.tally.up) up, \(snapshot.tally.down) down | \(snapshot.listenerCount) listening"
        case .warning(let message):
            return "Warning: \(message)"
        case .searchResults(let term, let tracks):
            guard !tracks.isEmpty else { return "No playable tracks for '\(term)'." }
            let rows = tracks.prefix(10).enumerated().map { index, track in
                "  \(index + 1). \(Render.trackLine(track))  ID \(track.id)"
            }
            return (["Results for '\(term)' (queue one with 'add ID'):"] + rows).joined(separator: "\n")
        case .queued(let tracks, let length):
            return "Queued \(tracks.map { "“\($0.title)”" }.joined(separator: ", ")) (\(length) in the queue)."
        case .upNext(let list):
            let requests = RequestText.lines(list, limit: 3, requestsOnly: true)
            let label = state.withLock { $0.live } ? "Wishes: " : "Requests: "
            return requests.isEmpty ? nil : label + requests.joined(separator: " | ")
        case .requestAnswered(let ack, let guest):
            return AckText.sentence(ack, guest: guest)
        case .stationsChanged:
            return nil
        }
    }

    // MARK: Live view

    /// The page's two links with one QR code: the guests' (to share), or the DJ's (`w`, to open
    /// the DJ's page on a phone; `w` again hides it). On a terminal too short for the code, the
    /// links alone.
    static func webSection(guests: String, dj: String, forDJ: Bool) -> LiveSection {
        let qr = WebQRCode.terminalLines(forDJ ? dj : guests).map { "   " + $0 }
        return forDJ
            ? LiveSection(
                ["   your DJ page (keep it to yourself; w: back to the guests' code): \(dj)"] + qr,
                compact: ["   your DJ page (keep it to yourself): \(dj)", "   guests: \(guests)"])
            : LiveSection(
                ["   guests: \(guests)  (scan to join)"] + qr + ["   your DJ page: \(dj)  (w: its QR code)"],
                compact: ["   guests: \(guests)  (a taller terminal shows its QR code)", "   your DJ page: \(dj)"])
    }

    /// The DJ's station in the view, below the keys and above the QR code: its ID, key and
    /// addresses, and the name it is announced under once Avahi has it (the lines the terminal used
    /// to print above the view as they came, after the view had started).
    static func stationSection(_ station: (line: String, group: String), announced: String?) -> LiveSection {
        let announcement = announced.map { "announced as '\(Render.plain($0))' on the local network" } ?? "announcing…"
        return LiveSection(
            ["   " + station.line, "   group \(station.group)  " + announcement],
            compact: ["   " + announcement])
    }

    /// The view's first lines: the station, the track and its progress, the votes (a listener's
    /// own among them), who listens, and the keys. Network text is cleaned before it is styled.
    static func header(
        _ snapshot: StateSnapshot?, positionNs: Int64, listening: String, keys: [String],
        listener: ListenerSettings?, style: TerminalStyle
    ) -> [String] {
        let keyLines = keys.map { style.dim("   " + $0) }
        guard let snapshot else { return (listening.isEmpty ? [] : [listening]) + keyLines }
        let track = snapshot.nowPlaying
        let duration = Render.durationNs(track)
        let tally = snapshot.tally
        // A listener's own line: its vote (none after a track change: the DJ resets votes), volume, mute.
        let own = listener.map { listener in
            let mine = listener.vote(on: track?.id).flatMap { $0 == .clear ? nil : $0.name }
            return "   your vote: " + (mine.map { style.inverse(" \($0) ") } ?? "none") + "   volume \(listener.volume)"
                + (listener.muted ? "   " + style.inverse(" muted here ") : "")
        }
        return [
            style.bold(Render.plain(snapshot.stationName))
                + "  \(snapshot.listenerCount) listening  track \(snapshot.queueIndex + 1)/\(snapshot.queueLength)",
            (snapshot.anchor.isPaused ? "|| " : "▶  ") + Render.plain(Render.trackLine(track)),
            "   \(Render.progressBar(positionNs, duration)) \(Render.time(positionNs)) / \(Render.time(duration))",
            "   votes \(Render.voteBar(tally))  " + style.green("\(tally.up) up") + "  "
                + style.red("\(tally.down) down"),
        ] + (own.map { [$0] } ?? []) + (listening.isEmpty ? [] : [listening]) + keyLines
    }

    private func live(_ event: NodeEvent) {
        guard let screen else { return }
        state.withLock { view in
            switch event {
            case .state(let snapshot, let position, _):
                view.snapshot = snapshot
                view.positionNs = position
            case .webPage(let url, let djURL):
                view.web = Self.webSection(guests: url, dj: djURL, forDJ: false)
            case .webQR(let forDJ):
                if let urls = view.urls { view.web = Self.webSection(guests: urls.guests, dj: urls.dj, forDJ: forDJ) }
            case .joinCode(let code):
                let line = "   join code: \(code.grouped)  (guests: --code \(code.grouped), or scan)"
                view.code = LiveSection(
                    [line] + WebQRCode.terminalLines(code.grouped).map { "   " + $0 }, compact: [line])
            case .djSettings(let repeatMode, let volume):
                view.repeatMode = repeatMode
                view.volume = volume
            case .stationStarted(
                _, let id, let interface, let address, let port, let group, let fingerprint, _, let isPrivate):
                view.station = (
                    "\(isPrivate ? "private station" : "station") ID \(id.hex)  key \(fingerprint)  on \(interface) "
                        + "\(PeerAddress(host: address, port: port))",
                    group.description
                )
            case .stationPublished(let name):
                view.announced = name
            case .listenerSettings(let settings):
                view.listener = settings
            case .roster(let roster):
                view.roster = (roster, .now)
            case .upNext(let list):
                view.upNext = RequestText.lines(list, limit: 4).map { "     " + Render.plain($0) }
            default:
                if let text = line(event) { screen.print(Render.plain(text)) }
                return
            }
            screen.show(sections(view))
        }
    }

    private func sections(_ view: ViewState) -> [LiveSection] {
        let dj = role == "dj"
        let keys =
            dj
            ? TerminalKeys.djHelp(repeatMode: view.repeatMode, volume: view.volume)
            : TerminalKeys.listenerHelp(muted: view.listener.muted)
        let listening =
            view.roster.map { roster, at in
                let elapsed = ContinuousClock.now - at
                return Render.listeningLine(
                    roster,
                    plusMs: Int64(elapsed.components.seconds) * 1000
                        + Int64(elapsed.components.attoseconds / 1_000_000_000_000_000))
            } ?? ""
        let header = Self.header(
            view.snapshot, positionNs: view.positionNs, listening: listening, keys: keys,
            listener: dj ? nil : view.listener, style: style)
        let station = view.station.map { Self.stationSection($0, announced: view.announced) }
        return [LiveSection(header)] + [station, view.web, view.code].compactMap { $0 }
            + [Self.upNextSection(view.upNext, live: view.live)]
    }

    /// What guests asked for, under "up next", or "wishes" on a live station (which plays no queue).
    static func upNextSection(_ lines: [String], live: Bool) -> LiveSection {
        let shown = lines.isEmpty ? [] : [live ? "   wishes (a live station plays no queue):" : "   up next:"] + lines
        return LiveSection(shown, compact: Array(shown.prefix(2)))
    }
}
