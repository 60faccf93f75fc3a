import Foundation
import PartyRadioCore
import PartyRadioNet
import Synchronization

/// `--domain`, `--dns-server`, `--dns-key`: a unicast DNS-SD domain, for stations beyond the
/// multicast link (docs/NETWORKS.md).
public struct DomainSettings: Sendable, Equatable {
    public var domain: String
    /// `ADDR[:PORT]`; nil: the system's resolvers (and the zone's primary for updates).
    public var server: String?
    /// The TSIG key file (the DJ's updates).
    public var keyFile: String?
    /// The lease on the DJ's records (how long they count after a DJ was killed; the tests shorten
    /// it so that a killed DJ's station drops out within seconds).
    public var lease: DNSLease

    public init(domain: String, server: String? = nil, keyFile: String? = nil, lease: DNSLease = DNSLease()) {
        self.domain = domain
        self.server = server
        self.keyFile = keyFile
        self.lease = lease
    }

    /// The ldns client for these settings, with the key file read and checked.
    func client() throws(NodeError) -> UnicastDNSSD {
        var key: TSIGKey?
        if let keyFile {
            let text: String
            do { text = try String(contentsOfFile: keyFile, encoding: .utf8) } catch {
                throw NodeError(.storage, "Cannot read the DNS key file \(keyFile): \(error.localizedDescription).")
            }
            do { key = try TSIGKey(keyFile: text) } catch {
                throw NodeError(.usage, "The DNS key file \(keyFile) is not a BIND key file: \(error.description).")
            }
        }
        do { return try UnicastDNSSD(domain: domain, server: server, key: key) } catch {
            throw NodeError(.usage, error.description)
        }
    }
}

/// Keeps the DJ's station published in a unicast DNS-SD domain: the first update before the DJ
/// goes on air (a refused update stops it with the server's answer), a renewal every
/// ``DNSLease/refreshSeconds`` (with the interface's addresses then, so a new address is published,
/// and a new lease), and the records deleted at ``stop()``. The node's loop says when to renew
/// (``refresh()``, on its timer); the renewal runs on the publisher's worker thread, off the node's.
final class DomainPublisher: Sendable {
    /// What the publisher keeps: the ldns client and the records, under one lock (a renewal on
    /// the worker, or the deletion at the end, holds it for its queries).
    private struct Publication {
        let dns: UnicastDNSSD
        let lease: DNSLease
        var service: DNSService
        var published = false
        var warnedNoAddress = false
    }

    private let publication: Mutex<Publication>
    private let domain: String
    private let interfaceName: String
    /// The station name as given (`--name`): the instance names are tried from it.
    private let name: String
    private let reporter: any NodeReporter
    private let worker = WorkerThread(name: "partyradio.dns.publish")
    /// How often the node's loop calls ``refresh()``.
    let refreshNs: Int64

    init(
        settings: DomainSettings, name: String, station: StationID, interface: NetworkInterface, port: UInt16,
        txt: [String], reporter: any NodeReporter
    ) throws(NodeError) {
        let dns = try settings.client()
        domain = dns.domain
        refreshNs = Int64(settings.lease.refreshSeconds) * Nanos.perSecond
        let host = DNSName.hostName(station: station, domain: settings.domain)
        let (ipv4, ipv6) = Self.addresses(interface)
        var publication = Publication(
            dns: dns, lease: settings.lease,
            service: DNSService(instance: name, host: host, ipv4: ipv4, ipv6: ipv6, port: port, txt: txt))
        interfaceName = interface.name
        self.name = name
        self.reporter = reporter
        Self.warnIfNoAddress(&publication, reporter: reporter)
        let claim: Claim
        do throws(DNSSDError) {
            claim = try Self.claimName(name, &publication)
        } catch { throw NodeError(.discovery, error.description) }
        publication.published = true
        let instance = publication.service.instance
        self.publication = Mutex(publication)
        let renamed = instance == name ? "" : " as '\(instance)' ('\(name)' is another DJ's there)"
        reporter.report(.notice("Published in the DNS domain \(domain)\(renamed) (unicast DNS-SD)."))
        report(claim)
    }

    /// The instance name a DJ publishes under, and the dead DJ it takes it from, if any.
    struct Claim: Equatable {
        var instance: String
        /// The host of a DJ whose lease on `instance` had passed.
        var took: String?
    }

    /// A name another DJ holds in the zone is left to it, unless its lease has passed (a DJ that
    /// was killed): the first free one of `candidates` is taken. This DJ's own (`host`) records
    /// are replaced. Nil when all are held. `holder` looks an instance name up in the zone.
    static func claim(
        _ candidates: [String], host: String, now: Int64, holder: (String) throws(DNSSDError) -> DNSHolder?
    ) throws(DNSSDError) -> Claim? {
        for candidate in candidates {
            guard let held = try holder(candidate), held.host != host else { return Claim(instance: candidate) }
            if DNSLease.hasPassed(held.lease, now: now) { return Claim(instance: candidate, took: held.host) }
        }
        return nil
    }

