import Foundation
import PartyRadioCore

/// Writes the demo library (six tagged sine-tone WAV tracks) so a party can start without music
/// files, and tests have real audio to play, scan and serve.
public enum DemoLibrary {
    /// Writes the demo tracks into `directory` (created if needed) and returns their paths.
    /// Existing files with the same names are replaced.
    /// - Parameter durationScale: shortens the tracks (tests use a fraction of their 20–40 s).
    @discardableResult
    public static func generate(into directory: String, durationScale: Double = 1) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return try DemoTrackSpec.standard(durationScale: durationScale).map { spec in
            let path = (directory as NSString).appendingPathComponent(spec.fileName)
            try Data(spec.wavBytes()).write(to: URL(fileURLWithPath: path), options: .atomic)
            return path
        }
    }
}
