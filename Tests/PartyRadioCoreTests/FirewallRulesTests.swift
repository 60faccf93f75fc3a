import Testing

@testable import PartyRadioCore

/// `partyradio doctor`'s reading of `iptables -S`: what INPUT does with a new packet from the LAN.
@Suite struct FirewallRulesTests {
    let own = FirewallRules.ipv4("10.0.0.2")!
    let peer = FirewallRules.ipv4("10.0.0.1")!

    func udp(_ port: UInt16, to destination: String? = nil, on interface: String = "eth0") -> FirewallRules.Packet {
        FirewallRules.Packet(
            proto: .udp, port: port, interface: interface, source: peer,
            destination: destination.flatMap(FirewallRules.ipv4) ?? own)
    }

    func tcp(_ port: UInt16) -> FirewallRules.Packet {
        FirewallRules.Packet(proto: .tcp, port: port, interface: "eth0", source: peer, destination: own)
    }

    @Test func noRulesLetEverythingIn() {
        let rules = FirewallRules(iptables: "-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT ACCEPT\n")
        #expect(rules.verdict(for: udp(5353, to: "224.0.0.251")) == .accepted)
        #expect(FirewallRules(iptables: "").verdict(for: tcp(8080)) == .accepted)
    }

    @Test func dropAllUDPButLoopback() {
        let line = "-A INPUT ! -i lo -p udp -j DROP"
        let rules = FirewallRules(iptables: "-P INPUT ACCEPT\n\(line)\n")
        #expect(rules.verdict(for: udp(45_000, to: "239.255.1.2")) == .dropped(rule: line))
        #expect(rules.verdict(for: udp(5353, on: "lo")) == .accepted)
        #expect(rules.verdict(for: tcp(8080)) == .accepted)
    }

    @Test func aDropPolicyWithTheUsualAccepts() {
        let text = """
            -P INPUT DROP
            -P FORWARD DROP
            -P OUTPUT ACCEPT
            -A INPUT -i lo -j ACCEPT
            -A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
            -A INPUT -p tcp -m tcp --dport 22 -j ACCEPT
            -A INPUT -p udp -m udp --dport 5353 -j ACCEPT
            -A INPUT -s 10.0.0.0/24 -p udp -m multiport --dports 40000:49999,50000 -j ACCEPT
            -A INPUT -p icmp -j ACCEPT
            """
        let rules = FirewallRules(iptables: text)
        #expect(rules.verdict(for: udp(5353, to: "224.0.0.251")) == .accepted)
        #expect(rules.verdict(for: udp(41_000, to: "239.255.3.4")) == .accepted)
        #expect(rules.verdict(for: udp(50_000)) == .accepted)
        #expect(rules.verdict(for: udp(50_001)) == .dropped(rule: "-P INPUT DROP"))
        #expect(rules.verdict(for: tcp(8080)) == .dropped(rule: "-P INPUT DROP"))
        #expect(rules.verdict(for: tcp(22)) == .accepted)
    }

