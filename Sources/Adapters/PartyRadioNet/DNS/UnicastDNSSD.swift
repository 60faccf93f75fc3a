import CLDNS
import CLDNSShim
import Glibc
import PartyRadioCore

/// One station as a unicast DNS-SD domain holds it (RFC 6763): a PTR from the service type to the
/// instance, SRV and TXT on the instance, A and AAAA records for the DJ's host.
public struct DNSService: Hashable, Sendable {
    /// The instance label (the station name, as text).
    public var instance: String
    /// The SRV target, absolute (`dj-<id>.DOMAIN.`), and its addresses: IPv4 (A records) and IPv6
    /// (AAAA records: global or unique local, never link-local).
    public var host: String
    public var ipv4: [String]
    public var ipv6: [String]
    public var port: UInt16
    /// The advert's TXT strings (the mDNS ones), without the lease.
    public var txt: [String]
    /// The lease the TXT record carried (browsing); publishing stamps a fresh one.
    public var lease: DNSLease.Stamp
    /// What browsing left out of its records and used the rest: a malformed TXT string
    /// (``DomainDrop/badTXT``), an A or AAAA record that is no address (``DomainDrop/badAddress``).
    public var flaws: Set<DomainDrop>

    public init(
        instance: String, host: String, ipv4: [String], ipv6: [String], port: UInt16, txt: [String],
        lease: DNSLease.Stamp = .none, flaws: Set<DomainDrop> = []
    ) {
        self.instance = instance
        self.host = host
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.port = port
        self.txt = txt
        self.lease = lease
        self.flaws = flaws
    }

    /// The address to reach it at for a node that speaks `families`: IPv4 first (as Avahi's
    /// resolver prefers it on a dual-stack link), else IPv6; nil if it has none of those.
    public func address(for families: [SocketAddress.Family]) -> String? {
        for family in families {
            if family == .ipv4, let first = ipv4.first { return first }
            if family == .ipv6, let first = ipv6.first { return first }
        }
        return nil
    }
}

/// What one browse of a domain found: the stations, and the instances left out whole for a
/// malformed record (a PTR whose target is no instance name, by its target's text; a bad SRV; no
/// address record that reads), by instance name. Whether a station's lease has passed is the
/// caller's to judge.
public struct DNSBrowse: Hashable, Sendable {
    public var services: [DNSService]
    public var refused: [String: Set<DomainDrop>]

    public init(services: [DNSService] = [], refused: [String: Set<DomainDrop>] = [:]) {
        self.services = services
        self.refused = refused
    }
}

/// Who holds an instance name in the zone: the host its SRV record points at, and its lease.
public struct DNSHolder: Hashable, Sendable {
    public var host: String
    public var lease: DNSLease.Stamp

    public init(host: String, lease: DNSLease.Stamp) {
        self.host = host
        self.lease = lease
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
        // ldns is loaded here, with --domain only (CLDNSShim); every call below goes through `ldns`.
        guard prldns_load() == 0 else { throw DNSSDError(String(cString: prldns_load_error()) + ".") }
        if let problem = DNSName.check(domain: domain) { throw DNSSDError("Bad --domain '\(domain)': \(problem).") }
        self.domain = DNSName.absolute(domain)
        self.key = key
        if let server {
            guard let parsed = Self.parse(server: server) else {
                throw DNSSDError(
                    "Bad --dns-server '\(server)': give an IPv4 address (ADDR or ADDR:PORT) or an IPv6 one (ADDR or [ADDR]:PORT)."
                )
            }
            self.server = parsed
        } else {
            self.server = nil
        }
    }

    deinit { if let resolver { ldns.ldns_resolver_deep_free!(resolver) } }

