import Foundation
import PartyRadioLive

/// The drift a live output learnt of its sound card against the station clock, kept in
/// `live-drift.json` in the node's state directory, so that the next output to the same place (its
/// sound server and sink) starts from it (``PartyRadioLive/LivePlayer/Options/startPPM``) instead
/// of learning it again over the drift controller's seconds: a speaker started again is on time
/// from its first frame rather than up to half a millisecond off meanwhile (docs/LIVE.md, "Drift").
/// Another station's clock differs from this one's by its machine's crystal (tens of ppm), which the
/// controller takes away as it would from 0. Written whole to a temporary file and renamed; a file
/// that cannot be read, names another output or holds a drift beyond ±1000 ppm is ignored.
final class LiveDriftStore {
    static let fileName = "live-drift.json"

    struct Entry: Codable, Equatable {
        /// ``LiveDriftStore/output(server:sink:)``.
        var output: String
        var ppm: Double
    }

    let url: URL

    init(directory: URL) { url = directory.appendingPathComponent(Self.fileName) }

    /// Names an output: its sound server and sink (empty: the default).
    static func output(server: String?, sink: String?) -> String { "\(server ?? "")|\(sink ?? "")" }

    /// Names the output a live player plays to.
    static func output(of options: LivePlayer.Options) -> String { output(server: options.server, sink: options.sink) }

    /// The drift kept for `output`, if any.
    func load(output: String) -> Double? {
        guard let data = try? Data(contentsOf: url), let entry = try? JSONDecoder().decode(Entry.self, from: data),
            entry.output == output, entry.ppm.isFinite, abs(entry.ppm) <= 1000
        else { return nil }
        return entry.ppm
    }

    func save(output: String, ppm: Double) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try StateFile.replace(url, with: encoder.encode(Entry(output: output, ppm: ppm)))
    }
}
