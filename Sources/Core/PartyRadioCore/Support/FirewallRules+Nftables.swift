/// `nft list ruleset`, read into the same rules as `iptables -S`: one ``FirewallRules`` per base
/// chain on the input hook of an `ip` or `inet` table (each must let a packet in), its chain
/// named `INPUT` and the table's other chains beside it.
extension FirewallRules {
    /// The input base chains of `text`, leaving out the tables iptables shows (`skippingTables`,
    /// e.g. `ip filter` when `iptables -S` was read: the nftables backend keeps its rules there).
    public static func nftables(_ text: String, skippingTables skipped: Set<String> = []) -> [FirewallRules] {
        var result: [FirewallRules] = []
        var table: (name: String, chains: [String: [Rule]], bases: [(chain: String, policy: String)])?
        var chain: String?
        var pending = ""
        func finishTable() {
            guard let current = table else { return }
            for base in current.bases {
                var rules = FirewallRules(iptables: "")
                rules.chains = current.chains
                rules.chains["INPUT"] = current.chains[base.chain] ?? []
                rules.policies["INPUT"] = base.policy
                result.append(rules)
            }
            table = nil
        }
        for raw in text.split(separator: "\n") {
            // A rule whose anonymous set wraps continues on the next lines until its braces close.
            pending += (pending.isEmpty ? "" : " ") + raw.trimmingSpaces
            if pending.filter({ $0 == "{" }).count > pending.filter({ $0 == "}" }).count,
                !pending.hasPrefix("table "), !pending.hasPrefix("chain "), !pending.hasPrefix("set "),
                !pending.hasPrefix("map "), !pending.hasPrefix("flowtable ")
            {
                continue
            }
            let line = pending
            pending = ""
            let words = tokens(line)
            guard let first = words.first else { continue }
            if first == "table", words.count >= 3 {
                finishTable()
                let family = words[1]
                let name = "\(family) \(words[2])"
                if ["ip", "inet"].contains(family) && !skipped.contains(name) { table = (name, [:], []) }
                chain = nil
                continue
            }
            guard table != nil else { continue }
            if first == "chain", words.count >= 2 {
                chain = words[1]
                if table?.chains[words[1]] == nil { table?.chains[words[1]] = [] }
                continue
            }
            if first == "set" || first == "map" || first == "flowtable" {
                chain = nil  // its elements are no rules
                continue
            }
            if first == "}" {
                chain = nil
                continue
            }
            guard let chain else { continue }
            if first == "type" {
                // type filter hook input priority filter; policy drop;
                if let hook = words.firstIndex(of: "hook"), hook + 1 < words.count, words[hook + 1] == "input",
                    words.contains("filter")
                {
                    let policy = words.firstIndex(of: "policy").flatMap { index in
                        index + 1 < words.count ? words[index + 1].trimmingSemicolons : nil
                    }
                    table?.bases.append((chain, policy == "drop" ? "DROP" : "ACCEPT"))
                }
                continue
            }
            if first == "policy" { continue }
            if let rule = nftRule(words, text: line) { table?.chains[chain, default: []].append(rule) }
        }
        finishTable()
        return result
    }

    /// What several rule sets do together: a packet must pass them all.
    public static func verdict(for packet: Packet, in sets: [FirewallRules]) -> Verdict {
        let verdicts = sets.map { $0.verdict(for: packet) }
        if let dropped = verdicts.first(where: { if case .dropped = $0 { true } else { false } }) { return dropped }
        return verdicts.first { $0 != .accepted } ?? .accepted
    }

    private static let verdictWords: Set<String> = ["accept", "drop", "reject", "return", "jump", "goto"]

