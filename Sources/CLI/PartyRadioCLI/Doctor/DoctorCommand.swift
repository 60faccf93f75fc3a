import Foundation
import PartyRadioCatalog
import PartyRadioCore
import PartyRadioNode

/// `partyradio doctor`: probes what a node needs, prints each verdict with its fix, exits 1 if any failed.
enum DoctorCommand {
    static func run(_ options: Command.DoctorOptions, context: CommandContext) -> Int32 {
        var checks: [DoctorCheck] = []
        let timeoutMs = Int(options.timeout * 1000)
        var clock: DoctorCheck
        switch DoctorProbes.interface(options.network.interface) {
        case .failure(let problem):
            checks.append(.interface(.failure(problem)))
            clock = .clock(nil, interface: "?", why: "there is no interface to look for a station on")
        case .success(let interface):
            checks.append(.interface(.success(interface.description)))
            let avahi = DoctorProbes.avahi(interface: interface)
            checks.append(.avahi(avahi))
            do {
                let (heard, ms) = try DoctorProbes.multicast(interface: interface, timeoutMs: timeoutMs)
                checks.append(.multicast(heard ? .heard(afterMs: ms) : .silent(afterMs: ms), interface: interface.name))
            } catch {
                checks.append(.multicast(.failed(error.description), interface: interface.name))
            }
            // A station on the air is looked for once: its answers are the clock check and the
            // firewall's proof of the way through.
            let station: ClockProbeMachine.Outcome? =
                avahi == nil ? DoctorProbes.clock(settings: settings(options, context: context)) : nil
            let (reading, rules) = DoctorProbes.firewall()
            var verdicts: [(FirewallTraffic, FirewallRules.Verdict)] = []
            if case .rules = reading {
                for (traffic, packet) in DoctorProbes.stationPackets(
                    interface: interface, port: options.port == 0 ? nil : options.port)
                {
                    verdicts.append((traffic, FirewallRules.verdict(for: packet, in: rules)))
                }
            }
            checks.append(.firewall(reading, verdicts: verdicts, station: station, interface: interface.name))
            clock = .clock(
                station, interface: interface.name, why: "without avahi-daemon no station can be found")
        }
        checks.append(
            .audio(
                options.noAudio
                    ? nil : DoctorProbes.audio(driver: options.audioDriver, soundServer: context.soundServer)))
        if let live = options.live { checks.append(.live(live, problem: LiveSourceProbe.problem(with: live))) }
        if options.speaker { checks.append(.liveOutput(LiveSourceProbe.output())) }
        checks.append(clock)
        checks.append(.catalog(catalog(options, context: context), url: options.iTunesURL))
        if options.json {
            context.console.out(DoctorCheck.json(checks).rendered)
        } else {
            context.console.out(DoctorCheck.text(checks))
        }
        return DoctorCheck.exitCode(checks).rawValue
    }

    /// The settings of the clock probe's node: a throwaway key and the true clock.
    private static func settings(_ options: Command.DoctorOptions, context: CommandContext) -> NodeSettings {
        NodeCommands.settings(
            options.common, network: options.network, reporter: SilentReporter(), context: context)
    }

    /// One uncached search for a common word: the time it took, or the catalog's error.
    private static func catalog(_ options: Command.DoctorOptions, context: CommandContext) -> Result<
        Int, DoctorProbes.Failure
    > {
        let configuration = CatalogConfiguration(
            endpoints: CatalogEndpoints(
                iTunesBaseURL: options.iTunesURL, appleMusicBaseURL: CatalogEndpoints.defaultAppleMusicBaseURL),
            timeout: options.timeout, artworkSize: ArtworkURL.defaultSize)
        let catalog = Catalog(configuration: configuration, cache: nil, clock: context.clock)
        let outcome: Result<Int, DoctorProbes.Failure> = Blocking.run {
            let start = ContinuousClock.now
            do {
                _ = try await catalog.search("love", limit: 1)
                return .success(Int((ContinuousClock.now - start) / .milliseconds(1)))
            } catch { return .failure(DoctorProbes.Failure(CatalogCommands.message(error))) }
        }
        return outcome
    }
}

/// The clock probe's node reports nothing: the doctor prints its verdict instead.
private struct SilentReporter: NodeReporter {
    func report(_ event: NodeEvent) {}
}
