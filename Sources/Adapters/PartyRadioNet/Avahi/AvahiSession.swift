import CAvahi
import Glibc
import Synchronization

/// What the Avahi poll thread reports. Delivered to the session's handler on that thread:
/// the handler must only copy and hand off (docs/ARCHITECTURE.md, "Threads").
public enum AvahiEvent: Sendable, Equatable {
    /// A browsed service appeared; its resolution follows as ``resolved``.
    case discovered(name: String)
    /// The browser has reported everything it knows for now (the first sweep is done).
    case allForNow
    /// A browsed service was resolved to an address (IPv4, or IPv6 with its zone when link-local)
    /// and port. Seen over both families, a service is reported once, at the address of the
    /// session's first family that resolved it (``AvahiSession/init(interfaceIndex:families:handler:)``).
    case resolved(name: String, address: String, port: UInt16, txt: [String])
    /// A browsed service could not be resolved (it may have gone already).
    case unresolved(name: String)
    /// A browsed service was withdrawn (or its host's records expired).
    case removed(name: String)
    /// Our service is established on the network under `name`.
    case published(name: String)
    /// Our name was taken; Avahi's alternative `to` is being published instead.
    case renamed(from: String, to: String)
    /// The daemon went away or refused us; the message says what happened.
    case failed(String)
    /// avahi-daemon went away (stopped, restarted, crashed). The session waits for it and, once it
    /// is back, publishes and browses again by itself, then says ``daemonBack``.
    case daemonLost
    /// avahi-daemon is back: the publication is registered again and browsing starts afresh (every
    /// station is reported again).
    case daemonBack
}

/// Why Avahi could not be used, with the fix in the message. Switch on ``kind``; ``avahiCode``
/// keeps Avahi's own error number, the cause, when there was one.
public struct AvahiError: Error, CustomStringConvertible, Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// avahi-daemon is not running or not reachable over D-Bus.
        case unreachable
        /// Avahi's poll thread did not start.
        case pollThread
        /// The daemon refused a call: publishing, updating a record, browsing.
        case refused
    }

    public let kind: Kind
    /// Avahi's error number (`AVAHI_ERR_*`, negative), or nil.
    public let avahiCode: Int32?
    /// One sentence saying what went wrong and what to do.
    public let message: String

    public var description: String { message }

    static func unreachable(_ code: Int32) -> AvahiError {
        AvahiError(
            kind: .unreachable, avahiCode: code,
            message: "avahi-daemon is not reachable (\(String(cString: avahi_strerror(code)))); "
                + "install and start it: 'sudo apt-get install avahi-daemon && sudo systemctl start avahi-daemon'.")
    }

    static func call(_ name: String, _ code: Int32) -> AvahiError {
        AvahiError(
            kind: .refused, avahiCode: code,
            message: "Avahi refused \(name): \(String(cString: avahi_strerror(code))).")
    }

    static let pollThread = AvahiError(
        kind: .pollThread, avahiCode: nil, message: "Avahi could not start its poll thread.")
}

/// One connection to avahi-daemon over D-Bus, with Avahi's threaded poll running its callbacks.
///
/// Calls into Avahi from other threads take the poll lock, as libavahi-client requires.
/// C callbacks are the free functions below; they reach the session through an unretained
/// pointer that stays valid because ``close()`` stops the poll thread before anything is freed.
/// `@unchecked Sendable`: Avahi's poll lock, which Swift cannot see, guards its state (callers take
/// it; the callbacks run on the poll thread, which holds it).
public final class AvahiSession: @unchecked Sendable {
    private let poll: OpaquePointer
    private var client: OpaquePointer?
    private var group: OpaquePointer?
    private var browser: OpaquePointer?
    private var publication: Publication?
    /// The service type browsed, to browse again after the daemon came back.
    private var browsedType: String?
    /// The daemon went away and the session waits for it.
    private var waitingForDaemon = false
    private let interfaceIndex: Int32
    /// The address families to publish, browse and resolve in, the preferred first.
    private let families: [SocketAddress.Family]
    /// What browsing saw of each service name, per protocol (under Avahi's lock).
    private var sightings: [String: [AvahiProtocol: Sighting]] = [:]
    /// Names resolved at once by ``resolve(name:type:)`` that the browser has not reported (yet):
    /// a failure there is silent, since the name may be a prefix, an ID, or no station at all.
    private var resolvedDirectly: Set<String> = []
    let handler: @Sendable (AvahiEvent) -> Void
    private let closed = Mutex(false)

