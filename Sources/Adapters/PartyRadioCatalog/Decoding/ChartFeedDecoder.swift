/// Decodes the classic iTunes RSS feed in JSON (`/{cc}/rss/topsongs/limit=N/json`). Pure.
///
/// Each `feed.entry` carries `im:name`, `im:artist`, `im:collection`, `id.attributes["im:id"]`,
/// `im:image[]` (sizes in `attributes.height`) and `link[]`, one of which has
/// `im:assetType: "preview"`. Values sit in `label`. With a single entry the feed drops the array,
/// and so does `link` with a single link: both shapes are read.
public enum ChartFeedDecoder: CatalogDecoder {
    public static let service = "The iTunes top-songs feed"

    public static func decode(_ json: JSONValue, artworkSize: Int = ArtworkURL.defaultSize) throws(CatalogError)
        -> CatalogPage
    {
        guard let feed = json["feed"], case .object = feed else {
            throw CatalogError(.badResponse, "\(service) answered without a 'feed'; check the base URL (--itunes-url).")
        }
        let entries = feed["entry"]?.list ?? []
        var page = CatalogPage(declaredCount: nil)
        for (index, entry) in entries.enumerated() {
            switch track(from: entry, artworkSize: artworkSize) {
            case .success(let track): page.tracks.append(track)
            case .failure(let reason): page.skipped.append("entry \(index + 1): \(reason.text)")
            }
        }
        return page
    }

    static func track(from entry: JSONValue, artworkSize: Int) -> Result<CatalogTrack, ITunesDecoder.Skip> {
        guard case .object = entry else { return .failure(.init(text: "not an object")) }
        // `im:contentType` nests the kind ("Track") inside the medium ("Music"); a feed entry
        // with only the outer one names a medium such as "Music Video".
        let contentType = entry["im:contentType"]
        if let term = contentType?["im:contentType"]?["attributes"]?["term"]?.string
            ?? contentType?["attributes"]?["term"]?.string,
            !["Track", "Song", "Music"].contains(term)
        {
            return .failure(.init(text: "not a song (content type '\(term)')"))
        }
        guard let id = entry["id"]?["attributes"]?["im:id"]?.identifier ?? idFromURL(entry["id"]?["label"]?.string)
        else { return .failure(.init(text: "no im:id")) }
        guard let title = entry["im:name"]?["label"]?.string?.nonEmpty else {
            return .failure(.init(text: "track \(id) has no im:name"))
        }
        let links = entry["link"]?.list ?? []
        let preview = links.first(where: { $0["attributes"]?["im:assetType"]?.string == "preview" })
        let images = (entry["im:image"]?.list ?? []).compactMap { image -> (Int, String)? in
            guard let url = image["label"]?.string?.nonEmpty else { return nil }
            return (image["attributes"]?["height"]?.integer ?? 0, url)
        }
        let largest = images.max(by: { $0.0 < $1.0 })?.1
        return .success(
            CatalogTrack(
                trackID: id,
                title: title,
                artist: entry["im:artist"]?["label"]?.string?.nonEmpty ?? "Unknown Artist",
                album: entry["im:collection"]?["im:name"]?["label"]?.string?.nonEmpty,
                durationMs: nil,
                previewURL: preview?["attributes"]?["href"]?.string?.nonEmpty,
                artworkURL: largest.map { ArtworkURL.resizedOrOriginal($0, width: artworkSize) },
                isExplicit: nil))
    }

    /// The `i=` parameter of a store URL (`…/album/x/123?i=456&uo=2` → 456), the feed's fallback ID.
    static func idFromURL(_ url: String?) -> String? {
        guard let url, let query = url.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
        for pair in query.split(separator: "&") where pair.hasPrefix("i=") {
            let value = pair.dropFirst(2)
            if !value.isEmpty, value.allSatisfy({ $0.isASCII && $0.isNumber }) { return String(value) }
        }
        return nil
    }
}
