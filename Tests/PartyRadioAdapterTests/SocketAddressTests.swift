import Glibc
import PartyRadioCore
import Testing

@testable import PartyRadioNet

/// Addresses of both families: parsing, printing (RFC 5952, zones), the C forms, and groups.
@Suite struct SocketAddressTests {
    @Test func ipv4ParsesAndPrints() {
        let address = SocketAddress("10.99.0.1", port: 4000)
        #expect(address?.family == .ipv4 && address?.host == "10.99.0.1" && address?.description == "10.99.0.1:4000")
        #expect(address?.addressNetworkOrder == UInt32(0x0A63_0001).bigEndian)
        #expect(address?.ipv6Bytes == nil && address?.scope == 0 && address?.isLinkLocal == false)
        for bad in ["10.99.0", "10.99.0.256", "", "host.local", " 10.0.0.1", "10.0.0.1%eth0"] {
            #expect(SocketAddress(bad, port: 1) == nil, "\(bad)")
        }
    }

    @Test func ipv6ParsesAndPrintsInCanonicalForm() {
        // RFC 5952: lower case, the longest run of zeros compressed, no leading zeros.
        let cases = [
            ("fd99:10::1", "fd99:10::1"), ("FD99:0010:0000:0000:0000:0000:0000:0001", "fd99:10::1"),
            ("::1", "::1"), ("::", "::"), ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
            ("ff12::5052:c09d", "ff12::5052:c09d"),
        ]
        for (text, canonical) in cases {
            let address = SocketAddress(text, port: 7)
            #expect(address?.family == .ipv6, "\(text)")
            #expect(address?.host == canonical, "\(text)")
            #expect(address?.description == "[\(canonical)]:7", "\(text)")
        }
        for bad in [
            "[fd99::1]", "fd99::1::2", "fd99::g", "fd99:1:2:3:4:5:6:7:8", ":::", "fe80::1%", "fe80::1%no-such-if0",
        ] {
            #expect(SocketAddress(bad, port: 1) == nil, "\(bad)")
        }
    }

    @Test func linkLocalAddressesCarryTheirZone() throws {
        let named = try #require(SocketAddress("fe80::1%lo", port: 5))
        let index = if_nametoindex("lo")
        #expect(named.isLinkLocal && named.scope == index)
        #expect(named.host == "fe80::1%lo" && named.description == "[fe80::1%lo]:5")
        // A numeric zone names the interface too, and prints as its name.
        #expect(SocketAddress("fe80::1%\(index)", port: 5) == named)
        // Other addresses take no zone.
        #expect(SocketAddress("fd99::1%lo", port: 5) == nil)
        #expect(SocketAddress("fd99::1", port: 5)?.isLinkLocal == false)
        #expect(SocketAddress("febf::1", port: 5)?.isLinkLocal == true)
        #expect(SocketAddress("fec0::1", port: 5)?.isLinkLocal == false)
        // Through PeerAddress (what the core keeps) and back, the zone survives.
        #expect(SocketAddress(peer: named.peer) == named)
        #expect(SocketAddress(peer: PeerAddress(host: "station.local", port: 1)) == nil)
    }

    @Test func anIPv4MappedAddressPrintsAsIPv4() {
        #expect(SocketAddress("::ffff:10.0.0.7", port: 1)?.host == "10.0.0.7")
    }

