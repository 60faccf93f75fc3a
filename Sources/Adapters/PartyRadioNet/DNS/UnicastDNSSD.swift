import CLDNS
import Glibc
import PartyRadioCore

/// One station as a unicast DNS-SD domain holds it (RFC 6763): a PTR from the service type to the
/// instance, SRV and TXT on the instance, an A record for the DJ's host.
public struct DNSService: Hashable, Sendable {
    /// The instance label (the station name, as text).
    public var instance: String
    /// The SRV target, absolute (`dj-<id>.DOMAIN.`), and its IPv4 address.
    public var host: String
    public var address: String
    public var port: UInt16
    public var txt: [String]

    public init(instance: String, host: String, address: String, port: UInt16, txt: [String]) {
        self.instance = instance
        self.host = host
        self.address = address
        self.port = port
        self.txt = txt
    }
}

/// A DNS failure with what the user can do about it.
public struct DNSSDError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// DNS-SD in a unicast domain through ldns: RFC 2136 updates signed with TSIG to publish, plain
/// queries to browse. Synchronous (each call waits at most about ``timeoutSeconds`` × ``tries``),
/// so callers run it off their node's thread. Not thread-safe: one owner at a time.
public final class UnicastDNSSD {
    public static let timeoutSeconds = 2
    public static let tries: UInt8 = 2
    /// TTL of what the DJ publishes: caches forget a station that went away within a minute.
    public static let ttl: UInt32 = 60

    public let domain: String
    private let server: (host: String, port: UInt16)?
    private let key: TSIGKey?
    private typealias Resolver = UnsafeMutablePointer<ldns_resolver>
    private typealias RecordList = UnsafeMutablePointer<ldns_rr_list>
    private var resolver: Resolver?

    /// - Parameters:
    ///   - domain: the DNS-SD domain (`party.example`).
    ///   - server: the DNS server to ask and update (`--dns-server ADDR[:PORT]`); nil: the system's
    ///     resolvers for queries, the zone's primary (SOA MNAME) for updates.
    ///   - key: the TSIG key that signs updates (nil: unsigned, which servers should refuse).
    public init(domain: String, server: String?, key: TSIGKey?) throws(DNSSDError) {
        if let problem = DNSName.check(domain: domain) { throw DNSSDError("Bad --domain '\(domain)': \(problem).") }
        self.domain = DNSName.absolute(domain)
        self.key = key
        if let server {
            guard let parsed = Self.parse(server: server) else {
                throw DNSSDError("Bad --dns-server '\(server)': give an IPv4 address, optionally with :PORT.")
            }
            self.server = parsed
        } else {
            self.server = nil
        }
    }

    deinit { if let resolver { ldns_resolver_deep_free(resolver) } }

    /// `ADDR` or `ADDR:PORT` (IPv4).
    static func parse(server: String) -> (host: String, port: UInt16)? {
        let parts = server.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let host = parts.first.map(String.init), SocketAddress(host, port: 0) != nil else {
            return nil
        }
        guard parts.count == 2 else { return (host, 53) }
        guard let port = UInt16(parts[1]), port > 0 else { return nil }
        return (host, port)
    }

    // MARK: Publishing

    /// Adds or replaces the station's records (its SRV, TXT and A records are replaced whole, so a
    /// new address or port wins).
    public func publish(_ service: DNSService) throws(DNSSDError) {
        let instance = DNSName.instanceName(service.instance, domain: domain)
        let ptr = "\(DNSName.serviceName(domain: domain)) \(Self.ttl) IN PTR \(instance)"
        let srv = "\(instance) \(Self.ttl) IN SRV 0 0 \(service.port) \(service.host)"
        let txt = "\(instance) \(Self.ttl) IN TXT " + service.txt.map(DNSName.quoteTXT).joined(separator: " ")
        let a = "\(service.host) \(Self.ttl) IN A \(service.address)"
        try update([
            .deleteSet(instance, LDNS_RR_TYPE_SRV), .deleteSet(instance, LDNS_RR_TYPE_TXT),
            .deleteSet(service.host, LDNS_RR_TYPE_A), .add(ptr), .add(srv), .add(txt), .add(a),
        ])
    }