    @Test func userChainsJumpsReturnsAndTheTestbedsLoss() {
        let text = """
            -P INPUT ACCEPT
            -N PR_LOSS_IN
            -N LAN
            -A INPUT -j PR_LOSS_IN
            -A INPUT -i eth0 -j LAN
            -A LAN -p tcp -j RETURN
            -A LAN -j REJECT --reject-with icmp-port-unreachable
            """
        let rules = FirewallRules(iptables: text + "\n-A PR_LOSS_IN -i eth0 -j DROP")
        #expect(rules.verdict(for: udp(5353)) == .dropped(rule: "-A PR_LOSS_IN -i eth0 -j DROP"))
        let lossless = FirewallRules(iptables: text)
        #expect(lossless.verdict(for: tcp(80)) == .accepted)
        #expect(
            lossless.verdict(for: udp(40_000))
                == .dropped(rule: "-A LAN -j REJECT --reject-with icmp-port-unreachable"))
        #expect(lossless.verdict(for: udp(40_000, on: "wlan0")) == .accepted)
    }

    @Test func whatCannotBeJudgedMayDrop() {
        let partial = "-A INPUT -i eth+ -m statistic --mode random --probability 0.30000000000 -j DROP"
        let rules = FirewallRules(iptables: "-P INPUT ACCEPT\n\(partial)\n")
        #expect(rules.verdict(for: udp(5353)) == .mayDrop(rule: partial))
        let all = FirewallRules(
            iptables: "-A INPUT -i eth0 -m statistic --mode random --probability 1.00000000000 -j DROP")
        #expect(all.verdict(for: udp(5353)) == .dropped(rule: all.firstRule))
        // A limited accept does not count as accepting: the policy decides.
        let limited = FirewallRules(iptables: "-P INPUT DROP\n-A INPUT -p udp -m limit --limit 5/sec -j ACCEPT")
        #expect(limited.verdict(for: udp(5353)) == .dropped(rule: "-P INPUT DROP"))
        // A quoted comment with spaces is one value.
        let commented = FirewallRules(
            iptables: #"-A INPUT -p udp -m comment --comment "no mdns here" -m udp --dport 5353 -j DROP"#)
        #expect(commented.verdict(for: udp(5353)) != .accepted && commented.verdict(for: udp(5354)) == .accepted)
    }

    /// ufw's default (deny incoming): it lets mDNS in by itself, and nothing else of ours.
    @Test func ufwDefaults() {
        let text = """
            -P INPUT DROP
            -N ufw-before-input
            -N ufw-user-input
            -N ufw-after-input
            -N ufw-reject-input
            -N ufw-not-local
            -A INPUT -j ufw-before-input
            -A INPUT -j ufw-after-input
            -A INPUT -j ufw-reject-input
            -A ufw-before-input -i lo -j ACCEPT
            -A ufw-before-input -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
            -A ufw-before-input -m conntrack --ctstate INVALID -j DROP
            -A ufw-before-input -p udp -m udp --sport 67 --dport 68 -j ACCEPT
            -A ufw-before-input -j ufw-not-local
            -A ufw-before-input -d 224.0.0.251/32 -p udp -m udp --dport 5353 -j ACCEPT
            -A ufw-before-input -d 239.255.255.250/32 -p udp -m udp --dport 1900 -j ACCEPT
            -A ufw-before-input -j ufw-user-input
            -A ufw-not-local -m addrtype --dst-type LOCAL -j RETURN
            -A ufw-not-local -m addrtype --dst-type MULTICAST -j RETURN
            -A ufw-not-local -m addrtype --dst-type BROADCAST -j RETURN
            -A ufw-not-local -m limit --limit 3/min --limit-burst 10 -j ufw-logging-deny
            -A ufw-not-local -j DROP
            -A ufw-user-input -p tcp -m tcp --dport 22 -j ACCEPT
            -A ufw-after-input -p udp -m udp --dport 137 -j ufw-skip-to-policy-input
            """
        let rules = FirewallRules(iptables: text)
        #expect(rules.verdict(for: udp(5353, to: "224.0.0.251")) == .accepted)
        #expect(rules.verdict(for: udp(45_000, to: "239.255.42.42")) == .dropped(rule: "-P INPUT DROP"))
        #expect(rules.verdict(for: udp(41_000)) == .dropped(rule: "-P INPUT DROP"))
        #expect(rules.verdict(for: tcp(22)) == .accepted)
        let allowed = FirewallRules(iptables: text + "\n-A ufw-user-input -i eth0 -p udp -j ACCEPT")
        #expect(allowed.verdict(for: udp(45_000, to: "239.255.42.42")) == .accepted)
    }

    /// nftables: Debian's /etc/nftables.conf (accept), and a hand-made drop policy with sets,
    /// wrapped lines, counters and a jump; tables other than ip/inet, and iptables' own, are left out.
    @Test func nftablesInputChains() {
        let debian = """
            table inet filter {
            \tchain input {
            \t\ttype filter hook input priority filter;
            \t}
            \tchain forward {
            \t\ttype filter hook forward priority filter;
            \t}
            }
            """
        let plain = FirewallRules.nftables(debian)
        #expect(plain.count == 1)
        #expect(FirewallRules.verdict(for: udp(45_000, to: "239.255.1.2"), in: plain) == .accepted)

        let strict = """
            table ip filter {
            \tchain INPUT {
            \t\ttype filter hook input priority filter; policy drop;
            \t}
            }
            table ip6 filter6 {
            \tchain input {
            \t\ttype filter hook input priority filter; policy drop;
            \t}
            }
            table inet home {
            \tset trusted {
            \t\ttype ipv4_addr
            \t\telements = { 10.0.0.7, 10.0.0.8 }
            \t}
            \tchain input {
            \t\ttype filter hook input priority filter; policy drop;
            \t\tct state established,related accept
            \t\tiif "lo" accept
            \t\tmeta l4proto icmp accept
            \t\tip daddr 224.0.0.251 udp dport mdns counter packets 3 bytes 180 accept
            \t\ttcp dport { 22, 80,
            \t\t\t     443 } accept
            \t\tiifname "eth*" jump lan
            \t\tudp dport 40000-49999 log prefix "groups " drop
            \t}
            \tchain lan {
            \t\tmeta l4proto { tcp, udp } th dport 50000-60999 accept
            \t\tip saddr 10.0.0.0/24 udp dport 40000-49999 accept
            \t}
            }
            """
        let sets = FirewallRules.nftables(strict, skippingTables: ["ip filter"])
        #expect(sets.count == 1)  // ip6 and iptables' own table are not read
        #expect(FirewallRules.verdict(for: udp(5353, to: "224.0.0.251"), in: sets) == .accepted)
        #expect(FirewallRules.verdict(for: tcp(443), in: sets) == .accepted)
        #expect(FirewallRules.verdict(for: udp(45_000, to: "239.255.1.2"), in: sets) == .accepted)
        #expect(FirewallRules.verdict(for: udp(55_000), in: sets) == .accepted)
        #expect(FirewallRules.verdict(for: tcp(55_000), in: sets) == .accepted)
        #expect(FirewallRules.verdict(for: udp(33_000), in: sets) == .dropped(rule: "-P INPUT DROP"))
        #expect(
            FirewallRules.verdict(for: udp(45_000, to: "239.255.1.2", on: "wlan0"), in: sets)
                == .dropped(rule: #"udp dport 40000-49999 log prefix "groups " drop"#))
        // With iptables' table read too, both must let a packet in.
        let both = FirewallRules.nftables(strict) + [FirewallRules(iptables: "-P INPUT ACCEPT")]
        #expect(FirewallRules.verdict(for: udp(5353, to: "224.0.0.251"), in: both) == .dropped(rule: "-P INPUT DROP"))
    }

    @Test func parsingPieces() {
        #expect(FirewallRules.ports("53") == [53...53])
        #expect(FirewallRules.ports("1024:65535,80") == [1024...65535, 80...80])
        #expect(FirewallRules.ports(":100") == [0...100])
        #expect(FirewallRules.ports("9:1") == nil)
        #expect(FirewallRules.cidr("10.0.0.0/8")! == (0x0A00_0000, 8))
        #expect(FirewallRules.cidr("10.0.0.0/255.255.0.0")! == (0x0A00_0000, 16))
        #expect(FirewallRules.ipv4("1.2.3") == nil && FirewallRules.ipv4("1.2.3.256") == nil)
        #expect(FirewallRules.tokens(#"-A INPUT -m comment --comment "a \"b\" c" -j DROP"#).count == 8)
        #expect(FirewallRules.tokens(#"--comment "a \"b\" c""#) == ["--comment", #"a "b" c"#])
    }
}

extension FirewallRules {
    /// The first rule's text, for the tests.
    fileprivate var firstRule: String { chains["INPUT"]?.first?.text ?? "" }
}
