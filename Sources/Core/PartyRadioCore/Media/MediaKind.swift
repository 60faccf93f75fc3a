/// The audio formats the library accepts, by file extension, and their HTTP content types.
public enum MediaKind: String, CaseIterable, Sendable {
    case mp3, ogg, opus, flac, m4a, wav

    /// The kind for a file name or path, by its extension (case-insensitive), or nil if not audio.
    public init?(fileName: String) {
        guard let dot = fileName.lastIndex(of: "."), !fileName[dot...].contains("/") else { return nil }
        let ext = fileName[fileName.index(after: dot)...].lowercased()
        switch ext {
        case "oga": self = .ogg
        case "mp4", "aac": self = .m4a
        case "wave": self = .wav
        default:
            guard let kind = MediaKind(rawValue: ext) else { return nil }
            self = kind
        }
    }

    public var contentType: String {
        switch self {
        case .mp3: "audio/mpeg"
        case .ogg: "audio/ogg"
        case .opus: "audio/ogg; codecs=opus"
        case .flac: "audio/flac"
        case .m4a: "audio/mp4"
        case .wav: "audio/wav"
        }
    }

    /// Content type for any file name: the audio type, or `application/octet-stream`.
    public static func contentType(forFileName name: String) -> String {
        MediaKind(fileName: name)?.contentType ?? "application/octet-stream"
    }
}