    /// The host an instance's SRV record points at, if the zone has one (another DJ's station of the
    /// same name, or this DJ's from an earlier run).
    public func owner(of instance: String) throws(DNSSDError) -> String? {
        let resolver = try queryResolver()
        let srvs = try query(resolver, DNSName.instanceName(instance, domain: domain), LDNS_RR_TYPE_SRV)
        defer { ldns_rr_list_deep_free(srvs) }
        guard let srv = ldns_rr_list_rr(srvs, 0), ldns_rr_rd_count(srv) == 4, let target = ldns_rr_rdf(srv, 3) else {
            return nil
        }
        return DNSName.text(wire: Self.bytes(target))
    }

    /// Deletes the station's records (its PTR only, other stations' stay).
    public func withdraw(_ service: DNSService) throws(DNSSDError) {
        let instance = DNSName.instanceName(service.instance, domain: domain)
        try update([
            .delete("\(DNSName.serviceName(domain: domain)) 0 IN PTR \(instance)"),
            .deleteSet(instance, LDNS_RR_TYPE_SRV), .deleteSet(instance, LDNS_RR_TYPE_TXT),
            .deleteSet(service.host, LDNS_RR_TYPE_A),
        ])
    }

    private enum Change {
        /// Add this record (presentation format).
        case add(String)
        /// Delete this one record (class NONE).
        case delete(String)
        /// Delete every record of this type at this name (class ANY).
        case deleteSet(String, ldns_rr_type)
    }

    private func update(_ changes: [Change]) throws(DNSSDError) {
        let resolver = try updateResolver()
        guard let list = ldns_rr_list_new() else { throw DNSSDError("Out of memory.") }
        defer { ldns_rr_list_deep_free(list) }
        for change in changes {
            let rr: UnsafeMutablePointer<ldns_rr>?
            switch change {
            case .add(let text): rr = try Self.record(text)
            case .delete(let text):
                rr = try Self.record(text)
                ldns_rr_set_class(rr, LDNS_RR_CLASS_NONE)
                ldns_rr_set_ttl(rr, 0)
            case .deleteSet(let name, let type):
                rr = ldns_rr_new()
                guard let owner = ldns_dname_new_frm_str(name) else {
                    ldns_rr_free(rr)
                    throw DNSSDError("'\(name)' is not a DNS name.")
                }
                ldns_rr_set_owner(rr, owner)
                ldns_rr_set_type(rr, type)
                ldns_rr_set_class(rr, LDNS_RR_CLASS_ANY)
                ldns_rr_set_ttl(rr, 0)
            }
            _ = ldns_rr_list_push_rr(list, rr)
        }
        guard let zone = ldns_dname_new_frm_str(domain),
            let packet = ldns_update_pkt_new(zone, LDNS_RR_CLASS_IN, nil, list, nil)
        else { throw DNSSDError("Cannot build a DNS update for \(domain).") }
        defer { ldns_pkt_free(packet) }
        // An update is not a recursive query.
        ldns_pkt_set_rd(packet, 0)
        if key != nil {
            let status = ldns_update_pkt_tsig_add(packet, resolver)
            guard status == LDNS_STATUS_OK else { throw DNSSDError("Cannot sign the update: \(Self.text(status)).") }
        }
        var answer: UnsafeMutablePointer<ldns_pkt>?
        let status = ldns_resolver_send_pkt(&answer, resolver, packet)
        defer { if let answer { ldns_pkt_free(answer) } }
        guard status == LDNS_STATUS_OK, let answer else {
            throw DNSSDError(
                "The DNS server \(serverText) did not take the update for \(domain): \(Self.text(status)).")
        }
        let rcode = ldns_pkt_get_rcode(answer)
        guard rcode == LDNS_RCODE_NOERROR else {
            let hint =
                switch rcode {
                case LDNS_RCODE_NOTAUTH, LDNS_RCODE_REFUSED:
                    key == nil
                        ? " (give the zone's TSIG key with --dns-key)"
                        : " (check that the zone's allow-update names the key in --dns-key)"
                case LDNS_RCODE_NOTZONE: " (is \(domain) a zone on that server?)"
                default: ""
                }
            throw DNSSDError(
                "The DNS server \(serverText) refused the update for \(domain): \(Self.rcodeText(rcode))\(hint).")
        }
    }

    // MARK: Browsing

