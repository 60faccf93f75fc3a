extension Catalog {
    /// A catalog set up the way the catalog commands set one up, for callers such as the DJ: at
    /// `endpoints`, the cache at `stateDirectory/catalog-cache.sqlite` (nil: no cache).
    ///
    /// A cache that cannot be opened is not fatal: the catalog works without it and `notices`
    /// says why, for the caller to show.
    public static func withCache(
        stateDirectory: String?, endpoints: CatalogEndpoints, timeout: Double = HTTPClient.defaultTimeout
    ) -> (catalog: Catalog, notices: [String]) {
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
