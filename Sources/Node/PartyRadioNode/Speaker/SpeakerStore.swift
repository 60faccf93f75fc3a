import Foundation
import PartyRadioCore

/// A speaker's settings and the IDs of the controls that set them, kept in `speaker.json` in its
/// state directory so that a restarted speaker plays as the DJ last set it and takes no older
/// control (docs/SPEAKERS.md). Written whole to a temporary file and renamed, so a crash never
/// leaves half of it; a file that cannot be read is the defaults, with a warning.
final class SpeakerStore {
    static let fileName = "speaker.json"
    let url: URL

    init(directory: URL) { url = directory.appendingPathComponent(Self.fileName) }

    /// What the last run kept, and a warning when a file was there but could not be read.
    func load() -> (SpeakerControlState, warning: String?) {
        guard let data = try? Data(contentsOf: url) else { return (SpeakerControlState(), nil) }
        guard let state = try? JSONDecoder().decode(SpeakerControlState.self, from: data), state.settings.isValid else {
            return (SpeakerControlState(), "\(url.path) could not be read; the speaker starts at full volume.")
        }
        return (state, nil)
    }

    func save(_ state: SpeakerControlState) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try StateFile.replace(url, with: encoder.encode(state))
    }
}
