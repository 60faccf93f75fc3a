import PartyRadioCore
import PartyRadioNode

/// Text and JSON forms of the things commands print.
enum Render {
    /// Text for a terminal: station names, titles, tags and guests' words come from the network
    /// and from files, so it goes through ``ShownText`` (whole escape sequences, control, invisible
    /// and bidirectional characters dropped, stacked combining marks cut; a tab or carriage return
    /// becomes a space); line breaks the program itself puts in are kept.
    static func plain(_ text: String) -> String { ShownText.cleaned(text, keepingLineBreaks: true) }

    static func time(_ ns: Int64) -> String {
        let seconds = max(0, ns / Nanos.perSecond)
        return "\(seconds / 60):" + (seconds % 60 < 10 ? "0" : "") + "\(seconds % 60)"
    }

    static func progressBar(_ position: Int64, _ duration: Int64, width: Int = 30) -> String {
        let filled = duration > 0 ? Int(min(1, Double(position) / Double(duration)) * Double(width)) : 0
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
    }

    static func voteBar(_ tally: Tally, width: Int = 20) -> String {
        let total = Int(tally.up + tally.down)
        let up = total > 0 ? Int((Double(tally.up) / Double(total) * Double(width)).rounded()) : 0
        let down = total > 0 ? width - up : 0
        return "+" + String(repeating: "+", count: up) + String(repeating: "-", count: down)
            + String(repeating: " ", count: width - up - down) + "-"
    }

    static func trackLine(_ track: Track?) -> String {
        guard let track else { return "(nothing playing)" }
        return "\(track.title) — \(track.artist)" + (track.album.isEmpty ? "" : " (\(track.album))")
    }

    static func durationNs(_ track: Track?) -> Int64 { Int64(track?.durationMs ?? 0) * Nanos.perMillisecond }

    // MARK: JSON

    static func track(_ track: Track?) -> JSON {
        guard let track else { return .null }
        return .object([
            ("track_id", .string(track.id)), ("title", .string(track.title)), ("artist", .string(track.artist)),
            ("album", .string(track.album)), ("duration_ms", .int(track.durationMs)), ("source", .string(track.source)),
        ])
    }

    static func snapshot(_ snapshot: StateSnapshot, positionNs: Int64) -> [(String, JSON)] {
        [
            ("station", .string(snapshot.stationName)),
            ("now_playing", track(snapshot.nowPlaying)),
            ("track_id", snapshot.nowPlaying.map { .string($0.id) } ?? .null),
            ("position_ms", .int(positionNs / Nanos.perMillisecond)),
            ("paused", .bool(snapshot.anchor.isPaused)),
            (
                "anchor",
                .object([
                    ("dj_time_ns", .int(snapshot.anchor.djTime.ns)), ("position_ns", .int(snapshot.anchor.positionNs)),
                    ("rate", .double(Double(snapshot.anchor.rateMicros) / 1_000_000)),
                ])
            ),
            ("up", .int(snapshot.tally.up)), ("down", .int(snapshot.tally.down)),
            ("listeners", .int(snapshot.listenerCount)), ("queue_length", .int(snapshot.queueLength)),
            ("queue_index", .int(snapshot.queueIndex)),
        ]
    }

    /// Guest names with how long each has listened; the names are the guests' own text, so they
    /// are cleaned of control characters before a terminal sees them.
    static func roster(_ entries: [Roster.Entry]) -> JSON {
        .array(
            entries.map { entry in
                .object([("name", .string(entry.name)), ("listening_for_s", .int(entry.listeningForMs / 1000))])
            })
    }

    /// "   listening: alice (3 min), bob (12 s) +4 more" for the live views.
    /// Who listens and for how long: `plusMs` is the time since the DJ counted the roster (it
    /// sends one when a guest joins or leaves, and the view's line would stand still in between).
    static func listeningLine(_ roster: Roster, plusMs: Int64 = 0) -> String {
        guard roster.total > 0 else { return "   nobody listening yet" }
        let names = roster.entries.map { entry in
            let name = GuestName.fromNetwork(entry.name)?.value ?? "?"
            let seconds = (Int64(entry.listeningForMs) + max(0, plusMs)) / 1000
            return "\(name) (\(seconds < 60 ? "\(seconds) s" : "\(seconds / 60) min"))"
        }
        let more = Int(roster.total) - roster.entries.count
        return "   listening: " + names.joined(separator: ", ") + (more > 0 ? " +\(more) more" : "")
    }

    /// The station's web page (from its address and the TXT record's `web` port), nil without one.
    static func webURL(_ summary: StationSummary) -> String? {
        guard summary.advert.webPort != 0 else { return nil }
        return URLHost.httpOrigin(summary.address, port: summary.advert.webPort) + "/"
    }

    static func station(_ summary: StationSummary) -> JSON {
        .object(
            [
                ("id", .string(summary.id.hex)), ("name", .string(summary.name)),
                ("service_name", .string(summary.serviceName)), ("address", .string(summary.address)),
                ("port", .int(summary.port)), ("group", .string(summary.advert.group.description)),
                ("key_fingerprint", .string(summary.advert.publicKey.fingerprint)),
                ("private", .bool(summary.advert.isPrivate)), ("web_port", .int(summary.advert.webPort)),
                ("web", webURL(summary).map(JSON.string) ?? .null),
                ("listener_names", roster(summary.listeners)),
            ] + snapshot(summary.snapshot, positionNs: summary.positionNs).filter { $0.0 != "station" })
    }
}
