import Foundation
import PartyRadioCore
import Testing

@testable import PartyRadioNode

/// The recent sightings a `listen NAME` may use to ask a station at once.
@Suite struct RecentStationsTests {
    func summary(_ name: String, id: UInt64, private isPrivate: Bool = false) -> StationSummary {
        let key = PublicKey(bytes: [UInt8](repeating: UInt8(id & 0xFF), count: 32))!
        let station = StationID(rawValue: id)
        return StationSummary(
            id: station, serviceName: name, address: "10.0.0.\(id)", port: 4000,
            advert: StationAdvert(
                stationID: station, group: station.multicastGroup, publicKey: key, isPrivate: isPrivate),
            snapshot: StateSnapshot(
                stationName: name, nowPlaying: nil, anchor: .paused(at: 0, djTime: DJTime(ns: 0)), tally: Tally(),
                listenerCount: 0, queueLength: 0, queueIndex: 0, sentAtNs: 0),
            positionNs: 0)
    }

    func folder() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("recent-\(UUID())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func aStationSeenInTheLastMinuteIsFoundByNameOrID() {
        let recent = RecentStations(directory: folder())
        let seen = LocalTime(ns: 1_000_000_000_000)
        recent.remember([summary("Rooftop", id: 7), summary("Basement", id: 9)], at: seen)
        let hit = recent.fresh(for: "Rooftop", now: seen + Nanos.seconds(30))
        #expect(hit?.address == "10.0.0.7" && hit?.port == 4000 && hit?.service == "Rooftop")
        #expect(hit.map { (try? StationAdvert(txtRecord: $0.txt))?.stationID } == StationID(rawValue: 7))
        #expect(recent.fresh(for: StationID(rawValue: 9).hex, now: seen)?.name == "Basement")
        #expect(recent.fresh(for: "Rooftop", now: seen + Nanos.seconds(61)) == nil, "a minute is the limit")
        #expect(recent.fresh(for: "Roof", now: seen) == nil, "exact names only: a prefix goes through mDNS")
        #expect(recent.fresh(for: nil, now: seen) == nil)
    }

    @Test func privateStationsAreNeverKeptAndTheListIsBounded() {
        let recent = RecentStations(directory: folder())
        let now = LocalTime(ns: 5_000_000_000_000)
        recent.remember([summary("Secret", id: 3, private: true)], at: now)
        #expect(recent.load().isEmpty)
        for n in 0..<(RecentStations.capacity + 10) { recent.remember([summary("S\(n)", id: UInt64(n + 10))], at: now) }
        #expect(recent.load().count == RecentStations.capacity)
        #expect(recent.load().first?.name == "S\(RecentStations.capacity + 9)", "newest first")
    }

    @Test func aDamagedFileIsNoSighting() throws {
        let directory = folder()
        try Data("not json".utf8).write(to: directory.appendingPathComponent(RecentStations.fileName))
        #expect(RecentStations(directory: directory).fresh(for: "Rooftop", now: LocalTime(ns: 0)) == nil)
    }
}