    /// One protocol's view of a browsed service: waiting for its resolver, resolved, or not.
    enum Sighting: Equatable {
        case resolving
        case resolved(address: String, port: UInt16, txt: [String])
        case unresolved
    }

    private struct Publication {
        var name: String
        /// The name the node asked for (``name`` may be Avahi's alternative after a collision).
        var requestedName: String
        var type: String
        var port: UInt16
        var txt: [String]
    }

    /// Connects to the daemon. Fails at once, with the fix in the message, when it is not running.
    /// - Parameters:
    ///   - interfaceIndex: publish and browse on this interface only (AVAHI_IF_UNSPEC = -1 for all).
    ///   - families: publish and browse over these families (the node's sockets'), and report a
    ///     service seen over several at the address of the first that resolved it.
    ///   - handler: called on Avahi's thread for every event; must not block.
    public init(
        interfaceIndex: Int32, families: [SocketAddress.Family] = [.ipv4],
        handler: @escaping @Sendable (AvahiEvent) -> Void
    ) throws(AvahiError) {
        guard let poll = avahi_threaded_poll_new() else { throw AvahiError.pollThread }
        self.poll = poll
        self.interfaceIndex = interfaceIndex
        self.families = families.isEmpty ? [.ipv4] : families
        self.handler = handler
        var error: Int32 = 0
        client = avahi_client_new(
            avahi_threaded_poll_get(poll), AvahiClientFlags(0), avahiClientCallback,
            Unmanaged.passUnretained(self).toOpaque(), &error)
        // On failure deinit still runs (every property is set): mark the session closed first
        // so that it does not stop or free what is freed here.
        guard client != nil else {
            closed.withLock { $0 = true }
            avahi_threaded_poll_free(poll)
            throw AvahiError.unreachable(error)
        }
        guard avahi_threaded_poll_start(poll) >= 0 else {
            closed.withLock { $0 = true }
            avahi_client_free(client)
            avahi_threaded_poll_free(poll)
            throw AvahiError.pollThread
        }
    }

    deinit { close() }

    /// Withdraws everything published and disconnects. Safe to call twice.
    public func close() {
        let wasClosed = closed.withLock { closed in
            defer { closed = true }
            return closed
        }
        guard !wasClosed else { return }
        avahi_threaded_poll_stop(poll)
        if let browser { avahi_service_browser_free(browser) }
        if let group { avahi_entry_group_free(group) }
        if let client { avahi_client_free(client) }
        avahi_threaded_poll_free(poll)
        browser = nil
        group = nil
        client = nil
    }

    private func locked<T>(_ body: () throws(AvahiError) -> T) throws(AvahiError) -> T {
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        return try body()
    }

    /// The machine's mDNS host name as the daemon holds it (`partybox.local`, or Avahi's
    /// alternative after a conflict: `partybox-2.local`); nil while the daemon is away.
    public var hostName: String? {
        let name = try? locked { () throws(AvahiError) -> String? in
            guard let client, let fqdn = avahi_client_get_host_name_fqdn(client) else { return nil }
            return String(cString: fqdn)
        }
        return name ?? nil
    }

    // MARK: Publishing

    /// Publishes a service; collisions are resolved with Avahi's alternative names and reported.
    /// Publishing again what is already published (the same name as asked, type, port and TXT)
    /// changes nothing: a node may announce itself early and its machine ask again.
    public func publish(name: String, type: String, port: UInt16, txt: [String]) throws(AvahiError) {
        try locked { () throws(AvahiError) in
            if let publication, publication.requestedName == name, publication.type == type, publication.port == port,
                publication.txt == txt
            {
                return
            }
            publication = Publication(name: name, requestedName: name, type: type, port: port, txt: txt)
            try registerLocked()
        }
    }

