import NodeTestSupport
import PartyRadioCore
import Testing

/// Fetching ahead (issue 11, item 2): a listener knows where the next track is fetched from
/// before the boundary, catalog tracks included, whose preview URL nothing but the DJ's next
/// sources tell it. The real DJ and listener machines on the simulated LAN, with a quarter of
/// every link's datagrams lost.
@Suite struct PrefetchSimulationTests {
    static let start: Int64 = 1_000_000_000_000

    static func catalogTrack(_ n: Int) -> Track {
        Track(
            id: "14408577\(n)", title: "Preview \(n)", artist: "Catalog", album: "", durationMs: 10_000,
            source: "https://audio-ssl.itunes.apple.com/itunes-assets/AudioPreview\(n)/v4/p\(n).plus.aac.p.m4a")
    }

    static func localTrack(_ token: String) -> Track {
        Track(
            id: "local:\(token)", title: token, artist: "DJ", album: "", durationMs: 10_000,
            source: "http://10.9.0.1:8080/media/\(token)")
    }

    /// Runs a DJ playing `queue` and one listener for 36 s; returns the listener's node.
    static func run(_ queue: [Track], loss: Double, seed: UInt64) -> SimNode {
        let lan = SimLAN(seed: seed, faults: SimFaults(loss: loss))
        let verifier = ChecksumVerifier(seal: nil)
        let key = PublicKey(bytes: [UInt8](repeating: 7, count: 32))!
        let id = StationID(rawValue: 0x1234_5678_9ABC_DEF0)
        let advert = StationAdvert(stationID: id, group: id.multicastGroup, publicKey: key)
        let dj = lan.addDJ(
            name: "Prefetch", advert: advert, queue: queue, crowdSkipPercent: 0, verifier: verifier, key: key,
            startNs: start)
        lan.schedule(at: start, .input(dj.index, .start))
        let listener = lan.add(
            name: "listener",
            machine: .listener(
                ListenerMachine(
                    configuration: .init(
                        query: "Prefetch", timeoutNs: 10_000_000_000, interfaceName: "sim0", listenerName: "guest",
                        playsAudio: true),
                    verifier: verifier)),
            key: PublicKey(bytes: [UInt8](repeating: 9, count: 32))!, offsetNs: 1_500_000_000, driftPPM: 120)
        lan.schedule(at: start + 1_000_000_000, .input(listener.index, .start))
        lan.run(until: start + 36_000_000_000)
        return listener
    }

    /// For each load the machine asked for after the first: how long before it the listener was
    /// told to fetch its source (nil: never before the load).
    static func leads(_ node: SimNode) -> [(trackID: String, leadNs: Int64?)] {
        node.asked.dropFirst().map { load in
            let told = node.prefetches.first { $0.time <= load.time && $0.urls.contains(load.source) }
            return (load.trackID, told.map { load.time - $0.time })
        }
    }

    /// The same for what the load plan asked of the cache: how long before the machine asked for
    /// each load after the first its source was asked for.
    static func fetchLeads(_ node: SimNode) -> [Int64?] {
        node.asked.dropFirst().map { load in
            node.fetches.first { $0.time <= load.time && $0.url == load.source }.map { load.time - $0.time }
        }
    }

    @Test(arguments: [0.0, 0.25])
    func theNextCatalogTrackIsFetchedBeforeTheBoundary(loss: Double) {
        // Catalog, catalog, then the DJ's own files: after a catalog track a library track's URL
        // cannot be derived from the playing one either; the next sources carry both kinds.
        let queue = [Self.catalogTrack(1), Self.catalogTrack(2), Self.localTrack("c3"), Self.localTrack("d4")]
        let listener = Self.run(queue, loss: loss, seed: 11)
        let leads = Self.leads(listener)
        #expect(leads.map(\.trackID) == ["144085772", "local:c3", "local:d4"], "\(listener.asked.map(\.trackID))")
        for (track, lead) in leads {
            // Known well before the boundary: the next sources come with the queue list, every 2 s at the latest.
            #expect(
                (lead ?? 0) >= 4_000_000_000,
                "\(track): told \(lead.map { "\($0 / 1_000_000) ms" } ?? "never") before it played")
        }
        // The load plan asked the cache for each as early.
        #expect(Self.fetchLeads(listener).allSatisfy { ($0 ?? 0) >= 4_000_000_000 })
        // Whatever it was told to fetch is a fetchable URL, and never the track playing then.
        #expect(listener.prefetches.allSatisfy { $0.urls.allSatisfy(MediaSource.isFetchable) })
        #expect(listener.prefetches.allSatisfy { !$0.urls.isEmpty && $0.urls.count <= MediaCachePlan.prefetchCount })
    }

    @Test func aStationOfLibraryTracksSendsNoNextSources() {
        // The listener derives those itself: no new datagrams for them, the prefetch as before.
        let queue = ["a1", "b2", "c3"].map(Self.localTrack)
        let listener = Self.run(queue, loss: 0, seed: 12)
        let leads = Self.leads(listener)
        #expect(leads.map(\.trackID) == ["local:b2", "local:c3", "local:a1"])  // the queue repeats
        #expect(leads.allSatisfy { ($0.leadNs ?? 0) >= 4_000_000_000 })
        #expect(Self.fetchLeads(listener).allSatisfy { ($0 ?? 0) >= 4_000_000_000 })
        guard case .listener(let machine) = listener.machine else { return }
        #expect(machine.nextSources == nil)
    }
}
