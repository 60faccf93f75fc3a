import Foundation
import PartyRadioCLI

exit(
    PartyRadio.main(
        arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
