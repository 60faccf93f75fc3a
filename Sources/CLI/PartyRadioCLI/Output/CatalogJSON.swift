import PartyRadioCatalog
import PartyRadioCore

/// The catalog commands' `--json` output, snake_case like every other command's. Every key is
/// always there; a value Apple left out is `null`, never absent.
enum CatalogJSON {
    /// `search --json`. `playlists` only with `--apple-music`, where playlists can be asked for.
    static func search(_ options: Command.SearchOptions, _ result: CatalogResult) -> JSON {
        var fields: [(String, JSON)] = [
            ("source", .string(options.appleMusic ? "apple-music" : "itunes")), ("term", .string(options.term)),
            ("country", .string(options.country)), ("limit", .int(options.limit)),
            ("explicit", .bool(options.allowExplicit)),
        ]
        fields += origin(result)
        fields.append(("tracks", .array(result.tracks.map(track))))
        if options.appleMusic { fields.append(("playlists", .array(result.page.playlists.map(playlist)))) }
        fields += [("skipped", strings(result.page.skipped)), ("notices", strings(result.notices))]
        return .object(fields)
    }

    /// `lookup --json`: `missing` lists the IDs asked for that the store does not have.
    static func lookup(_ options: Command.LookupOptions, _ result: CatalogResult, missing: [String]) -> JSON {
        .object(
            [("ids", strings(options.ids)), ("country", .string(options.country))] + origin(result) + [
                ("tracks", .array(result.tracks.map(track))), ("missing", strings(missing)),
                ("notices", strings(result.notices)),
            ])
    }

    /// `charts --json`.
    static func charts(_ options: Command.ChartsOptions, _ result: CatalogResult) -> JSON {
        .object(
            [("country", .string(options.country)), ("limit", .int(options.limit))] + origin(result) + [
                ("tracks", .array(result.tracks.map(track))), ("skipped", strings(result.page.skipped)),
                ("notices", strings(result.notices)),
            ])
    }

    /// `token --json`: the token, its claims (Unix seconds) and the expiry in ISO 8601.
    static func token(_ token: String, claims: DeveloperTokenClaims, expires: String) -> JSON {
        .object([
            ("token", .string(token)), ("team_id", .string(claims.teamID)), ("key_id", .string(claims.keyID)),
            ("issued_at", .int(claims.issuedAt)), ("expires_at", .int(claims.expiresAt)),
            ("expires", .string(expires)),
        ])
    }

    static func track(_ track: CatalogTrack) -> JSON {
        .object([
            ("track_id", .string(track.trackID)), ("title", .string(track.title)), ("artist", .string(track.artist)),
            ("album", string(track.album)), ("duration_ms", track.durationMs.map(JSON.int) ?? .null),
            ("preview_url", string(track.previewURL)), ("artwork_url", string(track.artworkURL)),
            ("explicit", track.isExplicit.map(JSON.bool) ?? .null),
        ])
    }

    static func playlist(_ playlist: CatalogPlaylist) -> JSON {
        .object([
            ("playlist_id", .string(playlist.playlistID)), ("name", .string(playlist.name)),
            ("curator", string(playlist.curator)), ("artwork_url", string(playlist.artworkURL)),
            ("url", string(playlist.url)),
        ])
    }

    /// Where the answer came from: `cached`, `age_seconds` and the track `count`.
    private static func origin(_ result: CatalogResult) -> [(String, JSON)] {
        [("cached", .bool(result.fromCache)), ("age_seconds", .int(result.age)), ("count", .int(result.tracks.count))]
    }

    private static func string(_ value: String?) -> JSON { value.map(JSON.string) ?? .null }

    private static func strings(_ values: [String]) -> JSON { .array(values.map(JSON.string)) }
}
