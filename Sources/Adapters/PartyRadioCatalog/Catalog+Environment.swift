extension Catalog {
    /// A catalog set up the way the catalog commands set one up, for callers such as the DJ:
    /// base URLs from `PARTYRADIO_ITUNES_URL` and `PARTYRADIO_APPLE_MUSIC_URL` (else Apple's),
    /// the cache at `stateDirectory/catalog-cache.sqlite` (nil: no cache).
    ///
    /// A cache that cannot be opened is not fatal: the catalog works without it and `notices`
    /// says why, for the caller to show.
    public static func fromEnvironment(
        _ environment: [String: String], stateDirectory: String?, timeout: Double = HTTPClient.defaultTimeout
    ) -> (catalog: Catalog, notices: [String]) {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let endpoints = CatalogEndpoints(
            iTunesBaseURL: value("PARTYRADIO_ITUNES_URL") ?? CatalogEndpoints.defaultITunesBaseURL,
            appleMusicBaseURL: value("PARTYRADIO_APPLE_MUSIC_URL") ?? CatalogEndpoints.defaultAppleMusicBaseURL)
        var notices: [String] = []
        var cache: CatalogCache?
        if let stateDirectory {
            do {
                cache = try CatalogCache(stateDirectory: stateDirectory)
                notices += cache?.takeNotices() ?? []
            } catch {
                notices.append("\(error.message) Continuing without the cache.")
            }
        }
        let catalog = Catalog(
            configuration: CatalogConfiguration(endpoints: endpoints, timeout: timeout), cache: cache)
        return (catalog, notices)
    }
}
