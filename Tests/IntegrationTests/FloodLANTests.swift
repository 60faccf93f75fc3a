import Foundation
import Testing

/// Issue 27, attack 5: a forged-signature flood from one machine's 64 addresses at the highest rate
/// the testbed sustains, while a guest on a host the DJ has never heard from votes. The flood used
/// to take the whole verification budget, so the new guest's query went unverified and `vote`
/// said "No station found"; now the DJ answers it with a cookie challenge and verifies its query
/// with the cookie from the reserve (docs/SECURITY.md). On a busy machine (CI) that was not enough:
/// the 3,000 forged signatures a second still checked took all the CPU the DJ got, the kernel dropped
/// most datagrams before the DJ read them, the new guest's among them, and a `vote` timed out; once
/// the flood lasts a second, its share is now 100 checks a second.
@Suite(
    "A flood from many addresses", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct FloodLANTests {
    /// `count` addresses on `host`'s LAN interface from .100 of its subnet on, as one machine with
    /// many addresses has them; returns `FIRST+COUNT` for scripts/forged-flood.py.
    static func addAliases(_ lan: Testbed, host: Int, count: Int) throws -> String {
        let own = try lan.ip(host: host)
        let prefix = own.split(separator: ".").dropLast().joined(separator: ".")
        for n in 0..<count {
            let added = try lan.run(
                host: host, ["/usr/sbin/ip", "addr", "add", "\(prefix).\(100 + n)/24", "dev", "eth0"])
            #expect(added.exit == 0, "\(added.stderr)")
        }
        return "\(prefix).100+\(count)"
    }

    /// The CPU time (user and system, seconds) of the process whose command line holds `marker`
    /// (of several, the busiest: the DJ rather than the shell that started it), from /proc.
    static func cpuSeconds(ofProcessWith marker: String) -> Double? {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { Int($0) != nil }.compactMap { pid -> Double? in
            guard let raw = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
                String(decoding: raw.map { $0 == 0 ? 32 : $0 }, as: UTF8.self).contains(marker),
                let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // After the command's name: state is field 3, utime 14 and stime 15 (proc(5)).
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
            return (user + system) / ticks
        }.max()
    }

    @Test("a new guest votes on its first try during a 50,000 a second forged flood from 64 addresses")
    func aNewGuestVotesThroughAFloodFrom64Addresses() throws {
        let lan = try Testbed(hosts: 4)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        // Every fresh guest's vote counts (they share host 4's address).
        let dj = try lan.startDJ(host: 1, name: "Sturdy", extra: ["--voters-per-address", "10"])
        let started = try dj.waitForEvent("started") { $0.name == "station_started" }
        let listener = try lan.spawn(
            host: 3,
            [Testbed.partyradioBinary, "listen", "--json-events", "--no-audio", "--state-dir", lan.stateDir("l")])
        try listener.waitForEvent("tuned_in") { $0.name == "tuned_in" }
        let mark = listener.events.count

        let sources = try Self.addAliases(lan, host: 2, count: 64)
        let flood = Testbed.repoRoot.appendingPathComponent("scripts/forged-flood.py").path
        let address = try #require(started.string("address"))
        let port = String(try #require(started.int("port")))
        let id = try #require(started.string("id"))
        // Two processes (one Python process sends about 30,000 a second here), 32 addresses each.
        let first = sources.split(separator: "+")[0]
        let prefix = first.split(separator: ".").dropLast().joined(separator: ".")
        let flooders = try [100, 132].map { start in
            try lan.spawn(
                host: 2, ["python3", flood, address, port, id, "25000", "15", "\(prefix).\(start)+32"])
        }
        Thread.sleep(forTimeInterval: 2)
        let djMarker = "--state-dir \(lan.stateDir("dj"))"
        let cpuBefore = Self.cpuSeconds(ofProcessWith: djMarker)
        let floodBegan = ContinuousClock.now
        // Guests on a host that never spoke to the DJ, each with a fresh key, one `vote` each, no
        // retry by hand. Without a flood one takes about 1.1 s (DNS-SD's first sweep is 1 s of it).
        // The flood used to leave a new guest a slot now and then, at random (a query was verified
        // only while the second's budget lasted, 0.1–0.2 s of it): most waited seconds, some ran out.
        var times: [Duration] = []
        for guest in 0..<4 {
            let began = ContinuousClock.now
            let vote = try lan.partyradio(
                host: 4, ["vote", "up", "--json", "--timeout", "20", "-v"], role: "fresh\(guest)")
            let took = ContinuousClock.now - began
            times.append(took)
            #expect(vote.exit == 0, "\(vote.stderr)")
            print("fresh guest \(guest)'s vote during the flood: exit \(vote.exit) in \(took): \(vote.stdout)")
            print(
                vote.stderr.split(separator: "\n").filter { $0.contains("[discovery]") || $0.contains("[wire]") }
                    .joined(separator: "\n"))
        }
        // (On a loaded machine the DJ reads a quarter to a half of the flood and the kernel drops the
        // rest, a guest's datagrams too: votes took 0.27-9.3 s there, so the guests are as patient as a
        // user told that a vote under attack may take seconds: docs/SECURITY.md.)
        // The behaviour is that each vote got through within its timeout (exit 0 above); how long
        // it took is a figure for scripts/bench-flood.py, not a bound a loaded machine must meet.
        print("fresh guests' votes took \(times)")
        if let before = cpuBefore, let after = Self.cpuSeconds(ofProcessWith: djMarker) {
            let wall = ContinuousClock.now - floodBegan
            print("DJ CPU while the guests voted: \(after - before) s in \(wall) (a figure, not a bound)")
        }
        for flooder in flooders {
            #expect(flooder.wait(timeout: .seconds(20)) == 0)
            print("forged flood: \(flooder.text(.stdout))")
        }
        let during = Array(listener.events[mark...])
        #expect(!during.contains { $0.name == "station_silent" }, "the listener heard silence during the flood")
        listener.kill(signal: SIGINT)
        dj.send("quit")
        #expect(dj.wait(timeout: .seconds(5)) == 0)
        let drops = dj.events.last { $0.name == "station_stopped" }?["dropped"] as? [String: Int] ?? [:]
        print("DJ drops: \(drops)")
        // The flood did what it does: it kept the open share spent, so nearly all of it was turned
        // away before any signature check ...
        #expect(drops["over_budget", default: 0] + drops["challenged", default: 0] > 100_000, "\(drops)")
        // ... and once it lasted a second, it was given 100 checks a second, not 3,000 (which took
        // all the CPU a busy machine gave the DJ, so the kernel dropped the new guests' datagrams
        // with the flood's): a second's open share, 100 for each of its 15 seconds, and room for
        // the flooders stalling twice (a new second of the full share each time).
        let limits = (open: 3_000, underFlood: 100)
        #expect(drops["bad_signature", default: 0] <= 3 * limits.open + 15 * limits.underFlood, "\(drops)")
    }
}
