import PartyRadioCore
import PartyRadioHTTP
import Synchronization
import Testing

@testable import PartyRadioNode

/// DNS rebinding: the DJ's web server answers only `Host` headers that name the DJ itself (its
/// addresses and names, at its port); anything else is 421 before the request is looked at.
@Suite struct WebHostsTests {
    let hosts = WebHosts(
        port: 8080, addresses: ["10.0.0.1", "fd99::1", "fe80::1%eth0"],
        names: ["partybox", "partybox.local", "dj-0011223344556677.party.example."])

    @Test(arguments: [
        "10.0.0.1:8080", "[fd99::1]:8080", "[FD99:0:0::1]:8080", "[fe80::1%25eth0]:8080", "[fe80::1%eth0]:8080",
        "[fe80::1]:8080", "partybox:8080", "PartyBox.local:8080", "partybox.local.:8080",
        "dj-0011223344556677.party.example:8080", "localhost:8080", "127.0.0.1:8080", "[::1]:8080",
    ])
    func theDJsOwnHostsAreAnswered(_ host: String) {
        #expect(hosts.admits(host))
    }

    @Test(arguments: [
        "rebind.attacker.example:8080", "attacker.example", "10.0.0.1", "10.0.0.1:80", "10.0.0.1:8081",
        "10.0.0.1:08080x", "10.0.0.2:8080", "10.0.0.1.attacker.example:8080", "partybox.attacker.example:8080",
        "[fd99::2]:8080", "[fd99::1]", "[fd99::1]8080", "[fd99::1%25]:8080", "[10.0.0.1]:8080", "fd99::1:8080",
        "10.0.0.1:8080:8080", "010.000.000.001:8080", "0x0a000001:8080", "167772161:8080", "localhost.attacker:8080",
        "", " 10.0.0.1:8080", "10.0.0.1:", "partybox.local..:8080",
    ])
    func anyOtherHostIsNot(_ host: String) {
        #expect(!hosts.admits(host))
    }

    @Test func noHostIsNotAnswered() {
        #expect(!hosts.admits(nil))
    }

    @Test func onPort80TheHostMayLeaveThePortOut() {
        let plain = WebHosts(port: 80, addresses: ["10.0.0.1"], names: ["partybox.local"])
        for host in ["10.0.0.1", "10.0.0.1:80", "partybox.local", "partybox.local:80"] { #expect(plain.admits(host)) }
        for host in ["10.0.0.1:8080", "attacker.example", "attacker.example:80"] { #expect(!plain.admits(host)) }
    }

    /// The site answers a foreign `Host` 421, with no cookie and nothing of the station's, on
    /// every path, reads and writes alike; its own address is answered as before.
    @Test func theSiteAnswersAForeignHost421() {
        let hub = WebHub()
        hub.publish("{\"station\":\"Test\"}", votes: VoteBook())
        let site = WebSite(
            hub: hub, inbox: Inbox<NodeInput>(), clock: NodeClock(), catalog: nil, address: "10.0.0.1", port: 8080,
            answerTimeout: 0.05)
        for (method, path) in [("GET", "/"), ("GET", "/api/state"), ("GET", "/api/events"), ("POST", "/api/vote")] {
            let foreign = site.respond(
                to: WebRequest(
                    method: method, path: path, clientAddress: "10.0.0.9", body: Array("choice=up".utf8),
                    headers: [
                        "host": "rebind.attacker.example:8080", "origin": "http://rebind.attacker.example:8080",
                        "content-type": "application/x-www-form-urlencoded",
                    ]))
            #expect(foreign.status == 421, "\(method) \(path)")
            #expect(!foreign.headers.contains { $0.0 == "Set-Cookie" })
        }
        let own = site.respond(
            to: WebRequest(
                method: "GET", path: "/api/state", clientAddress: "10.0.0.9", headers: ["host": "10.0.0.1:8080"]))
        #expect(own.status == 200)
    }

    /// An address the machine gains while the DJ runs (a new lease) is answered without a
    /// restart; the machine's addresses are read again at most once a second however many
    /// foreign `Host`s arrive, and a foreign name is still refused after a read.
    @Test func anAddressGainedLaterIsAnswered() {
        let hub = WebHub()
        hub.publish("{\"station\":\"Test\"}", votes: VoteBook())
        let machine = Mutex((addresses: ["10.0.0.1"], reads: 0))
        let site = WebSite(
            hub: hub, inbox: Inbox<NodeInput>(), clock: NodeClock(), catalog: nil, address: "10.0.0.1", port: 8080,
            answerTimeout: 0.05,
            currentAddresses: {
                machine.withLock { state in
                    state.reads += 1
                    return state.addresses
                }
            })
        func status(_ host: String) -> UInt32 {
            site.respond(
                to: WebRequest(method: "GET", path: "/api/state", clientAddress: "10.0.0.9", headers: ["host": host])
            )
            .status
        }
        #expect(status("10.0.0.1:8080") == 200)
        #expect(machine.withLock { $0.reads } == 0, "a known Host reads nothing")
        machine.withLock { $0.addresses = ["10.0.0.1", "192.168.7.20", "fd42::7"] }
        #expect(status("192.168.7.20:8080") == 200)
        #expect(status("[fd42::7]:8080") == 200)
        #expect(status("rebind.attacker.example:8080") == 421)
        for _ in 0..<20 { #expect(status("10.9.9.9:8080") == 421) }
        #expect(machine.withLock { $0.reads } == 1, "one read a second at most")
    }
}