    /// `ADDR`, `ADDR:PORT` (IPv4), `IPV6` or `[IPV6]:PORT`. An IPv6 address with a zone
    /// (`fe80::1%eth0`) is refused: ldns takes none.
    static func parse(server: String) -> (host: String, port: UInt16)? {
        var host = server
        var port: Substring?
        if server.hasPrefix("[") {
            guard let close = server.firstIndex(of: "]") else { return nil }
            host = String(server[server.index(after: server.startIndex)..<close])
            let rest = server[server.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { return nil }
            if !rest.isEmpty { port = rest.dropFirst() }
            guard host.contains(":") else { return nil }
        } else if server.filter({ $0 == ":" }).count == 1 {
            let parts = server.split(separator: ":", omittingEmptySubsequences: false)
            host = String(parts[0])
            port = parts[1]
        }
        guard !host.contains("%"), SocketAddress(host, port: 0) != nil else { return nil }
        guard let port else { return (host, 53) }
        guard let number = UInt16(port), number > 0 else { return nil }
        return (host, number)
    }

    // MARK: Publishing

    /// Adds or replaces the station's records (its SRV, TXT, A and AAAA records are replaced whole,
    /// so a new address or port wins), with the TXT record stamped with `lease` from `now` (Unix
    /// seconds) and the lease's TTL. `replacing`: another DJ's host whose lease has passed; its
    /// address records go in the same update.
    public func publish(
        _ service: DNSService, lease: DNSLease, now: Int64, replacing stale: String? = nil
    ) throws(DNSSDError) {
        let ttl = lease.ttl
        let instance = DNSName.instanceName(service.instance, domain: domain)
        let ptr = "\(DNSName.serviceName(domain: domain)) \(ttl) IN PTR \(instance)"
        let srv = "\(instance) \(ttl) IN SRV 0 0 \(service.port) \(service.host)"
        let strings = service.txt + [lease.stamp(now: now)]
        let txt = "\(instance) \(ttl) IN TXT " + strings.map(DNSName.quoteTXT).joined(separator: " ")
        var changes: [Change] = [
            .deleteSet(instance, LDNS_RR_TYPE_SRV), .deleteSet(instance, LDNS_RR_TYPE_TXT),
            .deleteSet(service.host, LDNS_RR_TYPE_A), .deleteSet(service.host, LDNS_RR_TYPE_AAAA),
        ]
        if let stale, stale != service.host {
            changes += [.deleteSet(stale, LDNS_RR_TYPE_A), .deleteSet(stale, LDNS_RR_TYPE_AAAA)]
        }
        changes += [.add(ptr), .add(srv), .add(txt)]
        changes += service.ipv4.map { .add("\(service.host) \(ttl) IN A \($0)") }
        changes += service.ipv6.map { .add("\(service.host) \(ttl) IN AAAA \($0)") }
        try update(changes)
    }

    /// Who holds an instance name in the zone, if anyone: the host its SRV record points at
    /// (another DJ's station of the same name, or this DJ's from an earlier run) and the lease on
    /// its TXT record.
    public func holder(of instance: String) throws(DNSSDError) -> DNSHolder? {
        let resolver = try queryResolver()
        let name = DNSName.instanceName(instance, domain: domain)
        let srvs = try query(resolver, name, LDNS_RR_TYPE_SRV)
        defer { ldns.ldns_rr_list_deep_free!(srvs) }
        guard let srv = ldns.ldns_rr_list_rr!(srvs, 0), ldns.ldns_rr_rd_count!(srv) == 4,
            let target = ldns.ldns_rr_rdf!(srv, 3),
            let host = DNSName.text(wire: Self.bytes(target))
        else {
            return nil
        }
        return DNSHolder(host: host, lease: DNSLease.split(try txtStrings(resolver, name).found).stamp)
    }

    /// Deletes the station's records (its PTR only, other stations' stay).
    public func withdraw(_ service: DNSService) throws(DNSSDError) {
        let instance = DNSName.instanceName(service.instance, domain: domain)
        try update([
            .delete("\(DNSName.serviceName(domain: domain)) 0 IN PTR \(instance)"),
            .deleteSet(instance, LDNS_RR_TYPE_SRV), .deleteSet(instance, LDNS_RR_TYPE_TXT),
            .deleteSet(service.host, LDNS_RR_TYPE_A), .deleteSet(service.host, LDNS_RR_TYPE_AAAA),
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
        guard let list = ldns.ldns_rr_list_new!() else { throw DNSSDError("Out of memory.") }
        defer { ldns.ldns_rr_list_deep_free!(list) }
        for change in changes {
            let rr: UnsafeMutablePointer<ldns_rr>?
            switch change {
            case .add(let text): rr = try Self.record(text)
            case .delete(let text):
                rr = try Self.record(text)
                ldns.ldns_rr_set_class!(rr, LDNS_RR_CLASS_NONE)
                ldns.ldns_rr_set_ttl!(rr, 0)
            case .deleteSet(let name, let type):
                rr = ldns.ldns_rr_new!()
                guard let owner = ldns.ldns_dname_new_frm_str!(name) else {
                    ldns.ldns_rr_free!(rr)
                    throw DNSSDError("'\(name)' is not a DNS name.")
                }
                ldns.ldns_rr_set_owner!(rr, owner)
                ldns.ldns_rr_set_type!(rr, type)
                ldns.ldns_rr_set_class!(rr, LDNS_RR_CLASS_ANY)
                ldns.ldns_rr_set_ttl!(rr, 0)
            }
            _ = ldns.ldns_rr_list_push_rr!(list, rr)
        }
        guard let zone = ldns.ldns_dname_new_frm_str!(domain),
            let packet = ldns.ldns_update_pkt_new!(zone, LDNS_RR_CLASS_IN, nil, list, nil)
        else { throw DNSSDError("Cannot build a DNS update for \(domain).") }
        defer { ldns.ldns_pkt_free!(packet) }
        // An update is not a recursive query.
        ldns.ldns_pkt_set_rd!(packet, 0)
        if key != nil {
            let status = ldns.ldns_update_pkt_tsig_add!(packet, resolver)
            guard status == LDNS_STATUS_OK else { throw DNSSDError("Cannot sign the update: \(Self.text(status)).") }
        }
        var answer: UnsafeMutablePointer<ldns_pkt>?
        let status = ldns.ldns_resolver_send_pkt!(&answer, resolver, packet)
        defer { if let answer { ldns.ldns_pkt_free!(answer) } }
        guard status == LDNS_STATUS_OK, let answer else {
            throw DNSSDError(
                "The DNS server \(serverText) did not take the update for \(domain): \(Self.text(status)).")
        }
        let rcode = ldns.ldns_pkt_get_rcode!(answer)
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

    /// The stations in the domain now: PTR, then SRV, TXT, A and AAAA for each instance. An
    /// instance with no SRV or no address record is left out uncounted (it is being published or
    /// withdrawn); one whose records are malformed is left out and named in
    /// ``DNSBrowse/refused``; whether its lease has passed is the caller's to judge
    /// (``DNSService/lease``).
    public func browse(limit: Int = 64) throws(DNSSDError) -> DNSBrowse {
        let resolver = try queryResolver()
        let ptrs = try query(resolver, DNSName.serviceName(domain: domain), LDNS_RR_TYPE_PTR)
        defer { ldns.ldns_rr_list_deep_free!(ptrs) }
        var found = DNSBrowse()
        for i in 0..<min(Int(ldns.ldns_rr_list_rr_count!(ptrs)), limit) {
            guard let rr = ldns.ldns_rr_list_rr!(ptrs, i), let target = ldns.ldns_rr_rdf!(rr, 0) else { continue }
            let wire = Self.bytes(target)
            guard let instanceName = DNSName.instance(wire: wire), let targetText = DNSName.text(wire: wire) else {
                found.refused[DNSName.text(wire: wire) ?? "(PTR record \(i + 1))", default: []].insert(.badPTR)
                continue
            }
            switch try? resolve(resolver, instance: instanceName, name: targetText) {
            case .service(let service)?: found.services.append(service)
            case .refused(let reason)?: found.refused[instanceName, default: []].insert(reason)
            case .notYet?, nil: continue
            }
        }
        return found
    }

    /// What one instance's records make.
    private enum Resolution {
        case service(DNSService)
        /// Malformed: left out, and counted by the guest.
        case refused(DomainDrop)
        /// No SRV record or no address record yet (being published or withdrawn).
        case notYet
    }

    private func resolve(_ resolver: Resolver, instance: String, name: String) throws(DNSSDError) -> Resolution {
        let srvs = try query(resolver, name, LDNS_RR_TYPE_SRV)
        defer { ldns.ldns_rr_list_deep_free!(srvs) }
        guard let srv = ldns.ldns_rr_list_rr!(srvs, 0) else { return .notYet }
        guard ldns.ldns_rr_rd_count!(srv) == 4, let portField = ldns.ldns_rr_rdf!(srv, 2),
            let targetField = ldns.ldns_rr_rdf!(srv, 3)
        else { return .refused(.badSRV) }
        let portBytes = Self.bytes(portField)
        guard portBytes.count == 2, let host = DNSName.text(wire: Self.bytes(targetField)) else {
            return .refused(.badSRV)
        }
        let port = UInt16(portBytes[0]) << 8 | UInt16(portBytes[1])
        var flaws: Set<DomainDrop> = []
        let strings = try txtStrings(resolver, name)
        if strings.malformed > 0 { flaws.insert(.badTXT) }
        let (txt, lease) = DNSLease.split(strings.found)
        let ipv4 = try addresses(resolver, host, LDNS_RR_TYPE_A, DNSName.ipv4(wire:))
        let ipv6 = try addresses(resolver, host, LDNS_RR_TYPE_AAAA, DNSName.ipv6(wire:))
        if ipv4.malformed + ipv6.malformed > 0 { flaws.insert(.badAddress) }
        guard !ipv4.found.isEmpty || !ipv6.found.isEmpty else {
            return flaws.contains(.badAddress) ? .refused(.badAddress) : .notYet
        }
        return .service(
            DNSService(
                instance: instance, host: host, ipv4: ipv4.found, ipv6: ipv6.found, port: port, txt: txt, lease: lease,
                flaws: flaws))
    }

    /// The strings of the first TXT record at `name` (at most 32), and how many were malformed
    /// (left out).
    private func txtStrings(_ resolver: Resolver, _ name: String) throws(DNSSDError) -> (
        found: [String], malformed: Int
    ) {
        let txts = try query(resolver, name, LDNS_RR_TYPE_TXT)
        defer { ldns.ldns_rr_list_deep_free!(txts) }
        var txt: [String] = []
        var malformed = 0
        if let record = ldns.ldns_rr_list_rr!(txts, 0) {
            for j in 0..<min(ldns.ldns_rr_rd_count!(record), 32) {
                if let field = ldns.ldns_rr_rdf!(record, j), let string = DNSName.txtString(wire: Self.bytes(field)) {
                    txt.append(string)
                } else {
                    malformed += 1
                }
            }
        }
        return (txt, malformed)
    }

    /// The addresses of `type` (A or AAAA) at `host` that `parse` takes, at most 8, and how many
    /// of the records read were not (left out).
    private func addresses(
        _ resolver: Resolver, _ host: String, _ type: ldns_rr_type, _ parse: ([UInt8]) -> String?
    ) throws(DNSSDError) -> (found: [String], malformed: Int) {
        let records = try query(resolver, host, type)
        defer { ldns.ldns_rr_list_deep_free!(records) }
        var found: [String] = []
        var malformed = 0
        for i in 0..<min(ldns.ldns_rr_list_rr_count!(records), 8) {
            if let record = ldns.ldns_rr_list_rr!(records, i), let field = ldns.ldns_rr_rdf!(record, 0),
                let address = parse(Self.bytes(field))
            {
                found.append(address)
            } else {
                malformed += 1
            }
        }
        return (found, malformed)
    }

    /// The answer section's records of `type` at `name` (an empty list when there are none).
    private func query(_ resolver: Resolver, _ name: String, _ type: ldns_rr_type) throws(DNSSDError)
        -> RecordList
    {
        guard let dname = ldns.ldns_dname_new_frm_str!(name) else { throw DNSSDError("'\(name)' is not a DNS name.") }
        defer { ldns.ldns_rdf_deep_free!(dname) }
        var answer: UnsafeMutablePointer<ldns_pkt>?
        let status = ldns.ldns_resolver_query_status!(&answer, resolver, dname, type, LDNS_RR_CLASS_IN, UInt16(LDNS_RD))
        defer { if let answer { ldns.ldns_pkt_free!(answer) } }
        guard status == LDNS_STATUS_OK, let answer else {
            throw DNSSDError("The DNS server \(serverText) did not answer for \(name): \(Self.text(status)).")
        }
        return ldns.ldns_pkt_rr_list_by_type!(answer, type, LDNS_SECTION_ANSWER) ?? ldns.ldns_rr_list_new!()!
    }

    // MARK: Resolvers

    private var serverText: String {
        guard let server else { return "(from /etc/resolv.conf)" }
        return server.host.contains(":") ? "[\(server.host)]:\(server.port)" : "\(server.host):\(server.port)"
    }

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
            guard let zone = ldns.ldns_dname_new_frm_str!(domain) else {
                throw DNSSDError("'\(domain)' is not a DNS name.")
            }
            defer { ldns.ldns_rdf_deep_free!(zone) }
            var mname: UnsafeMutablePointer<ldns_rdf>?
            let status = ldns.ldns_update_soa_mname!(zone, resolver, LDNS_RR_CLASS_IN, &mname)
            guard status == LDNS_STATUS_OK, let mname else {
                throw DNSSDError(
                    "Cannot find the primary server of \(domain) (its SOA): \(Self.text(status)); pass --dns-server.")
            }
            defer { ldns.ldns_rdf_deep_free!(mname) }
            let mnameText = DNSName.text(wire: Self.bytes(mname)) ?? "?"
            let ipv4 = try addresses(resolver, mnameText, LDNS_RR_TYPE_A, DNSName.ipv4(wire:)).found
            let ipv6 =
                ipv4.isEmpty ? try addresses(resolver, mnameText, LDNS_RR_TYPE_AAAA, DNSName.ipv6(wire:)).found : []
            guard let primary = ipv4.first ?? ipv6.first else {
                throw DNSSDError(
                    "The primary server of \(domain), \(mnameText), has no address; pass --dns-server.")
            }
            let updater = try Self.makeResolver(server: (primary, 53))
            ldns.ldns_resolver_deep_free!(resolver)
            self.resolver = updater
            try sign(updater)
            return updater
        }
        try sign(resolver)
        return resolver
    }

    private func sign(_ resolver: Resolver) throws(DNSSDError) {
        guard let key else { return }
        ldns.ldns_resolver_set_tsig_keyname!(resolver, DNSName.absolute(key.name))
        ldns.ldns_resolver_set_tsig_algorithm!(resolver, DNSName.absolute(key.algorithm))
        ldns.ldns_resolver_set_tsig_keydata!(resolver, key.secret)
    }

    private static func makeResolver(server: (host: String, port: UInt16)?) throws(DNSSDError) -> Resolver {
        var made: Resolver?
        if let server {
            made = ldns.ldns_resolver_new!()
            let type = server.host.contains(":") ? LDNS_RDF_TYPE_AAAA : LDNS_RDF_TYPE_A
            guard let made, let address = ldns.ldns_rdf_new_frm_str!(type, server.host) else {
                throw DNSSDError("Cannot make a DNS resolver for \(server.host).")
            }
            defer { ldns.ldns_rdf_deep_free!(address) }
            guard ldns.ldns_resolver_push_nameserver!(made, address) == LDNS_STATUS_OK else {
                throw DNSSDError("Cannot use \(server.host) as the DNS server.")
            }
            ldns.ldns_resolver_set_port!(made, server.port)
        } else {
            let status = ldns.ldns_resolver_new_frm_file!(&made, nil)
            guard status == LDNS_STATUS_OK, made != nil else {
                throw DNSSDError("Cannot read /etc/resolv.conf (\(text(status))); pass --dns-server.")
            }
        }
        guard let made else { throw DNSSDError("Cannot make a DNS resolver.") }
        ldns.ldns_resolver_set_timeout!(made, timeval(tv_sec: timeoutSeconds, tv_usec: 0))
        ldns.ldns_resolver_set_retry!(made, tries)
        ldns.ldns_resolver_set_dnssec!(made, 0)
        return made
    }

    // MARK: Helpers

    private static func record(_ text: String) throws(DNSSDError) -> UnsafeMutablePointer<ldns_rr>? {
        var rr: UnsafeMutablePointer<ldns_rr>?
        let status = ldns.ldns_rr_new_frm_str!(&rr, text, 0, nil, nil)
        guard status == LDNS_STATUS_OK, rr != nil else {
            throw DNSSDError("Cannot build the DNS record '\(text)': \(Self.text(status)).")
        }
        return rr
    }

    private static func bytes(_ rdf: UnsafeMutablePointer<ldns_rdf>) -> [UInt8] {
        guard let data = ldns.ldns_rdf_data!(rdf) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: ldns.ldns_rdf_size!(rdf)))
    }

    private static func text(_ status: ldns_status) -> String {
        ldns.ldns_get_errorstr_by_id!(status).map { String(cString: $0) } ?? "error \(status)"
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

/// ldns's functions, loaded by `UnicastDNSSD.init` (which every use follows).
private var ldns: prldns_table { prldns_functions().pointee }
