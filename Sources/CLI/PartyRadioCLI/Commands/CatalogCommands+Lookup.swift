import PartyRadioCatalog

extension CatalogCommands {
    /// `partyradio lookup`: songs by track ID, or an Apple Music playlist's songs.
    static func lookup(_ options: Command.LookupOptions, context: CommandContext) -> Int32 {
        run("lookup", context) { try await lookupBody(options, context: context) }
    }

    private static func lookupBody(_ options: Command.LookupOptions, context: CommandContext) async throws {
        let console = context.console
        let catalog = makeCatalog(options.service, common: options.common, context: context)
        let refresh = options.service.refresh
        let result: CatalogResult
        if let playlist = options.playlist {
            result = try await catalog.appleMusicPlaylist(
                playlist, storefront: options.country, credentials: try credentials(options.auth, clock: context.clock),
                refresh: refresh)
        } else if options.appleMusic {
            result = try await catalog.appleMusicSongs(
                options.ids, storefront: options.country,
                credentials: try credentials(options.auth, clock: context.clock), refresh: refresh)
        } else {
            result = try await catalog.lookupResult(options.ids, country: options.country, refresh: refresh)
        }
        report(result, console: console)
        let found = Set(result.tracks.map(\.trackID))
        let missing = options.ids.filter { !found.contains($0) }
        if options.service.json {
            console.out(CatalogJSON.lookup(options, result, missing: missing).shown.rendered)
        }
        guard !result.tracks.isEmpty else {
            if let playlist = options.playlist {
                throw CatalogError(
                    .httpStatus, "The playlist \(playlist) has no songs in the \(options.country) store.")
            }
            throw CatalogError(
                .httpStatus,
                "No songs with ID\(missing.count == 1 ? "" : "s") \(missing.joined(separator: ", ")) in the "
                    + "\(options.country) store; check the IDs or --country.")
        }
        guard !options.service.json else { return }
        if !missing.isEmpty {
            console.err("Note: not found in the \(options.country) store: \(missing.joined(separator: ", ")).")
        }
        console.out(
            CatalogTable.render(result.tracks) + "\n\n"
                + footer(count: result.tracks.count, noun: "song", result: result))
    }
}
