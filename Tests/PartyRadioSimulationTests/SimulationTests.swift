import Foundation
import Testing

/// The simulated LAN: a DJ, listeners and voters as the real state machines, on an in-memory
/// network with loss, duplication, delay, reordering, clock offsets and drift, from one seed.
///
/// `PARTYRADIO_SIM_SEEDS=N` runs N seeds (default 200; `make sim` runs 2,000); `PARTYRADIO_SIM_SEED=S` replays one;
/// `PARTYRADIO_SIM_LOSS=0.3` gives every link that loss (`make bench loss`).
/// A failing seed is printed with its faults; the same seed replays the same run.
@Suite struct SimulationTests {
    static var seeds: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let one = environment["PARTYRADIO_SIM_SEED"].flatMap(UInt64.init) { return [one] }
        let count = environment["PARTYRADIO_SIM_SEEDS"].flatMap(Int.init) ?? 200
        return (1...UInt64(max(1, count))).map { $0 }
    }

    @Test func partiesKeepTheirInvariantsAcrossSeeds() async {
        // The seeds run off the concurrency pool (``offThePool``); the checks come back here.
        let (failures, totals, loss) = await offThePool { Self.runSeeds() }
        print(
            "simulation: \(Self.seeds.count) seeds\(loss.map { " at \(Int($0 * 100)) % loss" } ?? ""), \(totals.listeners) listeners, \(totals.voters) voters "
                + "(\(totals.votesAcknowledged) acknowledged; \(totals.sessionVotes) vote datagrams with a session MAC), \(totals.datagrams) datagrams "
                + "(\(totals.batched) to the DJ in batches), "
                + "\(totals.convergenceSamples) position checks (\(totals.offLinkChecks) beyond a router, \(totals.offLinkStale) of them a second late), worst error \(Double(totals.maxErrorNs) / 1e6) ms, "
                + "\(totals.crowdSkips) crowd skips (in \(totals.seedsWithCrowdSkip) seeds; \(totals.crowdSkipsAtShare) at exactly the share), \(totals.chats) chat lines acknowledged, "
                + "\(totals.requests) requests queued, \(totals.requestVotes) votes on requests counted, "
                + "\(totals.pongBatches) time pongs batches (\(totals.batchSamples) of the \(totals.onLinkSamples) clock samples listeners on the link took)"
        )
        for failure in failures.prefix(30) { print("FAILED \(failure)") }
        #expect(failures.isEmpty, "\(failures.count) violations; first: \(failures.first ?? "")")
        // A third of the listeners are beyond a router: the invariant on them must have had its say.
        // They hear the station as well as listeners on the link do: a snapshot over a second old only when loss ate two.
        if Self.seeds.count >= 20 {
            #expect(totals.offLinkChecks > 0)
            #expect(totals.offLinkStale * 20 <= totals.offLinkChecks, "beyond a router, snapshots late too often")
            // Settled listeners on the link had their clocks held on the station position by batched
            // pongs. Most of a listener's samples come from its quick pings of the first 10 s (about
            // 80; then 2 a second), so the batches' share of them all is about a quarter when the
            // steady pings are answered in batches, and nothing when they are not.
            #expect(totals.pongBatches > 0)
            #expect(totals.batchSamples * 6 > totals.onLinkSamples)
        }
    }

    /// Every seed's run: the violations, the totals, and the loss every link was given, if any.
    static func runSeeds() -> (failures: [String], totals: SimRun.Stats, loss: Double?) {
        var failures: [String] = []
        var totals = SimRun.Stats()
        let loss = ProcessInfo.processInfo.environment["PARTYRADIO_SIM_LOSS"].flatMap(Double.init)
        for seed in Self.seeds {
            var run = SimRun(seed: seed, fixedLoss: loss)
            run.run()
            failures += run.violations
            totals.listeners += run.stats.listeners
            totals.voters += run.stats.voters
            totals.votesAcknowledged += run.stats.votesAcknowledged
            totals.sessionVotes += run.stats.sessionVotes
            totals.datagrams += run.stats.datagrams
            totals.batched += run.stats.batched
            totals.convergenceSamples += run.stats.convergenceSamples
            totals.offLinkChecks += run.stats.offLinkChecks
            totals.offLinkStale += run.stats.offLinkStale
            totals.maxErrorNs = max(totals.maxErrorNs, run.stats.maxErrorNs)
            totals.crowdSkips += run.stats.crowdSkips
            totals.crowdSkipsAtShare += run.stats.crowdSkipsAtShare
            totals.seedsWithCrowdSkip += run.stats.seedsWithCrowdSkip
            if ProcessInfo.processInfo.environment["PARTYRADIO_SIM_SEED_STATS"] != nil {
                print(
                    "seedstat \(seed) err \(run.stats.maxErrorNs) spread \(run.faults.maxDelayNs - run.faults.minDelayNs) "
                        + "min \(run.faults.minDelayNs) loss \(run.faults.loss) crowd \(run.stats.crowdSkips) "
                        + "atshare \(run.stats.crowdSkipsAtShare) samples \(run.stats.convergenceSamples) "
                        + "violations \(run.violations.count)")
            }
            totals.chats += run.stats.chats
            totals.requests += run.stats.requests
            totals.requestVotes += run.stats.requestVotes
            totals.pongBatches += run.stats.pongBatches
            totals.batchSamples += run.stats.batchSamples
            totals.onLinkSamples += run.stats.onLinkSamples
        }
        return (failures, totals, loss)
    }

    @Test func aSeedReplaysTheSameRun() async {
        let (first, second) = await offThePool {
            var first = SimRun(seed: 4242)
            first.run()
            var second = SimRun(seed: 4242)
            second.run()
            return (first.stats, second.stats)
        }
        #expect(first.datagrams == second.datagrams)
        #expect(first.inputs == second.inputs)
        #expect(first.maxErrorNs == second.maxErrorNs)
        #expect(first.datagrams > 100)
    }

    @Test func theChecksCanFail() async {
        // Demand a position no estimate over a jittery link can meet: the checker must object.
        let strict = await offThePool {
            var strict = SimRun(seed: Self.firstSeedWithListeners(), positionToleranceNs: 1)
            strict.run()
            return (samples: strict.stats.convergenceSamples, violations: strict.violations)
        }
        #expect(strict.samples > 0)
        #expect(!strict.violations.isEmpty)
        #expect(strict.violations.allSatisfy { $0.contains("off the station position") })
    }

    static func firstSeedWithListeners() -> UInt64 {
        for seed in UInt64(1)...50 {
            var run = SimRun(seed: seed)
            run.run()
            if run.stats.convergenceSamples > 0 { return seed }
        }
        return 1
    }
}
