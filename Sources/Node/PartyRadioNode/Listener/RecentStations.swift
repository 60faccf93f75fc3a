import Foundation
import PartyRadioCore

/// Stations this state directory saw lately, with where they were (`recent_stations`, JSON): a
/// `listen NAME` within a minute of seeing the station (a `stations`, or an earlier `listen`) asks
/// it at once at that address instead of waiting for mDNS to resolve it again (about 150 ms).
///
/// Only a shortcut: the answer must still be signed by the station's key (pinned in
/// `known_stations` as before), and mDNS browsing goes on as usual, so a station that moved is
/// found where it is now. Private stations are never kept (their records are sealed).
final class RecentStations {
    static let fileName = "recent_stations"
    /// How old a sighting may be and still be used.
    static let freshNs = Nanos.seconds(60)
    static let capacity = 32

    struct Sighting: Codable, Equatable {
        var name: String
        var id: String
        var service: String
        var address: String
        var port: UInt16
        var txt: [String]
        var seenAtNs: Int64
    }

    let url: URL

    init(directory: URL) { url = directory.appendingPathComponent(Self.fileName) }

    /// Every sighting on file (none if the file is missing or does not parse).
    func load() -> [Sighting] {
        guard let data = try? Data(contentsOf: url) else { return [] }
        return (try? JSONDecoder().decode([Sighting].self, from: data)) ?? []
    }

    /// The sighting a query (a station name or ID, as `listen` takes it) means, if it is fresh.
    func fresh(for query: String?, now: LocalTime) -> Sighting? {
        guard let query, !query.isEmpty else { return nil }
        return load().filter { now.ns - $0.seenAtNs < Self.freshNs && now.ns >= $0.seenAtNs }
            .first { $0.name == query || $0.id == query.lowercased() }
    }

    /// Remembers the stations (public ones only), newest first, at most ``capacity``; written to a
    /// temporary file and renamed, so a crash never leaves half a file.
    func remember(_ stations: [StationSummary], at now: LocalTime) {
        let new = stations.filter { !$0.advert.isPrivate }.map {
            Sighting(
                name: $0.name, id: $0.id.hex, service: $0.serviceName, address: $0.address, port: $0.port,
                txt: $0.advert.txtRecord, seenAtNs: now.ns)
        }
        guard !new.isEmpty else { return }
        let ids = Set(new.map(\.id))
        let all = Array((new + load().filter { !ids.contains($0.id) }).prefix(Self.capacity))
        guard let data = try? JSONEncoder().encode(all) else { return }
        try? StateFile.replace(url, with: data)
    }
}
