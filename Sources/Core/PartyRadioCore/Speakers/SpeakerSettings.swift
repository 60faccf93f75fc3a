/// What the DJ sets on a speaker: its volume, mute and delay trim (docs/SPEAKERS.md). On the wire
/// (``SpeakerStatus``, ``SpeakerControl``) as `volume: u8 ‖ muted: u8 ‖ delay: i16 ms`; a value out
/// of range is malformed there, and refused with the range where a person typed it.
public struct SpeakerSettings: Hashable, Sendable, Codable {
    public static let volumeRange = 0...100
    /// The delay trim's range in milliseconds: enough for a Bluetooth or HDMI output that lags.
    public static let delayRange = -500...500

    /// 0–100.
    public var volume: Int
    public var muted: Bool
    /// Added to the speaker's playout, in milliseconds (−500…+500): positive plays later.
    public var delayMs: Int

    public init(volume: Int = 100, muted: Bool = false, delayMs: Int = 0) {
        self.volume = volume
        self.muted = muted
        self.delayMs = delayMs
    }

    /// Whether every value is in its range.
    public var isValid: Bool { Self.volumeRange.contains(volume) && Self.delayRange.contains(delayMs) }

    /// The level the player plays at: the volume, or 0 when muted.
    public var playerVolume: Int { muted ? 0 : volume }

    func encode(into writer: inout ByteWriter) {
        writer.write(UInt8(clamping: volume))
        writer.write(UInt8(muted ? 1 : 0))
        writer.write(Int16(clamping: delayMs))
    }

    init(from reader: inout ByteReader) throws(WireError) {
        let volume = try reader.readUInt8()
        let muted = try reader.readUInt8()
        let delay = try reader.read(Int16.self)
        guard Self.volumeRange.contains(Int(volume)) else { throw .malformed("speaker volume \(volume)") }
        guard muted <= 1 else { throw .malformed("speaker mute flag \(muted)") }
        guard Self.delayRange.contains(Int(delay)) else { throw .malformed("speaker delay \(delay) ms") }
        self.init(volume: Int(volume), muted: muted == 1, delayMs: Int(delay))
    }
}
