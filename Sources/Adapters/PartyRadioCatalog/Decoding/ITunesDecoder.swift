import PartyRadioCore

/// Decodes the iTunes Search and Lookup APIs' `{"resultCount": N, "results": [...]}`. Pure.
///
/// Tolerant by design: IDs may be numbers or strings, any field may be missing, lookups mix
/// artists and albums in with songs, and `resultCount` need not match `results`. Only songs with
/// an ID and a title come out; everything else is listed in ``CatalogPage/skipped``.
public enum ITunesDecoder: CatalogDecoder {
    public static let service = "The iTunes Search API"

    public static func decode(_ json: JSONValue, artworkSize: Int = ArtworkURL.defaultSize) throws(CatalogError)
        -> CatalogPage
    {
        if let message = json["errorMessage"]?.string {
            throw CatalogError(.badResponse, "\(service) rejected the request: \(message)")
        }
        guard let results = json["results"]?.array else {
            throw CatalogError(
                .badResponse, "\(service) answered without a 'results' list; check the base URL (--itunes-url).")
        }
        var page = CatalogPage(declaredCount: json["resultCount"]?.integer)
        for (index, result) in results.enumerated() {
            switch track(from: result, artworkSize: artworkSize) {
            case .success(let track): page.tracks.append(track)
            case .failure(let reason): page.skipped.append("result \(index + 1): \(reason.text)")
            }
        }
        return page
    }

    struct Skip: Error { var text: String }

    static func track(from result: JSONValue, artworkSize: Int) -> Result<CatalogTrack, Skip> {
        guard case .object = result else { return .failure(Skip(text: "not an object")) }
        let kind = result["kind"]?.string
        let wrapperType = result["wrapperType"]?.string
        if let kind, kind != "song" { return .failure(Skip(text: "not a song (kind '\(kind)')")) }
        if kind == nil, let wrapperType, wrapperType != "track" {
            return .failure(Skip(text: "not a song (wrapperType '\(wrapperType)')"))
        }
        guard let id = result["trackId"]?.identifier else { return .failure(Skip(text: "no trackId")) }
        guard let title = (result["trackName"]?.string ?? result["trackCensoredName"]?.string)?.nonEmpty else {
            return .failure(Skip(text: "track \(id) has no trackName"))
        }
        let artwork = ["artworkUrl100", "artworkUrl60", "artworkUrl30"].lazy
            .compactMap { result[$0]?.string?.nonEmpty }.first
        let explicitness = result["trackExplicitness"]?.string
        return .success(
            CatalogTrack(
                trackID: id,
                title: title,
                artist: result["artistName"]?.string?.nonEmpty ?? "Unknown Artist",
                album: (result["collectionName"]?.string ?? result["collectionCensoredName"]?.string)?.nonEmpty,
                durationMs: result["trackTimeMillis"]?.integer.flatMap { $0 >= 0 ? $0 : nil },
                previewURL: result["previewUrl"]?.string?.nonEmpty,
                artworkURL: artwork.map { ArtworkURL.resizedOrOriginal($0, width: artworkSize) },
                isExplicit: explicitness.map { $0 == "explicit" }))
    }
}

extension String {
    /// The text without surrounding whitespace, nil when nothing is left.
    var nonEmpty: String? {
        guard let first = utf8.first, let last = utf8.last else { return nil }
        // Fast path: most of Apple's strings need no trimming.
        if first > 0x20 && first < 0x80 && last > 0x20 && last < 0x80 { return self }
        let trimmed = trimmingWhitespace()
        return trimmed.isEmpty ? nil : trimmed
    }
}