    /// Replaces the TXT record of the published service.
    public func updateTXT(_ txt: [String]) throws(AvahiError) {
        try locked { () throws(AvahiError) in
            guard var publication, let group else { return }
            publication.txt = txt
            self.publication = publication
            let list = Self.stringList(txt)
            defer { avahi_string_list_free(list) }
            let result = avahi_entry_group_update_service_txt_strlst(
                group, interfaceIndex, serviceProtocol, AvahiPublishFlags(0), publication.name,
                publication.type, nil, list)
            if result < 0 { throw AvahiError.call("the TXT update", result) }
        }
    }

    /// (Re)registers the publication; call with the poll lock held (or on the poll thread).
    fileprivate func registerLocked() throws(AvahiError) {
        guard let publication, let client else { return }
        if group == nil {
            group = avahi_entry_group_new(client, avahiEntryGroupCallback, Unmanaged.passUnretained(self).toOpaque())
            guard group != nil else { throw AvahiError.call("a new entry group", avahi_client_errno(client)) }
        }
        let list = Self.stringList(publication.txt)
        defer { avahi_string_list_free(list) }
        var result = avahi_entry_group_add_service_strlst(
            group, interfaceIndex, serviceProtocol, AvahiPublishFlags(0), publication.name,
            publication.type, nil, nil, publication.port, list)
        if result == AVAHI_ERR_COLLISION {
            // A local collision (the same name on this host) is reported here rather than via the group.
            renameLocked()
            return
        }
        if result >= 0 { result = avahi_entry_group_commit(group) }
        if result < 0 { throw AvahiError.call("publishing '\(publication.name)'", result) }
    }

    fileprivate func renameLocked() {
        guard let old = publication?.name, let alternative = avahi_alternative_service_name(old) else { return }
        let new = String(cString: alternative)
        avahi_free(alternative)
        publication?.name = new
        handler(.renamed(from: old, to: new))
        if let group { avahi_entry_group_reset(group) }
        do { try registerLocked() } catch { handler(.failed(error.description)) }
    }

    fileprivate func groupStateChanged(_ state: AvahiEntryGroupState) {
        switch state {
        case AVAHI_ENTRY_GROUP_ESTABLISHED: handler(.published(name: publication?.name ?? ""))
        case AVAHI_ENTRY_GROUP_COLLISION: renameLocked()
        case AVAHI_ENTRY_GROUP_FAILURE where avahi_client_errno(client) == AVAHI_ERR_DISCONNECTED:
            break  // the daemon went away: the client's callback waits for it
        case AVAHI_ENTRY_GROUP_FAILURE:
            handler(
                .failed(
                    "Avahi could not publish the station: \(String(cString: avahi_strerror(avahi_client_errno(client))))."
                ))
        default: break
        }
    }

    fileprivate func clientStateChanged(_ client: OpaquePointer?, _ state: AvahiClientState) {
        // A new client may report from inside avahi_client_new, before it was stored.
        if let client { self.client = client }
        switch state {
        case AVAHI_CLIENT_S_RUNNING:
            if waitingForDaemon {
                // The daemon is back (on a new client): publish and browse again.
                waitingForDaemon = false
                handler(.daemonBack)
                if let browsedType {
                    browser = avahi_service_browser_new(
                        client, interfaceIndex, serviceProtocol, browsedType, nil,
                        AvahiLookupFlags(0), avahiBrowserCallback, Unmanaged.passUnretained(self).toOpaque())
                    if browser == nil {
                        handler(
                            .failed(
                                "Avahi refused browsing again: \(String(cString: avahi_strerror(avahi_client_errno(client))))."
                            ))
                    }
                }
            }
            // Also reached again after a host-name collision was resolved: publish anew.
            if group == nil || avahi_entry_group_is_empty(group) != 0 {
                do { try registerLocked() } catch { handler(.failed(error.description)) }
            }
        case AVAHI_CLIENT_S_COLLISION, AVAHI_CLIENT_S_REGISTERING:
            if let group { avahi_entry_group_reset(group) }
        case AVAHI_CLIENT_FAILURE where avahi_client_errno(client) == AVAHI_ERR_DISCONNECTED:
            // The daemon went away. Its client and everything made with it are dead: free them and
            // wait, on a new client that does not fail while there is no daemon, for it to return
            // (as avahi-browse does). Called on the poll thread with the lock held.
            handler(.daemonLost)
            waitingForDaemon = true
            sightings = [:]
            resolvedDirectly = []
            browser = nil  // freed with the client
            group = nil
            avahi_client_free(client)
            self.client = nil
            var error: Int32 = 0
            self.client = avahi_client_new(
                avahi_threaded_poll_get(poll), AVAHI_CLIENT_NO_FAIL, avahiClientCallback,
                Unmanaged.passUnretained(self).toOpaque(), &error)
            if self.client == nil {
                handler(
                    .failed("Lost avahi-daemon and could not wait for it (\(String(cString: avahi_strerror(error))))."))
            }
        case AVAHI_CLIENT_FAILURE:
            let code = avahi_client_errno(client)
            handler(
                .failed(
                    "Lost avahi-daemon (\(String(cString: avahi_strerror(code)))); restart it and run the command again."
                ))
        default: break
        }
    }

