import PartyRadioCatalog

extension CatalogCommands {
    /// `partyradio search`: iTunes Search, or the Apple Music API with `--apple-music`.
    static func search(_ options: Command.SearchOptions, context: CommandContext) -> Int32 {
        run("search", context) { try await searchBody(options, context: context) }
    }

    private static func searchBody(_ options: Command.SearchOptions, context: CommandContext) async throws {
        let console = context.console
        let catalog = makeCatalog(options.service, common: options.common, context: context)
        let result: CatalogResult
        if options.appleMusic {
            let credentials = try credentials(options.auth, clock: context.clock)
            result = try await catalog.appleMusicSearch(
                options.term, storefront: options.country, types: options.types, limit: options.limit,
                allowExplicit: options.allowExplicit, credentials: credentials, refresh: options.service.refresh)
        } else {
            result = try await catalog.searchResult(
                options.term, country: options.country, limit: options.limit, allowExplicit: options.allowExplicit,
                refresh: options.service.refresh)
        }
        report(result, console: console)
        if options.service.json {
            console.out(CatalogJSON.search(options, result).shown.rendered)
            return
        }
        if result.tracks.isEmpty && result.page.playlists.isEmpty {
            console.out("No songs found for '\(options.term)' in the \(options.country) store.")
            return
        }
        var sections: [String] = []
        if !result.tracks.isEmpty { sections.append(CatalogTable.render(result.tracks)) }
        if !result.page.playlists.isEmpty { sections.append(CatalogTable.render(result.page.playlists)) }
        sections.append(footer(count: result.tracks.count, noun: "song", result: result))
        console.out(sections.joined(separator: "\n\n"))
    }
}
