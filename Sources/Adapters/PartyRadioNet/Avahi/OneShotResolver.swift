import Foundation
import Glibc
import PartyRadioCore

/// Resolves one named service instance with one-shot mDNS queries (``MDNSOneShot``), beside
/// Avahi: the question goes to the mDNS group from a port of its own, and the owner's responder
/// answers it by unicast at once (RFC 6762 §6.7), while avahi-daemon would hold a new query back
/// about 100 ms first. Asked twice (a lost question or answer is asked again after 100 ms); no
/// answer within ``timeoutMs`` is no news (the name may be a prefix, an ID, or no station at all),
/// and browsing carries on as before. It does not cache and answers nobody: it is a question.
public enum OneShotResolver {
    public static let timeoutMs: Int32 = 250
    static let retryMs: Int32 = 100

    /// Starts the questions on a thread of their own; `found` is called at most once, on that
    /// thread, with the address (IPv4 first when the interface has it; a link-local IPv6 address
    /// with its zone), the SRV port and the TXT strings.
    public static func start(
        instance: String, type: String, interface: NetworkInterface,
        found: @escaping @Sendable (_ address: String, _ port: UInt16, _ txt: [String]) -> Void
    ) {
        guard let name = MDNSOneShot.serviceInstance(instance, type: type) else { return }
        let families = interface.families
        let thread = Thread {
            if let answer = resolve(name: name, interface: interface, families: families) {
                found(answer.address, answer.port, answer.txt)
            }
        }
        thread.name = "partyradio-mdns-oneshot"
        thread.start()
    }

    /// The questions and their answers, blocking for at most ``timeoutMs``.
    static func resolve(name: [[UInt8]], interface: NetworkInterface, families: [SocketAddress.Family]) -> (
        address: String, port: UInt16, txt: [String]
    )? {
        var sockets: [(UDPSocket, SocketAddress)] = []
        for family in families {
            guard let socket = try? UDPSocket(family: family) else { continue }
            do throws(SystemCallError) {
                try socket.configureMulticastSending(interface: interface)
                let group =
                    family == .ipv4
                    ? SocketAddress(MDNSOneShot.ipv4Group, port: MDNSOneShot.port)
                    : SocketAddress(MDNSOneShot.ipv6Group + "%\(interface.index)", port: MDNSOneShot.port)
                guard let group else { continue }
                sockets.append((socket, group))
            } catch {
                continue
            }
        }
        guard !sockets.isEmpty else { return nil }
        let id = UInt16.random(in: 1...UInt16.max)
        let questions = [MDNSOneShot.RecordType.srv, .txt].map { MDNSOneShot.query(id: id, name: name, type: $0) }
        func ask() {
            for (socket, group) in sockets {
                for question in questions { try? socket.send(question, to: group) }
            }
        }
        ask()
        var records = MDNSOneShot.Records()
        var askedAgain = false
        var askedAddresses = false
        let start = monotonicMs()
        var pollSet = sockets.map { pollfd(fd: $0.0.descriptor, events: Int16(POLLIN), revents: 0) }
        while true {
            let elapsed = monotonicMs() - start
            guard elapsed < Int64(timeoutMs) else { return nil }
            let wait = askedAgain ? Int64(timeoutMs) - elapsed : Int64(retryMs) - elapsed
            let ready = poll(&pollSet, nfds_t(pollSet.count), Int32(max(0, wait)))
            if ready == 0, !askedAgain {
                askedAgain = true
                ask()
                continue
            }
            guard ready > 0 else { continue }
            for (socket, _) in sockets {
                while let datagram = try? socket.receive(capacity: 9000) {
                    guard datagram.length <= 9000 else { continue }
                    // One read: SRV, TXT and the target's addresses (the reply to the address
                    // question carries only those, of the target an earlier reply named).
                    if let reply = MDNSOneShot.parse(datagram.bytes, id: id, name: name, knownTarget: records.target) {
                        records.merge(reply)
                    }
                }
            }
            if let answer = answer(records, interface: interface, families: families) { return answer }
            // SRV and TXT in, but no address along with them: ask for the target's addresses.
            if records.port != nil, records.txt != nil, let target = records.target, !askedAddresses {
                askedAddresses = true
                for (socket, group) in sockets {
                    let type: MDNSOneShot.RecordType = socket.family == .ipv4 ? .a : .aaaa
                    try? socket.send(MDNSOneShot.query(id: id, name: target, type: type), to: group)
                }
            }
        }
    }

    /// The station's address and records once all are known, in the order of `families`; for IPv6
    /// a routable address before a link-local one, which gets the interface as its zone.
    static func answer(_ records: MDNSOneShot.Records, interface: NetworkInterface, families: [SocketAddress.Family])
        -> (address: String, port: UInt16, txt: [String])?
    {
        guard records.isComplete, let port = records.port, let txt = records.txt else { return nil }
        for family in families {
            switch family {
            case .ipv4:
                if let bytes = records.ipv4.first {
                    return (bytes.map(String.init).joined(separator: "."), port, txt)
                }
            case .ipv6:
                let addresses = records.ipv6.map { SocketAddress(ipv6: $0, port: port) }
                let routable = addresses.first { !$0.isLinkLocal }
                if let routable { return (routable.host, port, txt) }
                if let linkLocal = records.ipv6.first {
                    return (SocketAddress(ipv6: linkLocal, scope: UInt32(interface.index), port: port).host, port, txt)
                }
            }
        }
        return nil
    }

    private static func monotonicMs() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