    // MARK: Browsing

    /// Browses for `type` and resolves every instance to an address, port and TXT record.
    /// Browsing the type already browsed changes nothing (a listener starts browsing before its
    /// player is ready; its machine asks again once it runs).
    public func browse(type: String) throws(AvahiError) {
        try locked { () throws(AvahiError) in
            if browser != nil && browsedType == type { return }
            browsedType = type
            browser = avahi_service_browser_new(
                client, interfaceIndex, serviceProtocol, type, nil, AvahiLookupFlags(0),
                avahiBrowserCallback, Unmanaged.passUnretained(self).toOpaque())
            if browser == nil { throw AvahiError.call("browsing \(type)", avahi_client_errno(client)) }
        }
    }

    /// Resolves the instance `name` of `type` at once, beside the browser. A guest that names its
    /// station need not wait for browsing: a fresh browser's first query waits a moment, and
    /// answers to it (shared PTR records) come after a random 20–120 ms (RFC 6762 §6), while a
    /// service's SRV and TXT records are unique ones, answered at once (or from Avahi's cache).
    /// What it finds is reported as the browser's would be; when no such instance answers, nothing
    /// is reported and browsing carries on. Best effort: a client not connected yet resolves nothing.
    public func resolve(name: String, type: String) {
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        guard let client, !name.isEmpty, sightings[name] == nil else { return }
        for family in families {
            let protocolNumber = Self.avahiProtocol(family)
            let resolver = avahi_service_resolver_new(
                client, interfaceIndex, protocolNumber, name, type, "local", protocolNumber, AvahiLookupFlags(0),
                avahiResolverCallback, Unmanaged.passUnretained(self).toOpaque())
            guard resolver != nil else { continue }
            sightings[name, default: [:]][protocolNumber] = .resolving
            resolvedDirectly.insert(name)
        }
    }

    /// The protocol to publish and browse over: the one family's, or both (`AVAHI_PROTO_UNSPEC`).
    private var serviceProtocol: AvahiProtocol {
        families.count > 1 ? AvahiProtocol(AVAHI_PROTO_UNSPEC) : Self.avahiProtocol(families[0])
    }

    static func avahiProtocol(_ family: SocketAddress.Family) -> AvahiProtocol {
        AvahiProtocol(family == .ipv4 ? AVAHI_PROTO_INET : AVAHI_PROTO_INET6)
    }

    /// The browser saw `name` over `protocol` (on the poll thread): the first sighting is news, and
    /// each protocol of the session's families is resolved to an address of its own family.
    fileprivate func found(
        interface: AvahiIfIndex, protocol: AvahiProtocol, name: String, type: String, domain: String
    ) {
        guard families.contains(where: { Self.avahiProtocol($0) == `protocol` }) else { return }
        if resolvedDirectly.remove(name) != nil, case .resolved = sightings[name]?[`protocol`] {
            return  // resolved directly already; a NEW after a REMOVE finds no sighting and resolves again
        }
        if sightings[name] == nil { handler(.discovered(name: name)) }
        sightings[name, default: [:]][`protocol`] = .resolving
        let resolver = avahi_service_resolver_new(
            client, interface, `protocol`, name, type, domain, `protocol`, AvahiLookupFlags(0),
            avahiResolverCallback, Unmanaged.passUnretained(self).toOpaque())
        if resolver == nil { handler(.failed("Avahi could not resolve '\(name)'.")) }
    }

