import Foundation
import PartyRadioCore
import PartyRadioStorage

/// `partyradio stats`: reads the DJ's database in the state directory and prints the nights.
enum StatsCommand {
    static func run(_ options: Command.StatsOptions, context: CommandContext) -> Int32 {
        let directory = StateDirectory.resolve(options.common.stateDir, environment: context.environment)
        let folder = URL(fileURLWithPath: directory)
        // Reading never creates the file: a state directory without a DJ run has no stats.
        var nights: [DJStore.Night] = []
        if DJStore.exists(in: folder) {
            do throws(DJStoreError) { nights = try DJStore(directory: folder).nights(latestOnly: !options.all) } catch {
                context.console.error(error.description)
                return ExitCode.failure.rawValue
            }
        }
        if options.json {
            context.console.out(StatsReport.json(nights).shown.rendered)
        } else if nights.isEmpty {
            context.console.out("No stats yet: no DJ has run with the state directory \(directory).")
        } else {
            context.console.write(StatsReport.text(nights), to: .out)
        }
        return ExitCode.success.rawValue
    }
}
