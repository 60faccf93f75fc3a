import Foundation
import PartyRadioCore
import PartyRadioNet

extension DoctorProbes {
    /// What reading the IPv4 firewall gave.
    public enum FirewallReading: Equatable, Sendable {
        /// Rules were read, from these (`iptables -S`, `nft list ruleset`).
        case rules(String)
        /// There is neither `iptables` nor `nft` on this machine.
        case noTool
        /// They could not be read (not root), in the tools' own words.
        case unreadable(String)
    }

    /// Reads the IPv4 firewall: `iptables -S` (the filter table, which the nftables backend shows
    /// too) and `nft list ruleset` (the input chains of tables iptables does not show), each when
    /// the tool is there. A self-test through our own address would prove nothing: the kernel
    /// delivers it over `lo`, past every rule on the LAN interface, so the rules are read instead,
    /// and a station's answer (the clock check) proves the round trip.
    /// - Returns: what was read, and a rule set per chain a packet must pass.
    public static func firewall() -> (reading: FirewallReading, rules: [FirewallRules]) {
        var rules: [FirewallRules] = []
        var read: [String] = []
        var problems: [String] = []
        switch runTool("iptables", ["-S"]) {
        case .success(let text):
            rules.append(FirewallRules(iptables: text))
            read.append("iptables -S")
        case .failure(let problem):
            if let message = problem.message { problems.append(message) }
        }
        switch runTool("nft", ["list", "ruleset"]) {
        case .success(let text):
            // The nftables backend of iptables keeps its rules in "ip filter": read them once.
            rules += FirewallRules.nftables(text, skippingTables: read.isEmpty ? [] : ["ip filter"])
            read.append("nft list ruleset")
        case .failure(let problem):
            if let message = problem.message { problems.append(message) }
        }
        if !read.isEmpty { return (.rules(read.joined(separator: " and ")), rules) }
        return (problems.isEmpty ? .noTool : .unreadable(problems.joined(separator: "; ")), [])
    }

    /// Why a tool gave no rules: it is not installed (nil), or its complaint.
    private struct ToolProblem: Error {
        var message: String?
    }

    /// Runs `name` from the sbin/bin folders with `arguments`: its output, or why not.
    private static func runTool(_ name: String, _ arguments: [String]) -> Result<String, ToolProblem> {
        let candidates = ["/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/"].map { $0 + name }
        guard let tool = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return .failure(ToolProblem(message: nil))
        }
        let command = ([name] + arguments).joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch {
            return .failure(ToolProblem(message: "\(command): \(error.localizedDescription)"))
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let complaint = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let line = complaint.split(separator: "\n").first.map(String.init) ?? "exit \(process.terminationStatus)"
            return .failure(ToolProblem(message: "\(command): \(line)"))
        }
        return .success(text)
    }

    /// The kinds of packet a station and its listeners must receive on `interface`, from another
    /// host of its /24 (a station's UDP `port` if one is set, else any high port).
    public static func stationPackets(interface: NetworkInterface, port: UInt16?) -> [(
        what: FirewallTraffic, packet: FirewallRules.Packet
    )] {
        let own = UInt32(bigEndian: interface.addressNetworkOrder)
        let peer = own & 0xFFFF_FF00 | (own & 0xFF == 1 ? 2 : 1)
        func packet(_ proto: FirewallRules.Packet.Proto, _ port: UInt16, to destination: UInt32) -> FirewallRules.Packet
        {
            FirewallRules.Packet(
                proto: proto, port: port, interface: interface.name, source: peer, destination: destination)
        }
        let mdns: UInt32 = 0xE000_00FB  // 224.0.0.251
        let group: UInt32 = 0xEFFF_2A2A  // 239.255.42.42, one of the stations' groups
        var packets: [(FirewallTraffic, FirewallRules.Packet)] = [(.mdns, packet(.udp, 5353, to: mdns))]
        packets += [40_000, 45_000, 49_999].map { (.groups, packet(.udp, $0, to: group)) }
        packets += (port.map { [$0] } ?? [1024, 33_000, 50_000, 60_999]).map { (.unicast, packet(.udp, $0, to: own)) }
        packets += [1024, 33_000, 50_000, 60_999].map { (.http, packet(.tcp, $0, to: own)) }
        return packets
    }
}

/// The traffic a station needs let in, as `doctor` names it.
public enum FirewallTraffic: String, CaseIterable, Sendable {
    /// 5353/udp to 224.0.0.251: Avahi finds stations with it.
    case mdns
    /// UDP to 239.255.0.0/16 ports 40000–49999: what a station sends its listeners.
    case groups
    /// UDP to this host's high ports: votes, pings and queries (and their answers).
    case unicast
    /// TCP to this host's high ports: the DJ's music for its listeners and its web page.
    case http
}