    /// Finds a free instance name and publishes the station under it.
    private static func claimName(_ name: String, _ publication: inout Publication) throws(DNSSDError) -> Claim {
        let now = unixNow()
        let dns = publication.dns
        guard
            let claim = try claim(
                DNSName.instanceCandidates(name), host: publication.service.host, now: now,
                holder: { (name) throws(DNSSDError) in try dns.holder(of: name) })
        else {
            throw DNSSDError("'\(name)' and \(name) #2 to #9 are all taken in \(dns.domain) by other DJs.")
        }
        publication.service.instance = claim.instance
        try dns.publish(publication.service, lease: publication.lease, now: now, replacing: claim.took)
        return claim
    }

    private func report(_ claim: Claim) {
        guard let took = claim.took else { return }
        reporter.report(
            .notice("Took over '\(claim.instance)' in \(domain) from \(took), whose lease had passed."))
    }

    /// What the DJ publishes of its interface's addresses: its IPv4 address, and its IPv6 ones that
    /// reach beyond the link (global or unique local; a link-local one needs a zone, which a DNS
    /// record cannot carry).
    static func addresses(_ interface: NetworkInterface) -> (ipv4: [String], ipv6: [String]) {
        let ipv4 =
            interface.hasIPv4 ? [SocketAddress(addressNetworkOrder: interface.addressNetworkOrder, port: 0).host] : []
        let ipv6 = interface.ipv6Addresses.filter { !$0.isLinkLocal }.map(\.host)
        var unique: [String] = []
        for address in ipv6 where !unique.contains(address) { unique.append(address) }
        return (ipv4, Array(unique.prefix(8)))
    }

    static func unixNow() -> Int64 { Int64(Date().timeIntervalSince1970) }

    private static func warnIfNoAddress(_ publication: inout Publication, reporter: any NodeReporter) {
        guard publication.service.ipv4.isEmpty && publication.service.ipv6.isEmpty else {
            publication.warnedNoAddress = false
            return
        }
        guard !publication.warnedNoAddress else { return }
        publication.warnedNoAddress = true
        reporter.report(
            .warning(
                "The interface has no IPv4 address and no IPv6 address beyond link-local: guests beyond this link "
                    + "cannot reach the station through \(publication.dns.domain)."))
    }

    /// Renews the records on the worker thread (skipped while the last renewal still runs).
    func refresh() {
        worker.offer { [self] in publication.withLock { renew(&$0) } }
    }

    private func renew(_ publication: inout Publication) {
        if let interface = try? NetworkInterface.choose(interfaceName) {
            (publication.service.ipv4, publication.service.ipv6) = Self.addresses(interface)
            Self.warnIfNoAddress(&publication, reporter: reporter)
        }
        let dns = publication.dns
        do throws(DNSSDError) {
            let now = Self.unixNow()
            // Another DJ may have taken the name while this one could not renew it (its network
            // was down, or it was stopped, for longer than the lease): leave it to that DJ rather
            // than overwrite its records every renewal, and move to the next free name.
            if let holder = try dns.holder(of: publication.service.instance), holder.host != publication.service.host,
                !DNSLease.hasPassed(holder.lease, now: now)
            {
                let lost = publication.service.instance
                // Not ours to withdraw any more, until another name is.
                publication.published = false
                let claim = try Self.claimName(name, &publication)
                publication.published = true
                reporter.report(
                    .notice(
                        "Another DJ took '\(lost)' in \(dns.domain) while this one could not renew its lease; "
                            + "published as '\(claim.instance)' there now."))
                report(claim)
                return
            }
            try dns.publish(publication.service, lease: publication.lease, now: now)
        } catch {
            reporter.report(.warning("Could not refresh the station in \(dns.domain): \(error.description)"))
        }
    }

    /// Deletes the station's records once a renewal under way is done (waits for the server's
    /// answer, a few seconds at most).
    func stop() {
        worker.stop(waiting: true)
        publication.withLock { publication in
            guard publication.published else { return }
            publication.published = false
            do throws(DNSSDError) { try publication.dns.withdraw(publication.service) } catch {
                reporter.report(
                    .warning("Could not withdraw the station from \(domain): \(error.description)"))
            }
        }
    }
}

