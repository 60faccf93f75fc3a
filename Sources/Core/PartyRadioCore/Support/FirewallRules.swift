/// The IPv4 filter table as `iptables -S` prints it, and what its INPUT chain would do with a
/// packet from the LAN: `partyradio doctor` asks it about the kinds of traffic a station needs.
/// Pure: the rules come in as text. Matches it does not understand count as "may match", so a
/// verdict is `accepted`, `dropped` (sure) or `mayDrop` (some rule we cannot judge could drop it).
public struct FirewallRules: Equatable, Sendable {
    /// A new packet arriving from the LAN.
    public struct Packet: Equatable, Sendable {
        public enum Proto: String, Sendable { case udp, tcp }
        public var proto: Proto
        public var port: UInt16
        /// The interface it comes in on.
        public var interface: String
        /// Host byte order.
        public var source: UInt32
        public var destination: UInt32

        public init(proto: Proto, port: UInt16, interface: String, source: UInt32, destination: UInt32) {
            self.proto = proto
            self.port = port
            self.interface = interface
            self.source = source
            self.destination = destination
        }

        public var isMulticast: Bool { destination >> 28 == 0xE }
    }

    public enum Verdict: Equatable, Sendable {
        case accepted
        /// Dropped or rejected, by this rule (or the chain's policy, as `-P INPUT DROP`).
        case dropped(rule: String)
        /// A rule with a match we cannot judge (a rate limit, a random share) would drop it.
        case mayDrop(rule: String)
    }

    struct Rule: Equatable, Sendable {
        var text: String
        var conditions: [Condition]
        var target: String
        var goto = false
    }

    enum Condition: Equatable, Sendable {
        case interface(String, negated: Bool)
        case proto(String, negated: Bool)
        case ports([ClosedRange<UInt16>], negated: Bool)
        case source(UInt32, prefix: Int, negated: Bool)
        case destination(UInt32, prefix: Int, negated: Bool)
        case state(Set<String>, negated: Bool)
        case packetType(String, negated: Bool)
        case destinationType(Set<String>, negated: Bool)
        case probability(Double)
        /// Any of these (an nftables set: `meta l4proto { tcp, udp }`).
        indirect case oneOf([Condition])
        case unknown(String)
    }

    /// The built-in chains' policies (`INPUT` → `DROP`).
    var policies: [String: String] = [:]
    var chains: [String: [Rule]] = [:]

    /// Parses `iptables -S` (the filter table). Lines it does not know are skipped.
    public init(iptables text: String) {
        for line in text.split(separator: "\n") {
            let tokens = Self.tokens(String(line))
            guard tokens.count >= 2 else { continue }
            switch tokens[0] {
            case "-P" where tokens.count >= 3: policies[tokens[1]] = tokens[2]
            case "-N": chains[tokens[1], default: []] = chains[tokens[1]] ?? []
            case "-A":
                if let rule = Self.rule(tokens.dropFirst(2), text: String(line)) {
                    chains[tokens[1], default: []].append(rule)
                }
            default: continue
            }
        }
    }

    /// Whether INPUT lets `packet` in (conntrack state NEW).
    public func verdict(for packet: Packet) -> Verdict {
        switch walk("INPUT", packet, depth: 0) {
        case .decided(let verdict): return verdict
        case .fellThrough:
            let policy = policies["INPUT"] ?? "ACCEPT"
            return policy == "ACCEPT" ? .accepted : .dropped(rule: "-P INPUT \(policy)")
        }
    }

    private enum Walk {
        case decided(Verdict)
        case fellThrough
    }
    private enum Match { case yes, no, maybe }