    /// One nftables rule; nil when it cannot match an IPv4 UDP or TCP packet (ip6, icmp, arp).
    static func nftRule(_ words: [String], text: String) -> Rule? {
        guard let verdictIndex = words.lastIndex(where: { verdictWords.contains($0) }) else {
            return nil  // counter, log, meta mark set …: no verdict, no effect on the packet's fate
        }
        var rule = Rule(text: text, conditions: [], target: "")
        switch words[verdictIndex] {
        case "accept": rule.target = "ACCEPT"
        case "drop": rule.target = "DROP"
        case "reject": rule.target = "REJECT"
        case "return": rule.target = "RETURN"
        default:
            guard verdictIndex + 1 < words.count else { return nil }
            rule.target = words[verdictIndex + 1]
            rule.goto = words[verdictIndex] == "goto"
        }
        var index = 0
        let end = verdictIndex
        /// The operator and value after a selector: `!= x`, `== x`, `x`, or a `{ … }` set.
        func value() -> (negated: Bool, items: [String])? {
            var negated = false
            if index < end, ["!=", "=="].contains(words[index]) {
                negated = words[index] == "!="
                index += 1
            }
            guard index < end else { return nil }
            if words[index] == "{" {
                var items: [String] = []
                index += 1
                while index < end, words[index] != "}" {
                    items += words[index].split(separator: ",").map(String.init)
                    index += 1
                }
                index += 1
                return (negated, items)
            }
            let word = words[index]
            index += 1
            return (negated, word.split(separator: ",").map(String.init))
        }
        func ports(_ items: [String]) -> [ClosedRange<UInt16>]? {
            var ranges: [ClosedRange<UInt16>] = []
            for item in items {
                let bounds = item.split(separator: "-").map { serviceNames[String($0)] ?? UInt16($0) }
                guard let low = bounds.first ?? nil, let high = bounds.last ?? nil, low <= high else { return nil }
                ranges.append(low...high)
            }
            return ranges
        }
        while index < end {
            let word = words[index]
            index += 1
            switch word {
            case "iifname", "iif":
                guard let (negated, items) = value() else { break }
                let names = items.map { $0.hasSuffix("*") ? String($0.dropLast()) + "+" : $0 }
                rule.conditions.append(
                    names.count == 1 ? .interface(names[0], negated: negated) : .unknown("\(word) set"))
            case "meta"
            where index < end && ["l4proto", "nfproto", "pkttype", "iifname", "iif"].contains(words[index]):
                let key = words[index]
                index += 1
                guard let (negated, items) = value() else { break }
                switch key {
                case "l4proto":
                    guard let condition = protocols(items, negated: negated) else { return nil }
                    rule.conditions.append(condition)
                case "nfproto":
                    if items.contains("ipv4") == negated { return nil }
                case "pkttype":
                    rule.conditions.append(
                        items.count == 1 ? .packetType(items[0], negated: negated) : .unknown("pkttype set"))
                default:
                    rule.conditions.append(
                        items.count == 1 ? .interface(items[0], negated: negated) : .unknown("iifname set"))
                }
            case "pkttype":
                guard let (negated, items) = value() else { break }
                rule.conditions.append(
                    items.count == 1 ? .packetType(items[0], negated: negated) : .unknown("pkttype set"))
            case "ip" where index < end:
                let key = words[index]
                index += 1
                guard let (negated, items) = value() else { break }
                switch key {
                case "protocol":
                    guard let condition = protocols(items, negated: negated) else { return nil }
                    rule.conditions.append(condition)
                case "saddr", "daddr":
                    guard items.count == 1, let (network, prefix) = cidr(items[0]) else {
                        rule.conditions.append(.unknown("ip \(key) set"))
                        break
                    }
                    rule.conditions.append(
                        key == "saddr"
                            ? .source(network, prefix: prefix, negated: negated)
                            : .destination(network, prefix: prefix, negated: negated))
                default:
                    rule.conditions.append(.unknown("ip \(key)"))
                }
            case "ip6", "icmp", "icmpv6", "arp", "sctp", "dccp":
                return nil
            case "udp", "tcp", "th":
                if word != "th" { rule.conditions.append(.proto(word, negated: false)) }
                guard index < end else { break }
                let key = words[index]
                index += 1
                guard let (negated, items) = value() else { break }
                if key == "dport", let ranges = ports(items) {
                    rule.conditions.append(.ports(ranges, negated: negated))
                } else {
                    rule.conditions.append(.unknown("\(word) \(key)"))
                }
            case "ct" where index < end && words[index] == "state":
                index += 1
                guard let (negated, items) = value() else { break }
                rule.conditions.append(.state(Set(items.map { $0.uppercased() }), negated: negated))
            case "fib" where index + 2 < end && words[index] == "daddr" && words[index + 1] == "type":
                index += 2
                guard let (negated, items) = value() else { break }
                rule.conditions.append(.destinationType(Set(items.map { $0.uppercased() }), negated: negated))
            case "counter":
                // counter packets N bytes M
                while index + 1 < end, ["packets", "bytes"].contains(words[index]) { index += 2 }
            case "comment":
                index += 1
            case "log":
                while index + 1 < end, ["prefix", "level", "flags", "group"].contains(words[index]) { index += 2 }
            default:
                rule.conditions.append(.unknown(word))
            }
        }
        return rule
    }

    private static func protocols(_ items: [String], negated: Bool) -> Condition? {
        let ours = items.filter { ["udp", "tcp", "17", "6"].contains($0) }
        if !negated && ours.isEmpty { return nil }  // icmp, esp …: never our packets
        if items.count == 1 { return .proto(items[0], negated: negated) }
        return negated ? .unknown("l4proto set") : .oneOf(ours.map { .proto($0, negated: false) })
    }

    /// The service names nft prints for the ports that matter here (without `-n`).
    static let serviceNames: [String: UInt16] = [
        "mdns": 5353, "ssh": 22, "http": 80, "https": 443, "domain": 53, "bootpc": 68, "bootps": 67,
    ]
}

extension StringProtocol {
    fileprivate var trimmingSpaces: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }

    fileprivate var trimmingSemicolons: String { String(filter { $0 != ";" }) }
}
