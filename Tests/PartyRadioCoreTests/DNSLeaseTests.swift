import Glibc
import Testing

@testable import PartyRadioCore

/// The lease on a station's records in a DNS domain, and the addresses read out of A and AAAA data.
@Suite struct DNSLeaseTests {
    @Test func renewalsAndTTLFitInsideTheLease() {
        let lease = DNSLease()
        #expect(lease.seconds == 60 && lease.refreshSeconds == 15 && lease.ttl == 15)
        // A cached TXT record is at most a TTL old, and was written at most a renewal before it
        // was fetched: a live station always shows more than a renewal period left.
        for seconds in [8, 12, 20, 60, 90, 600, 3600] {
            let lease = DNSLease(seconds: seconds)
            #expect(lease.seconds - lease.refreshSeconds - Int(lease.ttl) >= lease.refreshSeconds, "\(seconds)")
        }
        #expect(DNSLease(seconds: 1).seconds == DNSLease.minimumSeconds)
        #expect(DNSLease(seconds: -5).seconds == DNSLease.minimumSeconds)
    }

    @Test func stampedAndSplitOffAgain() {
        let advert = ["v=1", "id=00112233", "grp=239.255.1.2", "pk=abc", "web=8080", "priv=0"]
        let stamp = DNSLease(seconds: 60).stamp(now: 1_764_560_000)
        #expect(stamp == "lease=1764560060")
        let (strings, lease) = DNSLease.split(advert + [stamp])
        #expect(strings == advert && lease == .until(1_764_560_060))
        #expect(DNSLease.split(advert) == (advert, .none))
        // Wherever it stands.
        #expect(DNSLease.split([stamp] + advert) == (advert, .until(1_764_560_060)))
    }

    @Test func malformedLeasesAreNotTrusted() {
        for bad in [
            "lease=", "lease", "lease=-5", "lease=+5", "lease=12a", "lease= 12", "lease=1234567890123", "lease=0x10",
            "lease=١٢", "lease=12 ",
        ] {
            #expect(DNSLease.split(["v=1", bad]).stamp == .malformed, "\(bad)")
        }
        // Two leases: which one is true is unknowable.
        #expect(DNSLease.split(["lease=10", "lease=20"]).stamp == .malformed)
        // Other keys that merely start alike are the advert's.
        #expect(DNSLease.split(["leases=3", "leasehold"]) == (["leases=3", "leasehold"], .none))
    }

    @Test func passesAfterTheGrace() {
        let expiry: Int64 = 1_000
        #expect(!DNSLease.hasPassed(.until(expiry), now: expiry))
        #expect(!DNSLease.hasPassed(.until(expiry), now: expiry + DNSLease.graceSeconds))
        #expect(DNSLease.hasPassed(.until(expiry), now: expiry + DNSLease.graceSeconds + 1))
        #expect(!DNSLease.hasPassed(.none, now: .max))
        #expect(DNSLease.hasPassed(.malformed, now: 0))
    }

    @Test func anyTXTRecordSplitsWithoutLosingAString() {
        var generator = SystemRandomNumberGenerator()
        // A combining mark after "lease=" hides the prefix from `hasPrefix` (it joins the "=" in one
        // character), not from the split, which reads bytes as DNS data is.
        let pieces = ["lease=", "lease", "=", "1", "9", "x", "v=1", "", "\u{0}", "é", " ", "\u{0301}"]
        for _ in 0..<2_000 {
            let txt = (0..<Int.random(in: 0...5, using: &generator)).map { _ in
                (0..<Int.random(in: 0...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
                    .joined()
            }
            let (advert, stamp) = DNSLease.split(txt)
            let leases = txt.filter { $0.utf8.elementsEqual("lease".utf8) || $0.utf8.starts(with: "lease=".utf8) }
            #expect(advert.count + leases.count == txt.count)
            if leases.count != 1 {
                #expect(stamp == (leases.isEmpty ? .none : .malformed))
            }
            if case .until(let expiry) = stamp {
                #expect(leases == ["lease=\(expiry)"] || leases[0].hasPrefix("lease=0"))
            }
        }
    }

    @Test func addressesFromRecordData() {
        #expect(DNSName.ipv4(wire: [10, 99, 12, 1]) == "10.99.12.1")
        #expect(DNSName.ipv4(wire: [10, 99, 12]) == nil)
        #expect(DNSName.ipv4(wire: [10, 99, 12, 1, 0]) == nil)
        func v6(_ text: String) -> [UInt8] {
            var address = in6_addr()
            precondition(inet_pton(AF_INET6, text, &address) == 1)
            return withUnsafeBytes(of: &address) { Array($0) }
        }
        #expect(DNSName.ipv6(wire: v6("fd99:12::1")) == "fd99:12::1")
        #expect(DNSName.ipv6(wire: v6("2001:db8:0:0:1:0:0:1")) == "2001:db8::1:0:0:1")
        #expect(DNSName.ipv6(wire: v6("2001:db8:0:1:1:1:1:1")) == "2001:db8:0:1:1:1:1:1")
        // Of no use in a DNS record: no zone, not unicast, or not IPv6 at all.
        for useless in ["fe80::1", "febf::1", "ff02::1", "::", "::1", "::ffff:10.0.0.1"] {
            #expect(DNSName.ipv6(wire: v6(useless)) == nil, "\(useless)")
        }
        #expect(DNSName.ipv6(wire: Array(repeating: 0x20, count: 15)) == nil)
        #expect(DNSName.ipv6(wire: Array(repeating: 0x20, count: 17)) == nil)
    }

    @Test func ipv6TextIsWhatTheCLibraryWrites() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            // Zero groups often, so that runs of them (and ties between runs) come up.
            let groups = (0..<8).map { _ in
                Bool.random(using: &generator) ? 0 : UInt16.random(in: 0...0xFFFF, using: &generator)
            }
            var bytes = groups.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
            bytes[0] = 0xFD  // unique local: always usable
            guard let text = DNSName.ipv6(wire: bytes) else {
                Issue.record("fd00::/8 refused: \(bytes)")
                continue
            }
            var address = in6_addr()
            withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count))
            let written = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            #expect(text == written)
        }
    }

    @Test func aLeaseIsJudgedAsTheBrowserLeavesItOut() {
        let expiry: Int64 = 1_764_560_000
        #expect(DomainDrop.judge(.none, now: .max) == nil)
        #expect(DomainDrop.judge(.until(expiry), now: expiry + DNSLease.graceSeconds) == nil)
        #expect(DomainDrop.judge(.until(expiry), now: expiry + DNSLease.graceSeconds + 1) == .leasePassed)
        #expect(DomainDrop.judge(.malformed, now: 0) == .badLease)
        // Every reason has a counter of its own, named as the datagrams' are.
        let names = DomainDrop.allCases.map(\.counterName)
        #expect(Set(names).count == names.count && names.allSatisfy { $0.hasPrefix("dns_") })
        #expect(DomainDrop.allCases.filter { !$0.leavesOut } == [.badTXT, .badAddress])
    }
}
