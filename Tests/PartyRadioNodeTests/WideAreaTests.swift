import PartyRadioNet
import Testing

@testable import PartyRadioCore
@testable import PartyRadioNode

/// What the DJ publishes in a DNS domain of its interface's addresses, and what a browser makes of
/// the stations it finds there (leases, families). No DNS server: the I/O is RoutedLANTests'.
@Suite struct WideAreaTests {
    let linkLocal = SocketAddress("fe80::1%lo", port: 0)!
    let unique = SocketAddress("fd99:10::1", port: 0)!
    let global = SocketAddress("2001:db8::1", port: 0)!

    func interface(ipv4: UInt32 = 0, _ ipv6: [SocketAddress]) -> NetworkInterface {
        NetworkInterface(
            name: "eth0", index: 2, addressNetworkOrder: ipv4, ipv6Addresses: ipv6, isLoopback: false,
            supportsMulticast: true, isUp: true)
    }

    @Test func theDJPublishesEveryAddressThatReachesBeyondItsLink() {
        let v4 = UInt32(0x0A63_0001).bigEndian
        #expect(DomainPublisher.addresses(interface(ipv4: v4, [])) == (["10.99.0.1"], []))
        #expect(
            DomainPublisher.addresses(interface(ipv4: v4, [linkLocal, unique, global]))
                == (["10.99.0.1"], ["fd99:10::1", "2001:db8::1"]))
        #expect(DomainPublisher.addresses(interface([linkLocal, unique, unique])) == ([], ["fd99:10::1"]))
        // Link-local only: nothing a DNS record could carry.
        #expect(DomainPublisher.addresses(interface([linkLocal])) == ([], []))
    }

    func service(
        _ name: String, v4: [String] = ["10.99.1.1"], v6: [String] = [], lease: DNSLease.Stamp,
        flaws: Set<DomainDrop> = []
    ) -> DNSService {
        DNSService(
            instance: name, host: "dj-\(name).party.example.", ipv4: v4, ipv6: v6, port: 4000, txt: ["v=1"],
            lease: lease, flaws: flaws)
    }

    @Test func aStationWhoseLeasePassedIsGone() {
        let now: Int64 = 1_764_560_000
        let found = [
            service("Live", lease: .until(now + 30)),
            service("Old DJ", lease: .none),
            service("Just passed", lease: .until(now - DNSLease.graceSeconds)),
            service("Killed", lease: .until(now - DNSLease.graceSeconds - 1)),
            service("Garbled", lease: .malformed),
        ]
        let (live, refused) = DomainBrowser.sightings(DNSBrowse(services: found), families: [.ipv4], now: now)
        #expect(Set(live.keys) == ["Live", "Old DJ", "Just passed"])
        #expect(refused == ["Killed": [.leasePassed], "Garbled": [.badLease]])
        #expect(live["Live"] == DomainBrowser.Sighting(address: "10.99.1.1", port: 4000, txt: ["v=1"]))
    }

    @Test func aStationIsReachedInAFamilyTheNodeSpeaks() {
        let found = [
            service("Dual", v4: ["10.99.1.1"], v6: ["fd99:1::1"], lease: .none),
            service("Six", v4: [], v6: ["fd99:1::2"], lease: .none),
        ]
        let dual = DomainBrowser.sightings(DNSBrowse(services: found), families: [.ipv4, .ipv6], now: 0).live
        #expect(dual["Dual"]?.address == "10.99.1.1" && dual["Six"]?.address == "fd99:1::2")
        let sixOnly = DomainBrowser.sightings(DNSBrowse(services: found), families: [.ipv6], now: 0).live
        #expect(sixOnly["Dual"]?.address == "fd99:1::1" && sixOnly["Six"]?.address == "fd99:1::2")
        let (fourOnly, refused) = DomainBrowser.sightings(DNSBrowse(services: found), families: [.ipv4], now: 0)
        #expect(Set(fourOnly.keys) == ["Dual"] && refused == ["Six": [.noUsableAddress]])
    }

    /// Malformed records are left out by reason: whole (the browse's own refusals, a lease that
    /// cannot be read) or in part (a bad TXT string or address, the station used all the same).
    @Test func whatIsLeftOutIsToldByReason() {
        let found = DNSBrowse(
            services: [
                service("Odd", lease: .none, flaws: [.badTXT, .badAddress]),
                service("Odd and old", lease: .until(0), flaws: [.badTXT]),
            ],
            refused: ["Broken": [.badSRV], "x.example.": [.badPTR]])
        let (live, refused) = DomainBrowser.sightings(found, families: [.ipv4], now: 1_764_560_000)
        #expect(Set(live.keys) == ["Odd"])
        #expect(
            refused == [
                "Odd": [.badTXT, .badAddress], "Odd and old": [.badTXT, .leasePassed], "Broken": [.badSRV],
                "x.example.": [.badPTR],
            ])
    }

    /// A sweep a second tells the node of each reason once while it lasts, so that a stale record
    /// is counted once, not once a second; again if it goes and comes back.
    @Test func aRefusalIsToldOnceWhileItLasts() {
        let first: [String: Set<DomainDrop>] = ["Killed": [.leasePassed], "Odd": [.badTXT]]
        let told = DomainBrowser.newlyRefused(first, since: [:])
        #expect(told.map(\.name) == ["Killed", "Odd"] && told.map(\.reason) == [.leasePassed, .badTXT])
        #expect(DomainBrowser.newlyRefused(first, since: first).isEmpty)
        let second: [String: Set<DomainDrop>] = ["Killed": [.leasePassed], "Odd": [.badTXT, .badAddress]]
        #expect(DomainBrowser.newlyRefused(second, since: first).map(\.reason) == [.badAddress])
        #expect(DomainBrowser.newlyRefused(first, since: ["Odd": [.badTXT]]).map(\.name) == ["Killed"])
    }

    @Test func aDJTakesTheFirstNameNoLiveDJHolds() throws {
        let now: Int64 = 1_764_560_000
        let me = "dj-me.party.example."
        func claim(_ zone: [String: DNSHolder]) throws -> DomainPublisher.Claim? {
            try DomainPublisher.claim(DNSName.instanceCandidates("Roof"), host: me, now: now) { zone[$0] }
        }
        let live = DNSHolder(host: "dj-other.party.example.", lease: .until(now + 30))
        let dead = DNSHolder(host: "dj-dead.party.example.", lease: .until(now - 60))
        let old = DNSHolder(host: "dj-old.party.example.", lease: .none)
        #expect(try claim([:]) == .init(instance: "Roof"))
        // Its own records from an earlier run, whatever their lease.
        #expect(try claim(["Roof": DNSHolder(host: me, lease: .until(now - 600))]) == .init(instance: "Roof"))
        #expect(try claim(["Roof": live]) == .init(instance: "Roof #2"))
        #expect(try claim(["Roof": dead]) == .init(instance: "Roof", took: "dj-dead.party.example."))
        // A DJ from before leases keeps its name until its records are deleted.
        #expect(try claim(["Roof": old, "Roof #2": live]) == .init(instance: "Roof #3"))
        #expect(
            try claim(["Roof": live, "Roof #2": dead]) == .init(instance: "Roof #2", took: "dj-dead.party.example."))
        var full: [String: DNSHolder] = [:]
        for name in DNSName.instanceCandidates("Roof") { full[name] = live }
        #expect(try claim(full) == nil)
    }
}
