import Foundation
import PartyRadioCore
import PartyRadioStorage

/// Renders the DJ's stats (`partyradio stats`) as text or JSON. Pure. Titles, artists and station
/// names come from files and the catalog: the text drops their control characters.
enum StatsReport {
    /// One block per night: a heading, the table of tracks, and the best and the worst track.
    static func text(_ nights: [DJStore.Night]) -> String {
        var out = ""
        for (number, night) in nights.enumerated() {
            if number > 0 { out += "\n" }
            let tracks = TrackStats.summarize(night.plays)
            let plays = night.plays.count
            out +=
                "Night \(night.id): \(clean(night.station)), \(period(night)), \(plays) play\(plays == 1 ? "" : "s")\n"
            guard !tracks.isEmpty else {
                out += "No track played.\n"
                continue
            }
            out += table(tracks) + "\n"
            let (best, worst) = TrackStats.bestAndWorst(tracks)
            if let best, let worst {
                out += "Best:  \(summary(best))\n"
                out += "Worst: \(summary(worst))\n"
            } else {
                out += "Best and worst: nobody voted.\n"
            }
        }
        return out
    }

    static func table(_ tracks: [TrackStats]) -> String {
        let header = ["TITLE", "ARTIST", "PLAYS", "LISTENERS", "UP", "DOWN", "APPROVAL", "SKIPS", "REQUESTED BY"]
        let rows = tracks.map { track in
            [
                clean(track.title), clean(track.artist), String(track.plays), String(track.mostListenersAtStart),
                String(track.up), String(track.down), approval(track), skips(track), requested(track),
            ]
        }
        let caps = [40, 26, 5, 9, 5, 5, 8, 16, 40]
        var widths = header.map(CatalogTable.displayWidth)
        for row in rows {
            for (column, cell) in row.enumerated() {
                widths[column] = max(widths[column], CatalogTable.displayWidth(cell))
            }
        }
        for column in widths.indices { widths[column] = min(widths[column], caps[column]) }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                let clipped = CatalogTable.clip(cell, to: widths[column])
                let padding = String(repeating: " ", count: max(0, widths[column] - CatalogTable.displayWidth(clipped)))
                return (2...6).contains(column) ? padding + clipped : clipped + padding
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }
        return ([line(header)] + rows.map(line)).joined(separator: "\n")
    }

    static func json(_ nights: [DJStore.Night]) -> JSON {
        .object([
            (
                "nights",
                .array(
                    nights.map { night in
                        let tracks = TrackStats.summarize(night.plays)
                        let (best, worst) = TrackStats.bestAndWorst(tracks)
                        return .object([
                            ("night", .integer(night.id)),
                            ("station", .string(night.station)),
                            ("started_at", .string(timestamp(night.startedAt))),
                            ("ended_at", night.endedAt.map { JSON.string(timestamp($0)) } ?? .null),
                            ("plays", .int(night.plays.count)),
                            ("tracks", .array(tracks.map { json($0) })),
                            ("best", best.map { json($0) } ?? .null),
                            ("worst", worst.map { json($0) } ?? .null),
                        ])
                    })
            )
        ])
    }

    static func json(_ track: TrackStats) -> JSON {
        .object([
            ("track_id", .string(track.trackID)),
            ("title", .string(track.title)),
            ("artist", .string(track.artist)),
            ("plays", .int(track.plays)),
            ("listeners_at_start", .int(track.mostListenersAtStart)),
            ("up", .int(track.up)),
            ("down", .int(track.down)),
            ("approval_percent", track.approvalPercent.map { JSON.double(($0 * 10).rounded() / 10) } ?? .null),
            ("skips", .int(track.skips)),
            ("dj_skips", .int(track.djSkips)),
            ("crowd_skips", .int(track.crowdSkips)),
            ("requests", .int(track.requests)),
            ("requested_by", .array(track.requesters.map { .string($0) })),
        ])
    }

    private static func clean(_ text: String) -> String {
        let cleaned = GuestName.cleaned(text)
        return cleaned.isEmpty ? "–" : cleaned
    }

    private static func approval(_ track: TrackStats) -> String {
        track.approvalPercent.map { "\(Int($0.rounded())) %" } ?? "–"
    }

    private static func skips(_ track: TrackStats) -> String {
        var parts: [String] = []
        if track.djSkips > 0 { parts.append("\(track.djSkips) dj") }
        if track.crowdSkips > 0 { parts.append("\(track.crowdSkips) crowd") }
        return parts.isEmpty ? "0" : parts.joined(separator: ", ")
    }

    /// "–" for the DJ's own plays; else how many plays were requests and by whom: "2: Ann, Bob".
    private static func requested(_ track: TrackStats) -> String {
        guard track.requests > 0 else { return "–" }
        return "\(track.requests): " + track.requesters.map(clean).joined(separator: ", ")
    }

    private static func summary(_ track: TrackStats) -> String {
        let votes = track.up + track.down
        return "\(clean(track.title)) — \(clean(track.artist)) (\(approval(track)) of \(votes) vote"
            + "\(votes == 1 ? "" : "s"), \(track.plays) play\(track.plays == 1 ? "" : "s"))"
    }

    private static func period(_ night: DJStore.Night) -> String {
        let start = timestamp(night.startedAt)
        guard let end = night.endedAt else { return "from \(start) (still on, or stopped without a goodbye)" }
        return "\(start) to \(timestamp(end))"
    }

    /// ISO 8601 in UTC, to the second.
    static func timestamp(_ time: DJTime) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: Double(time.ns) / 1e9))
    }
}
