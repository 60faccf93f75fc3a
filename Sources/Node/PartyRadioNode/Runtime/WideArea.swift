import Dispatch
import Foundation
import PartyRadioCore
import PartyRadioNet

/// `--domain`, `--dns-server`, `--dns-key`: a unicast DNS-SD domain, for stations beyond the
/// multicast link (docs/NETWORKS.md).
public struct DomainSettings: Sendable, Equatable {
    public var domain: String
    /// `ADDR[:PORT]`; nil: the system's resolvers (and the zone's primary for updates).
    public var server: String?
    /// The TSIG key file (the DJ's updates).
    public var keyFile: String?

    public init(domain: String, server: String? = nil, keyFile: String? = nil) {
        self.domain = domain
        self.server = server
        self.keyFile = keyFile
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
/// goes on air (a refused update stops it with the server's answer), a refresh every
/// ``refreshSeconds`` (with the interface's address then, so a new address is published), and the
/// records deleted at ``stop()``. The ldns client is used on `queue` only.
final class DomainPublisher: @unchecked Sendable {  // `dns` and `service` are touched on `queue` only
    static let refreshSeconds = 30

    private let dns: UnicastDNSSD
    private var service: DNSService
    private let interfaceName: String
    private let reporter: any NodeReporter
    private let queue = DispatchQueue(label: "partyradio.dns.publish")
    private var timer: DispatchSourceTimer?
    private var published = false

    init(
        settings: DomainSettings, name: String, station: StationID, interface: NetworkInterface, port: UInt16,
        txt: [String], reporter: any NodeReporter
    ) throws(NodeError) {
        dns = try settings.client()
        let host = DNSName.hostName(station: station, domain: settings.domain)
        service = DNSService(instance: name, host: host, address: interface.address.host, port: port, txt: txt)
        interfaceName = interface.name
        self.reporter = reporter
        do throws(DNSSDError) {
            // A name another DJ holds in the zone is left to it: the first free one of
            // `Name`, `Name #2`, … is taken (this DJ's own records from an earlier run are replaced).
            var free: String?
            for candidate in DNSName.instanceCandidates(name) where free == nil {
                if try dns.owner(of: candidate).map({ $0 == host }) ?? true { free = candidate }
            }
            guard let free else {
                throw DNSSDError("'\(name)' and \(name) #2 to #9 are all taken in \(dns.domain) by other DJs.")
            }
            service.instance = free
            try dns.publish(service)
        } catch { throw NodeError(.discovery, error.description) }
        published = true
        let renamed = service.instance == name ? "" : " as '\(service.instance)' ('\(name)' is another DJ's there)"
        reporter.report(.notice("Published in the DNS domain \(dns.domain)\(renamed) (unicast DNS-SD)."))
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .seconds(Self.refreshSeconds), repeating: .seconds(Self.refreshSeconds))
        timer.setEventHandler { [weak self] in self?.refresh() }
        timer.resume()
        self.timer = timer
    }

    private func refresh() {
        if let interface = try? NetworkInterface.choose(interfaceName) { service.address = interface.address.host }
        do throws(DNSSDError) { try dns.publish(service) } catch {
            reporter.report(.warning("Could not refresh the station in \(dns.domain): \(error.description)"))
        }
    }

    /// Deletes the station's records (waits for the server's answer, a few seconds at most).
    func stop() {
        timer?.cancel()
        queue.sync {
            guard published else { return }
            published = false
            do throws(DNSSDError) { try dns.withdraw(service) } catch {
                reporter.report(.warning("Could not withdraw the station from \(dns.domain): \(error.description)"))
            }
        }
    }
}

/// Browses a unicast DNS-SD domain every ``intervalSeconds`` and hands what it finds to a node as
/// the DNS-SD events Avahi gives (`discovered`, `resolved`, `removed`), so the machines merge both:
/// a station is one station by its ID, however it was found. The first sweep runs before the
/// node starts, so a listing waits for what the domain holds. The ldns client is used on `queue`
/// only.
final class DomainBrowser: @unchecked Sendable {  // `dns` and `known` are touched on `queue` only
    static let intervalSeconds = 1

    private let dns: UnicastDNSSD
    private let inbox: Inbox<NodeInput>
    private let reporter: any NodeReporter
    private let queue = DispatchQueue(label: "partyradio.dns.browse")
    private var timer: DispatchSourceTimer?
    private var known: [String: DNSService] = [:]
    private var failing = false

    init(settings: DomainSettings, inbox: Inbox<NodeInput>, reporter: any NodeReporter) throws(NodeError) {
        dns = try settings.client()
        self.inbox = inbox
        self.reporter = reporter
        queue.sync { sweep() }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .seconds(Self.intervalSeconds), repeating: .seconds(Self.intervalSeconds))
        timer.setEventHandler { [weak self] in self?.sweep() }
        timer.resume()
        self.timer = timer
    }

    deinit { timer?.cancel() }

    func stop() { timer?.cancel() }

    private func sweep() {
        let found: [DNSService]
        do throws(DNSSDError) { found = try dns.browse() } catch {
            if !failing { reporter.report(.warning("Cannot browse \(dns.domain): \(error.description)")) }
            failing = true
            return
        }
        failing = false
        var now: [String: DNSService] = [:]
        for service in found { now[service.instance] = service }
        for (name, service) in now.sorted(by: { $0.key < $1.key }) where known[name] != service {
            if known[name] == nil { inbox.push(.discovery(.discovered(name: name))) }
            inbox.push(
                .discovery(
                    .resolved(name: name, address: service.address, port: service.port, txt: service.txt)))
        }
        for name in known.keys.sorted() where now[name] == nil { inbox.push(.discovery(.removed(name: name))) }
        known = now
    }
}

extension NodeSettings {
    /// A browser of `--domain`, if one was given (the guests' commands).
    func domainBrowser(inbox: Inbox<NodeInput>) throws(NodeError) -> DomainBrowser? {
        guard let domain else { return nil }
        return try DomainBrowser(settings: domain, inbox: inbox, reporter: reporter)
    }
}