    /// The browser lost `name` over `protocol`: gone when no protocol still sees it, else reported
    /// again at the best address left.
    fileprivate func lost(protocol: AvahiProtocol, name: String) {
        let wasBest = bestProtocol(name) == `protocol`
        guard var seen = sightings[name], seen.removeValue(forKey: `protocol`) != nil else { return }
        guard !seen.isEmpty else {
            sightings[name] = nil
            return handler(.removed(name: name))
        }
        sightings[name] = seen
        if wasBest, let best = best(name) { handler(best) }
    }

    /// A resolver answered: reported once it is the resolution to report for `name` (the first of
    /// the session's families that resolved it, none before it still resolving).
    fileprivate func resolved(protocol: AvahiProtocol, name: String, sighting: Sighting) {
        guard sightings[name]?[`protocol`] != nil else { return }  // lost meanwhile
        if sighting == .unresolved, resolvedDirectly.contains(name) {
            // Asked for at once and not there (or not by that exact name): forget it quietly.
            sightings[name]?[`protocol`] = nil
            if sightings[name]?.isEmpty == true {
                sightings[name] = nil
                resolvedDirectly.remove(name)
            }
            return
        }
        let order = families.map(Self.avahiProtocol)
        sightings[name]?[`protocol`] = sighting
        let chosen = bestProtocol(name)
        switch sighting {
        case .resolved:
            if chosen == `protocol`, let best = best(name) { handler(best) }
        case .unresolved, .resolving:
            // A resolution held back for this protocol is reported now; nothing resolved at all is news.
            if let chosen, let held = order.firstIndex(of: chosen), let failed = order.firstIndex(of: `protocol`),
                failed < held, let best = best(name)
            {
                handler(best)
            } else if chosen == nil, !(sightings[name]?.values.contains(.resolving) ?? false) {
                handler(.unresolved(name: name))
            }
        }
    }

    /// Which protocol's resolution of a service to report, given each protocol's sighting and the
    /// session's families in order (the preferred first): the first that resolved, unless one
    /// before it is still resolving. Then nil: its answer is waited for, so that a dual-stack node
    /// reports a station at its IPv4 address whichever resolver answers first (an IPv6 one, often
    /// link-local, used to win now and then: docs/NETWORKS.md).
    /// - Parameter waiting: false reports the first resolved at once (a name resolved directly,
    ///   where the other family's resolver may only time out: an IPv6-only DJ).
    static func reportable(_ seen: [AvahiProtocol: Sighting], order: [AvahiProtocol], waiting: Bool = true)
        -> AvahiProtocol?
    {
        for protocolNumber in order {
            switch seen[protocolNumber] {
            case .resolving: if waiting { return nil }
            case .resolved: return protocolNumber
            case .unresolved, nil: continue
            }
        }
        return nil
    }

    private func bestProtocol(_ name: String) -> AvahiProtocol? {
        Self.reportable(
            sightings[name] ?? [:], order: families.map(Self.avahiProtocol), waiting: !resolvedDirectly.contains(name))
    }

    private func best(_ name: String) -> AvahiEvent? {
        guard let chosen = bestProtocol(name), case .resolved(let address, let port, let txt) = sightings[name]?[chosen]
        else { return nil }
        return .resolved(name: name, address: address, port: port, txt: txt)
    }

    /// Builds an AvahiStringList in the given order (avahi_string_list_add prepends).
    static func stringList(_ strings: [String]) -> UnsafeMutablePointer<AvahiStringList>? {
        var list: UnsafeMutablePointer<AvahiStringList>? = nil
        for string in strings.reversed() { list = avahi_string_list_add(list, string) }
        return list
    }