    /// The stations in the domain now: PTR, then SRV, TXT and A for each instance. An instance
    /// with no SRV or no address is left out (it is being published or withdrawn).
    public func browse(limit: Int = 64) throws(DNSSDError) -> [DNSService] {
        let resolver = try queryResolver()
        let ptrs = try query(resolver, DNSName.serviceName(domain: domain), LDNS_RR_TYPE_PTR)
        defer { ldns_rr_list_deep_free(ptrs) }
        var found: [DNSService] = []
        for i in 0..<min(Int(ldns_rr_list_rr_count(ptrs)), limit) {
            guard let rr = ldns_rr_list_rr(ptrs, i), let target = ldns_rr_rdf(rr, 0),
                let instanceName = DNSName.instance(wire: Self.bytes(target)),
                let targetText = DNSName.text(wire: Self.bytes(target))
            else { continue }
            guard let service = try? resolve(resolver, instance: instanceName, name: targetText) else { continue }
            found.append(service)
        }
        return found
    }

    private func resolve(_ resolver: Resolver, instance: String, name: String) throws(DNSSDError) -> DNSService? {
        let srvs = try query(resolver, name, LDNS_RR_TYPE_SRV)
        defer { ldns_rr_list_deep_free(srvs) }
        guard let srv = ldns_rr_list_rr(srvs, 0), ldns_rr_rd_count(srv) == 4, let portField = ldns_rr_rdf(srv, 2),
            let targetField = ldns_rr_rdf(srv, 3)
        else { return nil }
        let portBytes = Self.bytes(portField)
        guard portBytes.count == 2, let host = DNSName.text(wire: Self.bytes(targetField)) else { return nil }
        let port = UInt16(portBytes[0]) << 8 | UInt16(portBytes[1])
        let txts = try query(resolver, name, LDNS_RR_TYPE_TXT)
        defer { ldns_rr_list_deep_free(txts) }
        var txt: [String] = []
        if let record = ldns_rr_list_rr(txts, 0) {
            for j in 0..<min(ldns_rr_rd_count(record), 32) {
                if let field = ldns_rr_rdf(record, j), let string = DNSName.txtString(wire: Self.bytes(field)) {
                    txt.append(string)
                }
            }
        }
        let addresses = try query(resolver, host, LDNS_RR_TYPE_A)
        defer { ldns_rr_list_deep_free(addresses) }
        guard let a = ldns_rr_list_rr(addresses, 0), let field = ldns_rr_rdf(a, 0) else { return nil }
        let octets = Self.bytes(field)
        guard octets.count == 4 else { return nil }
        return DNSService(
            instance: instance, host: host, address: octets.map(String.init).joined(separator: "."), port: port,
            txt: txt)
    }

    /// The answer section's records of `type` at `name` (an empty list when there are none).
    private func query(_ resolver: Resolver, _ name: String, _ type: ldns_rr_type) throws(DNSSDError)
        -> RecordList
    {
        guard let dname = ldns_dname_new_frm_str(name) else { throw DNSSDError("'\(name)' is not a DNS name.") }
        defer { ldns_rdf_deep_free(dname) }
        var answer: UnsafeMutablePointer<ldns_pkt>?
        let status = ldns_resolver_query_status(&answer, resolver, dname, type, LDNS_RR_CLASS_IN, UInt16(LDNS_RD))
        defer { if let answer { ldns_pkt_free(answer) } }
        guard status == LDNS_STATUS_OK, let answer else {
            throw DNSSDError("The DNS server \(serverText) did not answer for \(name): \(Self.text(status)).")
        }
        return ldns_pkt_rr_list_by_type(answer, type, LDNS_SECTION_ANSWER) ?? ldns_rr_list_new()!
    }

    // MARK: Resolvers

    private var serverText: String { server.map { "\($0.host):\($0.port)" } ?? "(from /etc/resolv.conf)" }

    private func queryResolver() throws(DNSSDError) -> Resolver {
        if let resolver { return resolver }
        let made = try Self.makeResolver(server: server)
        resolver = made
        return made
    }

