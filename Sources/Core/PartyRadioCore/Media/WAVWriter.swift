/// Builds RIFF/WAVE files of 16-bit PCM with an optional LIST/INFO chunk (INAM title, IART artist,
/// IPRD album), the tags TagLib and mpv read back. Pure byte building; the caller writes the file.
public enum WAVWriter {
    /// Text tags for the LIST/INFO chunk.
    public struct Info: Hashable, Sendable {
        public var title: String?
        public var artist: String?
        public var album: String?

        public init(title: String? = nil, artist: String? = nil, album: String? = nil) {
            self.title = title
            self.artist = artist
            self.album = album
        }
    }

    /// A complete WAV file: `samples` interleaved by channel, little-endian 16-bit.
    public static func pcm16(samples: [Int16], sampleRate: Int, channels: Int = 1, info: Info? = nil) -> [UInt8] {
        precondition(channels >= 1 && sampleRate > 0)
        var format: [UInt8] = []
        format.appendLE(UInt16(1))  // PCM
        format.appendLE(UInt16(channels))
        format.appendLE(UInt32(sampleRate))
        format.appendLE(UInt32(sampleRate * channels * 2))  // byte rate
        format.appendLE(UInt16(channels * 2))  // block align
        format.appendLE(UInt16(16))  // bits per sample

        var data: [UInt8] = []
        data.reserveCapacity(samples.count * 2)
        for sample in samples { data.appendLE(UInt16(bitPattern: sample)) }

        var body: [UInt8] = Array("WAVE".utf8)
        body.appendChunk("fmt ", format)
        if let info, let list = infoList(info) { body.appendChunk("LIST", list) }
        body.appendChunk("data", data)

        var file: [UInt8] = Array("RIFF".utf8)
        file.appendLE(UInt32(body.count))
        file += body
        return file
    }

    private static func infoList(_ info: Info) -> [UInt8]? {
        let fields = [("INAM", info.title), ("IART", info.artist), ("IPRD", info.album)]
        var list: [UInt8] = Array("INFO".utf8)
        var any = false
        for (id, value) in fields {
            guard let value, !value.isEmpty else { continue }
            list.appendChunk(id, Array(value.utf8) + [0])
            any = true
        }
        return any ? list : nil
    }
}

extension [UInt8] {
    fileprivate mutating func appendLE(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    fileprivate mutating func appendLE(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    /// A RIFF chunk: four-character id, little-endian size, payload, pad byte to an even length.
    fileprivate mutating func appendChunk(_ id: String, _ payload: [UInt8]) {
        self += Array(id.utf8)
        appendLE(UInt32(payload.count))
        self += payload
        if payload.count % 2 == 1 { append(0) }
    }
}
