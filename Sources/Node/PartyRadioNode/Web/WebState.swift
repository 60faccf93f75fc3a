import PartyRadioCore

/// The page state (docs/WEB.md, "The page state") made from the DJ machine, on the DJ's thread.
/// Text goes in as the guests and the catalog wrote it (JSON-quoted, without the characters that
/// are never shown): the page shows it as text.
enum WebState {
    /// Chat lines the page gets.
    static let chatLines = 50

    /// - Parameters:
    ///   - mediaPrefix: the media server's own URL prefix (`http://ADDR:PORT/media/`): tracks served
    ///     there are given to the page as same-origin paths.
    ///   - artwork: whether `/art/ID` can find catalog artwork (the DJ has a catalog).
    /// Where the page finds a track's artwork: a catalog track's from the catalog (`artwork`: the
    /// DJ has one), a live player's track's when the player names some; nil for the rest.
    static func artworkPath(of track: Track, catalog: Bool, live: String?) -> JSON {
        let has = track.isLive ? track.id == live : catalog && !track.id.hasPrefix("local:")
        return has ? .string("/art/" + track.id) : .null
    }

    static func json(_ machine: DJMachine, at now: LocalTime, mediaPrefix: String, artwork: Bool) -> String {
        let dj = DJTime(onTheDJ: now)
        let snapshot = machine.engine.snapshot(now: dj)
        let anchor = snapshot.anchor
        let list = machine.upNext
        let chat = machine.chat.lines.suffix(chatLines)
        // A live station's followed player's track, when the player names artwork for it.
        let liveArt = machine.livePlayer?.track.flatMap { $0.artURL == nil ? nil : $0.stationTrack.id }
        let playing: JSON =
            snapshot.nowPlaying.map { track in
                .object([
                    ("id", .string(track.id)), ("title", .string(track.title)), ("artist", .string(track.artist)),
                    ("album", .string(track.album)), ("duration_ms", .int(track.durationMs)),
                    ("artwork", artworkPath(of: track, catalog: artwork, live: liveArt)),
                    ("media", media(track.source, prefix: mediaPrefix)),
                    // A live station's segment: the page plays it from GET /api/live.
                    ("live", .bool(track.isLive)),
                ])
            } ?? .null
        let state: JSON = .object([
            ("station", .string(snapshot.stationName)),
            ("now", playing),
            (
                "anchor",
                .object([
                    ("at_us", .int(anchor.djTime.ns / 1000)), ("position_us", .int(anchor.positionNs / 1000)),
                    ("rate", .double(Double(anchor.rateMicros) / Double(PlaybackAnchor.normalRate))),
                ])
            ),
            ("paused", .bool(anchor.isPaused)),
            ("sent_us", .int(dj.ns / 1000)),
            ("tally", .object([("up", .int(snapshot.tally.up)), ("down", .int(snapshot.tally.down))])),
            ("listeners", .int(snapshot.listenerCount)),
            (
                "queue",
                .object([
                    ("mode", .string(list.mode.rawValue)), ("total", .int(list.total)),
                    ("entries", .array(list.entries.map(entry))),
                ])
            ),
            (
                "chat",
                .array(
                    chat.map { line in
                        .object([
                            ("id", .int(line.messageID)), ("sender", .string(line.sender)),
                            ("name", .string(line.name)), ("text", .string(line.text)),
                        ])
                    })
            ),
            ("crowd_skip_percent", .int(machine.crowdSkipPercent)),
            ("requests", .string(list.mode.rawValue)),
        ])
        return state.shown.rendered
    }

    static func entry(_ entry: QueueList.Entry) -> JSON {
        .object([
            ("queue_id", .int(entry.queueID)), ("track_id", .string(entry.trackID)), ("title", .string(entry.title)),
            ("artist", .string(entry.artist)), ("requester", .string(entry.isRequest ? entry.requester : "")),
            ("up", .int(entry.tally.up)), ("down", .int(entry.tally.down)),
            ("awaiting_approval", .bool(entry.awaitingApproval)),
        ])
    }

    /// Where the page fetches a track: a same-origin path for the DJ's own files, the catalog's
    /// https URL as it is, nothing for anything else.
    static func media(_ source: String, prefix: String) -> JSON {
        if source.hasPrefix(prefix) { return .string("/media/" + source.dropFirst(prefix.count)) }
        if source.hasPrefix("https://") { return .string(source) }
        return .null
    }

    /// A track as search results show it.
    static func result(_ track: Track, from: String) -> JSON {
        .object([
            ("id", .string(track.id)), ("title", .string(track.title)), ("artist", .string(track.artist)),
            ("album", .string(track.album)), ("duration_ms", .int(track.durationMs)), ("from", .string(from)),
        ])
    }
}