    static func strings(of list: UnsafeMutablePointer<AvahiStringList>?) -> [String] {
        var result: [String] = []
        var node = list
        while let current = node {
            if let text = avahi_string_list_get_text(current) {
                let size = Int(avahi_string_list_get_size(current))
                let bytes = UnsafeBufferPointer(start: text, count: size)
                result.append(String(decoding: bytes, as: UTF8.self))
            }
            node = avahi_string_list_get_next(current)
        }
        return result
    }
}

// MARK: C callbacks: free functions that capture nothing; they run on Avahi's poll thread.

private func session(_ userdata: UnsafeMutableRawPointer?) -> AvahiSession? {
    userdata.map { Unmanaged<AvahiSession>.fromOpaque($0).takeUnretainedValue() }
}

private func avahiClientCallback(client: OpaquePointer?, state: AvahiClientState, userdata: UnsafeMutableRawPointer?) {
    // Called first from inside avahi_client_new, before the session stored its client pointer.
    guard state != AVAHI_CLIENT_CONNECTING else { return }
    session(userdata)?.clientStateChanged(client, state)
}

private func avahiEntryGroupCallback(
    group: OpaquePointer?, state: AvahiEntryGroupState, userdata: UnsafeMutableRawPointer?
) {
    session(userdata)?.groupStateChanged(state)
}

private func avahiBrowserCallback(
    browser: OpaquePointer?, interface: AvahiIfIndex, protocol: AvahiProtocol, event: AvahiBrowserEvent,
    name: UnsafePointer<CChar>?, type: UnsafePointer<CChar>?, domain: UnsafePointer<CChar>?,
    flags: AvahiLookupResultFlags, userdata: UnsafeMutableRawPointer?
) {
    guard let session = session(userdata) else { return }
    if event == AVAHI_BROWSER_ALL_FOR_NOW {
        session.handler(.allForNow)
        return
    }
    guard let name, let type, let domain else { return }
    switch event {
    case AVAHI_BROWSER_NEW:
        session.found(
            interface: interface, protocol: `protocol`, name: String(cString: name), type: String(cString: type),
            domain: String(cString: domain))
    case AVAHI_BROWSER_REMOVE:
        session.lost(protocol: `protocol`, name: String(cString: name))
    case AVAHI_BROWSER_FAILURE
    where avahi_client_errno(avahi_service_browser_get_client(browser)) == AVAHI_ERR_DISCONNECTED:
        break  // the daemon went away: the session waits for it and browses again
    case AVAHI_BROWSER_FAILURE:
        session.handler(.failed("Avahi stopped browsing; restart avahi-daemon and run the command again."))
    default:
        break
    }
}

private func avahiResolverCallback(
    resolver: OpaquePointer?, interface: AvahiIfIndex, protocol: AvahiProtocol, event: AvahiResolverEvent,
    name: UnsafePointer<CChar>?, type: UnsafePointer<CChar>?, domain: UnsafePointer<CChar>?,
    hostName: UnsafePointer<CChar>?, address: UnsafePointer<AvahiAddress>?, port: UInt16,
    txt: UnsafeMutablePointer<AvahiStringList>?,
    flags: AvahiLookupResultFlags, userdata: UnsafeMutableRawPointer?
) {
    defer { avahi_service_resolver_free(resolver) }
    guard let session = session(userdata), let name else { return }
    guard event == AVAHI_RESOLVER_FOUND, let address else {
        session.resolved(protocol: `protocol`, name: String(cString: name), sighting: .unresolved)
        return
    }
    var text = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX))
    avahi_address_snprint(&text, text.count, address)
    var host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    // Avahi writes a link-local address without its zone; it is the interface it was seen on.
    if let parsed = SocketAddress(host, port: port), parsed.isLinkLocal, interface > 0, let bytes = parsed.ipv6Bytes {
        host = SocketAddress(ipv6: bytes, scope: UInt32(interface), port: port).host
    }
    session.resolved(
        protocol: `protocol`, name: String(cString: name),
        sighting: .resolved(address: host, port: port, txt: AvahiSession.strings(of: txt)))
}