    @Test func theCFormsRoundTrip() throws {
        for text in ["10.99.0.1", "0.0.0.0", "fd99:10::1", "fe80::1%lo", "::"] {
            let address = try #require(SocketAddress(text, port: 40_000))
            let (storage, length) = address.raw
            #expect(
                Int(length)
                    == (address.family == .ipv4 ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size))
            #expect(SocketAddress(storage) == address, "\(text)")
        }
        #expect(SocketAddress(sockaddr_storage()) == nil)  // AF_UNSPEC
    }

    @Test func randomAddressesSurviveTextAndCForms() {
        var random = SplitMix64(seed: 6)
        for _ in 0..<2_000 {
            var bytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if random.next() % 4 == 0 { bytes.replaceSubrange(4..<12, with: [UInt8](repeating: 0, count: 8)) }
            if bytes[0] == 0 && bytes[1] == 0 { bytes[0] = 0x20 }  // keep clear of ::ffff:a.b.c.d
            let address = SocketAddress(ipv6: bytes, port: UInt16(truncatingIfNeeded: random.next()))
            #expect(address.ipv6Bytes == bytes)
            #expect(SocketAddress(address.host, port: address.port) == address, "\(address)")
            #expect(SocketAddress(address.raw.storage) == address)
            let v4 = SocketAddress(addressNetworkOrder: UInt32(truncatingIfNeeded: random.next()), port: 1)
            #expect(SocketAddress(v4.host, port: 1) == v4)
        }
    }

    @Test func groupsHaveAnAddressInEachFamily() {
        let group = MulticastGroup(address: (239, 255, 192, 157), port: 45_704)
        #expect(SocketAddress(group).description == "239.255.192.157:45704")
        let v6 = SocketAddress(group, family: .ipv6)
        #expect(v6.host == "ff12::5052:c09d" && v6.host == group.ipv6Address && v6.port == 45_704)
        let zoned = SocketAddress(group, family: .ipv6, scope: if_nametoindex("lo"))
        #expect(zoned.host == "ff12::5052:c09d%lo")
        #expect(SocketAddress(zoned.host, port: zoned.port) == zoned)
    }

    @Test func interfacesPreferAnAddressWithoutAZone() throws {
        let linkLocal = try #require(SocketAddress("fe80::1%lo", port: 0))
        let unique = try #require(SocketAddress("fd99:10::1", port: 0))
        let v6 = NetworkInterface(
            name: "eth0", index: 2, addressNetworkOrder: 0, ipv6Addresses: [linkLocal, unique], isLoopback: false,
            supportsMulticast: true, isUp: true)
        #expect(v6.families == [.ipv6] && v6.address == unique && v6.description == "eth0 (fd99:10::1)")
        let onlyLinkLocal = NetworkInterface(
            name: "eth0", index: 2, addressNetworkOrder: 0, ipv6Addresses: [linkLocal], isLoopback: false,
            supportsMulticast: true, isUp: true)
        #expect(onlyLinkLocal.address == linkLocal)
        let dual = NetworkInterface(
            name: "eth0", index: 2, addressNetworkOrder: UInt32(0x0A63_0001).bigEndian,
            ipv6Addresses: [linkLocal, unique], isLoopback: false, supportsMulticast: true, isUp: true)
        #expect(dual.families == [.ipv4, .ipv6] && dual.address.host == "10.99.0.1")
        #expect(dual.description == "eth0 (10.99.0.1, fd99:10::1)")
    }
}

/// `--dns-server` in either family, and the address a browser picks from a station's records.
@Suite struct UnicastDNSSDAddressTests {
    @Test func dnsServersOfBothFamilies() {
        #expect(UnicastDNSSD.parse(server: "10.99.1.254").map { $0 == ("10.99.1.254", 53) } == true)
        #expect(UnicastDNSSD.parse(server: "10.99.1.254:5353").map { $0 == ("10.99.1.254", 5353) } == true)
        #expect(UnicastDNSSD.parse(server: "fd99:1::254").map { $0 == ("fd99:1::254", 53) } == true)
        #expect(UnicastDNSSD.parse(server: "[fd99:1::254]").map { $0 == ("fd99:1::254", 53) } == true)
        #expect(UnicastDNSSD.parse(server: "[fd99:1::254]:5353").map { $0 == ("fd99:1::254", 5353) } == true)
        for bad in [
            "", "10.99.1", "10.99.1.254:", "10.99.1.254:0", "10.99.1.254:70000", "[10.99.1.254]:53", "[fd99::1",
            "[fd99::1]x", "[fd99::1]:", "fe80::1%eth0", "[fe80::1%eth0]:53", "ns.party.example", "fd99::1:53:x",
        ] {
            #expect(UnicastDNSSD.parse(server: bad) == nil, "\(bad)")
        }
    }

    @Test func aBrowserTakesAnAddressOfItsOwnFamilies() {
        let both = DNSService(
            instance: "Roof", host: "dj-1.party.example.", ipv4: ["10.99.1.1"], ipv6: ["fd99:1::1"], port: 4000,
            txt: [])
        #expect(both.address(for: [.ipv4, .ipv6]) == "10.99.1.1")
        #expect(both.address(for: [.ipv6]) == "fd99:1::1")
        #expect(both.address(for: [.ipv4]) == "10.99.1.1")
        var v6only = both
        v6only.ipv4 = []
        #expect(v6only.address(for: [.ipv4, .ipv6]) == "fd99:1::1")
        #expect(v6only.address(for: [.ipv4]) == nil)
        #expect(v6only.address(for: []) == nil)
    }
}