    private func walk(_ chain: String, _ packet: Packet, depth: Int) -> Walk {
        guard depth < 16, let rules = chains[chain] else { return .fellThrough }
        var maybeDrop: String?
        for rule in rules {
            let match = Self.match(rule.conditions, packet)
            if match == .no { continue }
            switch rule.target {
            case "ACCEPT":
                if match == .yes { return .decided(maybeDrop.map { .mayDrop(rule: $0) } ?? .accepted) }
            case "DROP", "REJECT":
                if match == .yes { return .decided(.dropped(rule: rule.text)) }
                maybeDrop = maybeDrop ?? rule.text
            case "RETURN":
                if match == .yes { return .fellThrough }
            default:
                guard chains[rule.target] != nil else { continue }  // LOG, MARK, …: carry on
                switch walk(rule.target, packet, depth: depth + 1) {
                case .decided(.accepted) where match == .yes:
                    return .decided(maybeDrop.map { .mayDrop(rule: $0) } ?? .accepted)
                case .decided(.dropped(let text)) where match == .yes: return .decided(.dropped(rule: text))
                case .decided(.dropped(let text)), .decided(.mayDrop(let text)): maybeDrop = maybeDrop ?? text
                case .decided(.accepted), .fellThrough:
                    if rule.goto && match == .yes { return .fellThrough }
                }
            }
        }
        if let maybeDrop, depth == 0 {
            let policy = policies["INPUT"] ?? "ACCEPT"
            return .decided(policy == "ACCEPT" ? .mayDrop(rule: maybeDrop) : .dropped(rule: "-P INPUT \(policy)"))
        }
        if let maybeDrop { return .decided(.mayDrop(rule: maybeDrop)) }
        return .fellThrough
    }

    private static func match(_ conditions: [Condition], _ packet: Packet) -> Match {
        var result = Match.yes
        for condition in conditions {
            switch judge(condition, packet) {
            case .no: return .no
            case .maybe: result = .maybe
            case .yes: break
            }
        }
        return result
    }

    private static func judge(_ condition: Condition, _ packet: Packet) -> Match {
        func when(_ value: Bool, negated: Bool = false) -> Match { value != negated ? .yes : .no }
        switch condition {
        case .interface(let pattern, let negated):
            let hit =
                pattern.hasSuffix("+")
                ? packet.interface.hasPrefix(pattern.dropLast()) : packet.interface == pattern
            return when(hit, negated: negated)
        case .proto(let name, let negated):
            let numbers: [Packet.Proto: String] = [.udp: "17", .tcp: "6"]
            let hit = name == "all" || name == "0" || name == packet.proto.rawValue || name == numbers[packet.proto]
            return when(hit, negated: negated)
        case .ports(let ranges, let negated):
            return when(ranges.contains { $0.contains(packet.port) }, negated: negated)
        case .source(let network, let prefix, let negated):
            return when(inNetwork(packet.source, network, prefix), negated: negated)
        case .destination(let network, let prefix, let negated):
            return when(inNetwork(packet.destination, network, prefix), negated: negated)
        case .state(let states, let negated):
            return when(states.contains("NEW"), negated: negated)
        case .packetType(let type, let negated):
            return when(type == (packet.isMulticast ? "multicast" : "unicast"), negated: negated)
        case .destinationType(let types, let negated):
            return when(types.contains(packet.isMulticast ? "MULTICAST" : "LOCAL"), negated: negated)
        case .probability(let share):
            return share >= 1 ? .yes : share <= 0 ? .no : .maybe
        case .oneOf(let conditions):
            let each = conditions.map { judge($0, packet) }
            return each.contains(.yes) ? .yes : each.contains(.maybe) ? .maybe : .no
        case .unknown:
            return .maybe
        }
    }

    private static func inNetwork(_ address: UInt32, _ network: UInt32, _ prefix: Int) -> Bool {
        let mask: UInt32 = prefix == 0 ? 0 : ~UInt32(0) << UInt32(32 - prefix)
        return address & mask == network & mask
    }