/// Browses a unicast DNS-SD domain every ``intervalSeconds`` and hands what it finds to a node as
/// the DNS-SD events Avahi gives (`discovered`, `resolved`, `removed`), so the machines merge both:
/// a station is one station by its ID, however it was found. A station whose lease has passed (its
/// DJ was killed) counts as gone, and one with no address in a family this node speaks is left
/// out. What is left out, whole or in part, is told the node as `refused` with its reason
/// (``DomainDrop``), once for as long as it lasts, and the node counts it among its drops. The
/// first sweep runs before the node starts, so a listing waits for what the domain holds; the node's
/// loop asks for the others (``sweepSoon()``, on its timer), which run on the browser's worker thread.
final class DomainBrowser: Sendable {
    static let intervalSeconds = 1

    /// What the browser keeps between sweeps, with the ldns client, under one lock.
    private struct Sweeper {
        let dns: UnicastDNSSD
        var known: [String: Sighting] = [:]
        var failing = false
        /// What the last sweep left out, by instance name and reason: told the node once each.
        var refused: [String: Set<DomainDrop>] = [:]
    }

    private let sweeper: Mutex<Sweeper>
    private let families: [SocketAddress.Family]
    private let inbox: Inbox<NodeInput>
    private let reporter: any NodeReporter
    private let worker = WorkerThread(name: "partyradio.dns.browse")

    /// What the node was told of one instance.
    struct Sighting: Equatable {
        var address: String
        var port: UInt16
        var txt: [String]
    }

    init(
        settings: DomainSettings, families: [SocketAddress.Family], inbox: Inbox<NodeInput>,
        reporter: any NodeReporter
    ) throws(NodeError) {
        var sweeper = Sweeper(dns: try settings.client())
        self.families = families
        self.inbox = inbox
        self.reporter = reporter
        Self.sweep(&sweeper, families: families, inbox: inbox, reporter: reporter)
        self.sweeper = Mutex(sweeper)
    }

    /// Sweeps the domain again on the worker thread (skipped while the last sweep still runs).
    func sweepSoon() {
        worker.offer { [self] in
            sweeper.withLock { Self.sweep(&$0, families: families, inbox: inbox, reporter: reporter) }
        }
    }

    /// No more sweeps; one under way ends on its own.
    func stop() { worker.stop(waiting: false) }

    /// What a node speaking `families` makes of a browse at `now` (Unix seconds): each live
    /// station's address, port and advert, by instance name; and what was left out, by instance
    /// name and reason: whole (a malformed record, a lease passed or malformed, no address in those
    /// families) or in part (a bad TXT string or address record, the rest used).
    static func sightings(_ found: DNSBrowse, families: [SocketAddress.Family], now: Int64) -> (
        live: [String: Sighting], refused: [String: Set<DomainDrop>]
    ) {
        var live: [String: Sighting] = [:]
        var refused = found.refused
        for service in found.services {
            var reasons = service.flaws
            if let reason = DomainDrop.judge(service.lease, now: now) {
                reasons.insert(reason)
            } else if let address = service.address(for: families) {
                live[service.instance] = Sighting(address: address, port: service.port, txt: service.txt)
            } else {
                reasons.insert(.noUsableAddress)
            }
            if !reasons.isEmpty { refused[service.instance, default: []].formUnion(reasons) }
        }
        return (live, refused)
    }

    /// What of `now` is new since `before`: each instance's reasons not told yet, in order.
    static func newlyRefused(_ now: [String: Set<DomainDrop>], since before: [String: Set<DomainDrop>]) -> [(
        name: String, reason: DomainDrop
    )] {
        now.sorted { $0.key < $1.key }.flatMap { name, reasons in
            reasons.subtracting(before[name] ?? []).sorted { $0.rawValue < $1.rawValue }.map { (name, $0) }
        }
    }

    private static func sweep(
        _ sweeper: inout Sweeper, families: [SocketAddress.Family], inbox: Inbox<NodeInput>,
        reporter: any NodeReporter
    ) {
        let found: DNSBrowse
        do throws(DNSSDError) { found = try sweeper.dns.browse() } catch {
            if !sweeper.failing {
                reporter.report(.warning("Cannot browse \(sweeper.dns.domain): \(error.description)"))
            }
            sweeper.failing = true
            return
        }
        sweeper.failing = false
        let (now, refused) = sightings(found, families: families, now: DomainPublisher.unixNow())
        for (name, reason) in newlyRefused(refused, since: sweeper.refused) {
            inbox.push(.discovery(.refused(name: name, reason: reason)))
        }
        sweeper.refused = refused
        for (name, sighting) in now.sorted(by: { $0.key < $1.key }) where sweeper.known[name] != sighting {
            if sweeper.known[name] == nil { inbox.push(.discovery(.discovered(name: name))) }
            inbox.push(
                .discovery(
                    .resolved(name: name, address: sighting.address, port: sighting.port, txt: sighting.txt)))
        }
        for name in sweeper.known.keys.sorted() where now[name] == nil {
            inbox.push(.discovery(.removed(name: name)))
        }
        sweeper.known = now
    }
}
