import Foundation
import PartyRadioCatalog
import PartyRadioNode

/// `partyradio doctor`: probes what a node needs, prints each verdict with its fix, exits 1 if any failed.
enum DoctorCommand {
    static func run(_ options: Command.DoctorOptions, context: CommandContext) -> Int32 {
        var checks: [DoctorCheck] = []
        let timeoutMs = Int(options.timeout * 1000)
        switch DoctorProbes.interface(options.network.interface) {
        case .failure(let problem):
            checks.append(.interface(.failure(problem)))
        case .success(let interface):
            checks.append(.interface(.success(interface.description)))
            checks.append(.avahi(DoctorProbes.avahi(interface: interface)))
            do {
                let (heard, ms) = try DoctorProbes.multicast(interface: interface, timeoutMs: timeoutMs)
                checks.append(.multicast(heard ? .heard(afterMs: ms) : .silent(afterMs: ms), interface: interface.name))
            } catch {
                checks.append(.multicast(.failed(error.description), interface: interface.name))
            }
        }
        checks.append(.catalog(catalog(options, context: context), url: options.iTunesURL))
        if options.json {
            context.console.out(DoctorCheck.json(checks).rendered)
        } else {
            context.console.out(DoctorCheck.text(checks))
        }
        return DoctorCheck.exitCode(checks).rawValue
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
