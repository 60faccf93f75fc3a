/// Builds RIFF/WAVE files of 16-bit PCM with tags in two places: a LIST/INFO chunk (INAM title,
/// IART artist, IPRD album), which most tools read, and an `id3 ` chunk holding an ID3v2.4 tag,
/// which is the only WAV tag TagLib 1.x's C API returns. Pure byte building; the caller writes the file.
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
        if let info, let id3 = id3v2Tag(info) { body.appendChunk("id3 ", id3) }

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

    /// An ID3v2.4 tag with UTF-8 TIT2/TPE1/TALB text frames.
    static func id3v2Tag(_ info: Info) -> [UInt8]? {
        let fields = [("TIT2", info.title), ("TPE1", info.artist), ("TALB", info.album)]
        var frames: [UInt8] = []
        for (id, value) in fields {
            guard let value, !value.isEmpty else { continue }
            let payload = [UInt8(3)] + Array(value.utf8)  // encoding 3 = UTF-8
            frames += Array(id.utf8)
            frames += syncsafe(payload.count)
            frames += [0, 0]  // flags
            frames += payload
        }
        guard !frames.isEmpty else { return nil }
        return Array("ID3".utf8) + [4, 0, 0] + syncsafe(frames.count) + frames
    }

    /// ID3v2's 28-bit big-endian integer with the top bit of each byte clear.
    private static func syncsafe(_ value: Int) -> [UInt8] {
        [UInt8((value >> 21) & 0x7F), UInt8((value >> 14) & 0x7F), UInt8((value >> 7) & 0x7F), UInt8(value & 0x7F)]
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
