/// Decodes Apple Music API documents: search results (`results.songs.data`,
/// `results.playlists.data`), `songs?ids=` (`data`) and playlists with their tracks
/// (`data[0].relationships.tracks.data`). Errors arrive as `{"errors": [{status, title, detail}]}`.
/// Pure.
public enum AppleMusicDecoder: CatalogDecoder {
    public static let service = "The Apple Music API"

    public static func decode(_ json: JSONValue, artworkSize: Int = ArtworkURL.defaultSize) throws(CatalogError)
        -> CatalogPage
    {
        if let error = errorMessage(json) { throw CatalogError(.badResponse, error) }
        var page = CatalogPage()
        var songs: [JSONValue] = []
        if let results = json["results"], case .object = results {
            songs = results["songs"]?["data"]?.array ?? []
            for (index, item) in (results["playlists"]?["data"]?.array ?? []).enumerated() {
                guard let id = item["id"]?.identifier, let name = item["attributes"]?["name"]?.string?.nonEmpty else {
                    page.skipped.append("playlist \(index + 1): no id or name")
                    continue
                }
                let attributes = item["attributes"]
                page.playlists.append(
                    CatalogPlaylist(
                        playlistID: id, name: name, curator: attributes?["curatorName"]?.string?.nonEmpty,
                        artworkURL: attributes?["artwork"]?["url"]?.string.map {
                            ArtworkURL.resizedOrOriginal($0, width: artworkSize)
                        },
                        url: attributes?["url"]?.string))
            }
        } else if let data = json["data"]?.array {
            for resource in data {
                if resource["type"]?.string == "playlists" {
                    songs += resource["relationships"]?["tracks"]?["data"]?.array ?? []
                } else {
                    songs.append(resource)
                }
            }
        } else if json["meta"] == nil {
            throw CatalogError(
                .badResponse, "\(service) answered without 'results' or 'data'; check --apple-music-url.")
        }
        for (index, item) in songs.enumerated() {
            switch song(from: item, artworkSize: artworkSize) {
            case .success(let track): page.tracks.append(track)
            case .failure(let reason): page.skipped.append("song \(index + 1): \(reason.text)")
            }
        }
        return page
    }

    /// `"Unauthorized: Invalid authentication"`: the first error's title and detail, if `json` is
    /// an `errors` document.
    public static func errorSummary(_ json: JSONValue) -> String? {
        guard let first = json["errors"]?.array?.first else { return nil }
        let title = first["title"]?.string ?? "Error"
        return title + (first["detail"]?.string.map { ": \($0)" } ?? "")
    }

    /// `"The Apple Music API answered Unauthorized (401): Invalid authentication"` from an
    /// `errors` document, if it is one.
    public static func errorMessage(_ json: JSONValue) -> String? {
        guard let first = json["errors"]?.array?.first else { return nil }
        let title = first["title"]?.string ?? "Error"
        let status = first["status"]?.identifier.map { " (\($0))" } ?? ""
        let detail = first["detail"]?.string.map { ": \($0)" } ?? ""
        return "\(service) answered \(title)\(status)\(detail)"
    }

    static func song(from item: JSONValue, artworkSize: Int) -> Result<CatalogTrack, ITunesDecoder.Skip> {
        guard case .object = item else { return .failure(.init(text: "not an object")) }
        if let type = item["type"]?.string, type != "songs", type != "library-songs" {
            return .failure(.init(text: "not a song (type '\(type)')"))
        }
        guard let id = item["id"]?.identifier else { return .failure(.init(text: "no id")) }
        guard let attributes = item["attributes"], let name = attributes["name"]?.string?.nonEmpty else {
            return .failure(.init(text: "song \(id) has no name"))
        }
        let preview = attributes["previews"]?.list.lazy.compactMap { $0["url"]?.string?.nonEmpty }.first
        let rating = attributes["contentRating"]?.string
        return .success(
            CatalogTrack(
                trackID: id,
                title: name,
                artist: attributes["artistName"]?.string?.nonEmpty ?? "Unknown Artist",
                album: attributes["albumName"]?.string?.nonEmpty,
                durationMs: attributes["durationInMillis"]?.integer,
                previewURL: preview,
                artworkURL: attributes["artwork"]?["url"]?.string.map {
                    ArtworkURL.resizedOrOriginal($0, width: artworkSize)
                },
                isExplicit: rating.map { $0 == "explicit" }))
    }
}
