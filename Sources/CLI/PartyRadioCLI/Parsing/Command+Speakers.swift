import PartyRadioCore

extension Command {
    /// `partyradio speakers [--json] [options]`: the running DJ's speakers, asked on the DJ's machine
    /// (docs/SPEAKERS.md).
    public struct SpeakersOptions: Equatable, Sendable {
        /// `--json`: the list as JSON.
        public var json = false
        /// `--state-dir`, `-v`: the DJ's state directory holds its link.
        public var common = CommonOptions()
    }

    /// `partyradio speaker-set NAME|ROOM volume|mute|delay VALUE [options]`: sets a speaker or a
    /// room through the running DJ on this machine.
    public struct SpeakerSetOptions: Equatable, Sendable {
        /// The speaker's name or the room, as the DJ's `speaker` line takes it.
        public var who: String
        /// The setting, in range (checked as the DJ checks its lines).
        public var change: DJControl.SpeakerChange
        /// `--state-dir`, `-v`.
        public var common = CommonOptions()
    }

    static func parseSpeakers(_ arguments: [String]) throws(UsageError) -> SpeakersOptions {
        var scanner = ArgumentScanner(arguments, command: "speakers")
        var options = SpeakersOptions()
        while let option = scanner.nextOption() {
            if try options.common.consume(option, from: &scanner) { continue }
            switch option {
            case "--json": options.json = true
            default: throw scanner.unknown(option)
            }
        }
        try noPositionals(scanner)
        return options
    }

    static func parseSpeakerSet(_ arguments: [String]) throws(UsageError) -> SpeakerSetOptions {
        var scanner = ArgumentScanner(arguments, command: "speaker-set")
        var common = CommonOptions()
        while let option = scanner.nextOption() {
            if try common.consume(option, from: &scanner) { continue }
            throw scanner.unknown(option)  // (a negative delay is a positional: the scanner says so)
        }
        // The DJ's own parser: the same words, ranges and sentences as its `speaker` line.
        let line = scanner.positionals.joined(separator: " ")
        let control: DJControl
        do { control = try DJControl.parse(verb: "speaker", argument: line) } catch {
            throw UsageError(error.message, command: "speaker-set")
        }
        guard case .speaker(let who, let change) = control else {
            throw UsageError(DJControl.speakerUsage, command: "speaker-set")
        }
        return SpeakerSetOptions(who: who, change: change, common: common)
    }
}
