import Testing

@testable import PartyRadioNet

/// Which resolution of a service a dual-stack Avahi session reports: the preferred family's
/// (IPv4), whichever resolver answers first; a less preferred one only when the preferred one
/// failed or is not there (docs/NETWORKS.md, "Dual stack").
@Suite struct AvahiSightingsTests {
    let v4 = AvahiSession.avahiProtocol(.ipv4)
    let v6 = AvahiSession.avahiProtocol(.ipv6)
    var order: [Int32] { [v4, v6] }
    let v4Address = AvahiSession.Sighting.resolved(address: "10.0.0.1", port: 1, txt: [])
    let v6Address = AvahiSession.Sighting.resolved(address: "fe80::1%eth0", port: 1, txt: [])

    @Test func anIPv6AnswerWaitsWhileIPv4IsStillBeingResolved() {
        #expect(AvahiSession.reportable([v4: .resolving, v6: v6Address], order: order) == nil)
        #expect(AvahiSession.reportable([v4: v4Address, v6: v6Address], order: order) == v4)
        #expect(AvahiSession.reportable([v4: v4Address, v6: .resolving], order: order) == v4)
    }

    @Test func ipv6IsReportedWhenIPv4FailedOrWasNeverSeen() {
        #expect(AvahiSession.reportable([v4: .unresolved, v6: v6Address], order: order) == v6)
        #expect(AvahiSession.reportable([v6: v6Address], order: order) == v6)
        #expect(AvahiSession.reportable([v4: .unresolved, v6: .resolving], order: order) == nil)
        #expect(AvahiSession.reportable([v4: .unresolved, v6: .unresolved], order: order) == nil)
    }

    @Test func aNameResolvedDirectlyDoesNotWaitForAResolverThatMayOnlyTimeOut() {
        #expect(AvahiSession.reportable([v4: .resolving, v6: v6Address], order: order, waiting: false) == v6)
    }
}
