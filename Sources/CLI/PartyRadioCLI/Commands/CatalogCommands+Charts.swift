import PartyRadioCatalog

extension CatalogCommands {
    /// `partyradio charts`: a country's top songs from the iTunes chart feed.
    static func charts(_ options: Command.ChartsOptions, context: CommandContext) -> Int32 {
        run("charts", context) { try await chartsBody(options, context: context) }
    }

    private static func chartsBody(_ options: Command.ChartsOptions, context: CommandContext) async throws {
        let console = context.console
        let catalog = makeCatalog(options.service, common: options.common, context: context)
        let result = try await catalog.topSongs(
            country: options.country, limit: options.limit, refresh: options.service.refresh)
        report(result, console: console)
        if options.service.json {
            console.out(CatalogJSON.charts(options, result).shown.rendered)
            return
        }
        guard !result.tracks.isEmpty else {
            console.out("The \(options.country) chart is empty right now.")
            return
        }
        console.out(
            "Top songs · \(options.country)\n\n" + CatalogTable.render(result.tracks) + "\n\n"
                + footer(count: result.tracks.count, noun: "song", result: result))
    }
}
