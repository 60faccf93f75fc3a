import PartyRadioCatalog

/// Renders catalog results for a terminal. Pure.
enum CatalogTable {
    /// The numbered table: #, title, artist, album, time, track ID; `*` marks a track without preview.
    static func render(_ tracks: [CatalogTrack]) -> String {
        let header = ["#", "TITLE", "ARTIST", "ALBUM", "TIME", "TRACK ID"]
        var rows: [[String]] = []
        for (index, track) in tracks.enumerated() {
            rows.append([
                String(index + 1), track.title + (track.isPlayable ? "" : " *"), track.artist, track.album ?? "–",
                duration(track.durationMs), track.trackID,
            ])
        }
        let caps = [4, 40, 26, 28, 6, 20]
        var widths = header.map(displayWidth)
        for row in rows {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], displayWidth(cell)) }
        }
        for column in widths.indices { widths[column] = min(widths[column], caps[column]) }
        let rightAligned: Set<Int> = [0, 4]
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                let clipped = clip(cell, to: widths[column])
                let padding = String(repeating: " ", count: max(0, widths[column] - displayWidth(clipped)))
                return rightAligned.contains(column) ? padding + clipped : clipped + padding
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }
        var lines = [line(header)] + rows.map(line)
        if tracks.contains(where: { !$0.isPlayable }) { lines.append("* no preview: cannot be queued.") }
        return lines.joined(separator: "\n")
    }

    /// Playlists (Apple Music search): #, name, curator, ID.
    static func render(_ playlists: [CatalogPlaylist]) -> String {
        var lines = ["PLAYLISTS"]
        for (index, playlist) in playlists.enumerated() {
            lines.append(
                "\(index + 1). \(playlist.name)" + (playlist.curator.map { " — \($0)" } ?? "")
                    + "  (\(playlist.playlistID))")
        }
        return lines.joined(separator: "\n")
    }

    /// `m:ss` (whole seconds, as Apple's apps show them), or `–` when unknown.
    static func duration(_ milliseconds: Int?) -> String {
        guard let milliseconds, milliseconds >= 0 else { return "–" }
        let seconds = milliseconds / 1000
        let rest = seconds % 60
        return "\(seconds / 60):\(rest < 10 ? "0" : "")\(rest)"
    }

    /// Terminal columns a string takes: East Asian wide characters and emoji count two, combining marks none.
    static func displayWidth(_ text: String) -> Int {
        text.reduce(0) { width, character in width + characterWidth(character) }
    }

    static func characterWidth(_ character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first else { return 0 }
        switch scalar.value {
        case 0x0300...0x036F, 0x200B...0x200F: return 0
        case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return 2
        default: return 1
        }
    }

    /// `text` cut to `width` columns with an ellipsis.
    static func clip(_ text: String, to width: Int) -> String {
        guard displayWidth(text) > width else { return text }
        var result = ""
        var used = 0
        for character in text {
            let next = characterWidth(character)
            if used + next > width - 1 { break }
            result.append(character)
            used += next
        }
        return result + "…"
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
