import Testing

@testable import PartyRadioCLI

/// `--domain`, `--dns-server`, `--dns-key`: a unicast DNS-SD domain (docs/NETWORKS.md).
@Suite struct DomainParsingTests {
    func usage(_ arguments: [String]) -> String? {
        do {
            _ = try Command.parse(arguments)
            return nil
        } catch { return error.message }
    }

    @Test func theDJPublishesWithAKey() throws {
        let arguments = [
            "dj", "--name", "Roof", "--domain", "party.example", "--dns-server", "10.0.0.53", "--dns-key", "k.key",
        ]
        guard case .dj(let options) = try Command.parse(arguments) else {
            Issue.record("not a dj command")
            return
        }
        #expect(
            options.network
                == NetworkOptions(domain: "party.example", dnsServer: "10.0.0.53", dnsKey: "k.key"))
    }

    @Test func guestsBrowseWithoutAKey() throws {
        for command in [["stations"], ["listen", "Roof"], ["vote", "up"], ["queue"]] {
            guard let parsed = try? Command.parse(command + ["--domain", "party.example", "--dns-server", "10.0.0.53"])
            else {
                Issue.record("\(command[0]) refused --domain")
                continue
            }
            #expect(parsed != .help(nil))
            #expect(usage(command + ["--dns-key", "k.key"]) == "Unknown option '--dns-key'.", "\(command[0])")
        }
    }

    @Test func theConfigFileMayHoldTheDomain() throws {
        let text = "domain = party.example\ndns-server = 10.0.0.53\ndns-key = /etc/partyradio/dns.key\n"
        func parse(_ arguments: [String]) throws(UsageError) -> Command {
            try Command.parse(
                arguments, environment: [:],
                config: { Result { () throws(ConfigFile.Error) in try ConfigFile(parsing: text) } },
                configPath: "/etc/partyradio/config")
        }
        guard case .dj(let dj) = try parse(["dj", "--name", "Roof"]) else {
            Issue.record("not a dj command")
            return
        }
        #expect(
            dj.network
                == NetworkOptions(domain: "party.example", dnsServer: "10.0.0.53", dnsKey: "/etc/partyradio/dns.key"))
        // A guest takes the domain and the server, not the DJ's key.
        guard case .stations(let stations) = try parse(["stations"]) else {
            Issue.record("not a stations command")
            return
        }
        #expect(stations.network == NetworkOptions(domain: "party.example", dnsServer: "10.0.0.53"))
    }

    @Test func mistakesAreUsageErrors() {
        #expect(usage(["stations", "--domain", "bad domain"])?.contains("'--domain' takes a DNS domain") == true)
        #expect(usage(["stations", "--domain", "a..b"]) != nil)
        #expect(usage(["dj", "--name", "R", "--dns-key", "k.key"])?.contains("add --domain NAME") == true)
        #expect(usage(["dj", "--name", "R", "--dns-server", "10.0.0.53"])?.contains("add --domain NAME") == true)
        #expect(usage(["doctor", "--domain", "party.example"]) == "Unknown option '--domain'.")
    }
}