    /// One `-A` rule's options; nil when it can never match a UDP or TCP packet (`-p icmp`).
    private static func rule(_ options: ArraySlice<String>, text: String) -> Rule? {
        var rule = Rule(text: text, conditions: [], target: "")
        var negated = false
        var index = options.startIndex
        func next() -> String? {
            index += 1
            return index < options.endIndex ? options[index] : nil
        }
        while index < options.endIndex {
            let option = options[index]
            if option == "!" {
                negated = true
                index += 1
                continue
            }
            var condition: Condition?
            switch option {
            case "-i", "--in-interface": condition = next().map { .interface($0, negated: negated) }
            case "-o", "--out-interface", "-m", "--match", "--mode", "--comment": _ = next()
            case "-p", "--protocol": condition = next().map { .proto($0.lowercased(), negated: negated) }
            case "-s", "--source":
                condition = next().flatMap(cidr).map { .source($0.0, prefix: $0.1, negated: negated) }
            case "-d", "--destination":
                condition = next().flatMap(cidr).map { .destination($0.0, prefix: $0.1, negated: negated) }
            case "--dport", "--destination-port", "--dports", "--destination-ports":
                condition = next().flatMap(ports).map { .ports($0, negated: negated) }
            case "--state", "--ctstate":
                condition = next().map { .state(Set($0.split(separator: ",").map(String.init)), negated: negated) }
            case "--pkt-type": condition = next().map { .packetType($0.lowercased(), negated: negated) }
            case "--dst-type":
                condition = next().map {
                    .destinationType(Set($0.split(separator: ",").map(String.init)), negated: negated)
                }
            case "--probability": condition = next().flatMap(Double.init).map { .probability($0) }
            case "-j", "--jump", "-g", "--goto":
                rule.goto = option == "-g" || option == "--goto"
                rule.target = next() ?? ""
                index = options.endIndex  // what follows belongs to the target (--reject-with …)
                continue
            default:
                // An option we do not judge: it and its value (if any) may or may not match.
                condition = .unknown(option)
                if index + 1 < options.endIndex, !options[index + 1].hasPrefix("-"), options[index + 1] != "!" {
                    _ = next()
                }
            }
            if let condition {
                if case .proto(let name, false) = condition, !["all", "0", "udp", "tcp", "17", "6"].contains(name) {
                    return nil
                }
                rule.conditions.append(condition)
            }
            negated = false
            index += 1
        }
        return rule
    }

    /// `a.b.c.d` or `a.b.c.d/n`, host byte order.
    static func cidr(_ text: String) -> (UInt32, Int)? {
        let parts = text.split(separator: "/")
        guard let address = ipv4(String(parts[0])) else { return nil }
        guard parts.count == 2 else { return (address, 32) }
        if let prefix = Int(parts[1]), (0...32).contains(prefix) { return (address, prefix) }
        // A dotted mask (iptables -S prints prefixes, but an old one may not).
        guard let mask = ipv4(String(parts[1])) else { return nil }
        return (address, mask.nonzeroBitCount)
    }

    /// `a.b.c.d` in host byte order.
    public static func ipv4(_ text: String) -> UInt32? {
        let octets = text.split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) }
        guard octets.count == 4, text.split(separator: ".", omittingEmptySubsequences: false).count == 4 else {
            return nil
        }
        return octets.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// `53`, `1024:65535`, `80,443,8000:8100` (multiport).
    static func ports(_ text: String) -> [ClosedRange<UInt16>]? {
        var ranges: [ClosedRange<UInt16>] = []
        for item in text.split(separator: ",") {
            let bounds = item.split(separator: ":", omittingEmptySubsequences: false)
            let low = bounds[0].isEmpty ? 0 : UInt16(bounds[0])
            let high = bounds.count > 1 ? (bounds[1].isEmpty ? UInt16.max : UInt16(bounds[1])) : low
            guard let low, let high, low <= high else { return nil }
            ranges.append(low...high)
        }
        return ranges.isEmpty ? nil : ranges
    }

    /// A line split at spaces, double quotes kept together (`--comment "a b"`).
    static func tokens(_ line: String) -> [String] {
        var tokens: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        var started = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" && quoted {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
                started = true
            } else if character == " " && !quoted {
                if started { tokens.append(current) }
                current = ""
                started = false
            } else {
                current.append(character)
                started = true
            }
        }
        if started { tokens.append(current) }
        return tokens
    }
}