    /// The resolver updates go to: `--dns-server`, else the zone's primary server (SOA MNAME).
    private func updateResolver() throws(DNSSDError) -> Resolver {
        let resolver = try queryResolver()
        if server == nil {
            // The system resolvers find the primary; updates go there.
            guard let zone = ldns_dname_new_frm_str(domain) else { throw DNSSDError("'\(domain)' is not a DNS name.") }
            defer { ldns_rdf_deep_free(zone) }
            var mname: UnsafeMutablePointer<ldns_rdf>?
            let status = ldns_update_soa_mname(zone, resolver, LDNS_RR_CLASS_IN, &mname)
            guard status == LDNS_STATUS_OK, let mname else {
                throw DNSSDError(
                    "Cannot find the primary server of \(domain) (its SOA): \(Self.text(status)); pass --dns-server.")
            }
            defer { ldns_rdf_deep_free(mname) }
            let mnameText = DNSName.text(wire: Self.bytes(mname)) ?? "?"
            let addresses = try query(resolver, mnameText, LDNS_RR_TYPE_A)
            defer { ldns_rr_list_deep_free(addresses) }
            guard let a = ldns_rr_list_rr(addresses, 0), let field = ldns_rr_rdf(a, 0), Self.bytes(field).count == 4
            else {
                throw DNSSDError(
                    "The primary server of \(domain), \(mnameText), has no IPv4 address; pass --dns-server.")
            }
            let primary = Self.bytes(field).map(String.init).joined(separator: ".")
            let updater = try Self.makeResolver(server: (primary, 53))
            ldns_resolver_deep_free(resolver)
            self.resolver = updater
            try sign(updater)
            return updater
        }
        try sign(resolver)
        return resolver
    }

    private func sign(_ resolver: Resolver) throws(DNSSDError) {
        guard let key else { return }
        ldns_resolver_set_tsig_keyname(resolver, DNSName.absolute(key.name))
        ldns_resolver_set_tsig_algorithm(resolver, DNSName.absolute(key.algorithm))
        ldns_resolver_set_tsig_keydata(resolver, key.secret)
    }

    private static func makeResolver(server: (host: String, port: UInt16)?) throws(DNSSDError) -> Resolver {
        var made: Resolver?
        if let server {
            made = ldns_resolver_new()
            guard let made, let address = ldns_rdf_new_frm_str(LDNS_RDF_TYPE_A, server.host) else {
                throw DNSSDError("Cannot make a DNS resolver for \(server.host).")
            }
            defer { ldns_rdf_deep_free(address) }
            guard ldns_resolver_push_nameserver(made, address) == LDNS_STATUS_OK else {
                throw DNSSDError("Cannot use \(server.host) as the DNS server.")
            }
            ldns_resolver_set_port(made, server.port)
        } else {
            let status = ldns_resolver_new_frm_file(&made, nil)
            guard status == LDNS_STATUS_OK, made != nil else {
                throw DNSSDError("Cannot read /etc/resolv.conf (\(text(status))); pass --dns-server.")
            }
        }
        guard let made else { throw DNSSDError("Cannot make a DNS resolver.") }
        ldns_resolver_set_timeout(made, timeval(tv_sec: timeoutSeconds, tv_usec: 0))
        ldns_resolver_set_retry(made, tries)
        ldns_resolver_set_dnssec(made, 0)
        return made
    }

    // MARK: Helpers

    private static func record(_ text: String) throws(DNSSDError) -> UnsafeMutablePointer<ldns_rr>? {
        var rr: UnsafeMutablePointer<ldns_rr>?
        let status = ldns_rr_new_frm_str(&rr, text, 0, nil, nil)
        guard status == LDNS_STATUS_OK, rr != nil else {
            throw DNSSDError("Cannot build the DNS record '\(text)': \(Self.text(status)).")
        }
        return rr
    }

    private static func bytes(_ rdf: UnsafeMutablePointer<ldns_rdf>) -> [UInt8] {
        guard let data = ldns_rdf_data(rdf) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: ldns_rdf_size(rdf)))
    }

    private static func text(_ status: ldns_status) -> String {
        ldns_get_errorstr_by_id(status).map { String(cString: $0) } ?? "error \(status)"
    }

    private static func rcodeText(_ rcode: ldns_pkt_rcode) -> String {
        switch rcode {
        case LDNS_RCODE_NOTAUTH: "NOTAUTH"
        case LDNS_RCODE_REFUSED: "REFUSED"
        case LDNS_RCODE_NOTZONE: "NOTZONE"
        case LDNS_RCODE_SERVFAIL: "SERVFAIL"
        case LDNS_RCODE_FORMERR: "FORMERR"
        default: "rcode \(rcode.rawValue)"
        }
    }
}
