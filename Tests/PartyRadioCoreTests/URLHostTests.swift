import Testing

@testable import PartyRadioCore

/// Hosts in http URLs: IPv6 in brackets, zones escaped (RFC 3986, RFC 6874).
@Suite struct URLHostTests {
    @Test func addressesBecomeURLHosts() {
        #expect(URLHost.literal("10.99.0.1") == "10.99.0.1")
        #expect(URLHost.literal("station.local") == "station.local")
        #expect(URLHost.literal("fd99:10::1") == "[fd99:10::1]")
        #expect(URLHost.literal("fe80::1%eth0") == "[fe80::1%25eth0]")
        #expect(URLHost.literal("[fd99::1]") == "[fd99::1]")
        #expect(URLHost.httpOrigin("fd99:10::1", port: 8080) == "http://[fd99:10::1]:8080")
        #expect(URLHost.httpOrigin("10.99.0.1", port: 80) == "http://10.99.0.1:80")
    }

    @Test func peersPrintIPv6InBrackets() {
        #expect(PeerAddress(host: "fd99::1", port: 5).description == "[fd99::1]:5")
        #expect(PeerAddress(host: "10.0.0.1", port: 5).description == "10.0.0.1:5")
    }

    @Test func everyStationGroupHasALinkLocalIPv6Twin() {
        var random = SplitMix64(seed: 9)
        for _ in 0..<1_000 {
            let group = StationID(rawValue: random.next()).multicastGroup
            let bytes = group.ipv6Bytes
            #expect(bytes.count == 16 && bytes[0] == 0xFF && bytes[1] == 0x12)  // transient, link-local scope
            #expect(bytes[12...] == [0x50, 0x52, group.c, group.d])
            // The text is the bytes, in the shortest form.
            #expect(group.ipv6Address == "ff12::5052:\(String(UInt16(group.c) << 8 | UInt16(group.d), radix: 16))")
        }
    }
}
