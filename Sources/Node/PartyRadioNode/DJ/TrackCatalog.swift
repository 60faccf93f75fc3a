import PartyRadioCore

/// Where the DJ finds catalog tracks to queue (`search TERM`, `add ID` on its controls).
/// The CLI implements it over the iTunes/Apple Music catalog; the node only needs tracks.
public protocol TrackCatalog: Sendable {
    /// Playable tracks (with a preview to play) matching `term`, best first.
    func search(_ term: String) async throws -> [Track]
    /// The playable tracks with these IDs, in the order asked.
    func lookup(_ ids: [String]) async throws -> [Track]
}
