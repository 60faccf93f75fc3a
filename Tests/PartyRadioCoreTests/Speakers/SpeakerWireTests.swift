import Testing

@testable import PartyRadioCore

/// The speaker messages on the wire (docs/PROTOCOL.md, "Speakers"): a value out of its range is
/// malformed, so a speaker never applies one, whoever signed it.
@Suite struct SpeakerWireTests {
    static let station = StationID(rawValue: 0x1234_5678_9ABC_DEF0)

    func decoded(_ message: Message) throws -> Message {
        try Datagram.decode(Datagram.encode(message, stationID: Self.station, sequence: 9, signer: FakeSigner(1)))
            .message
    }

    /// The bytes of a control with its settings written raw (volume, mute, delay), and its fields.
    func rawControl(volume: UInt8 = 50, muted: UInt8 = 0, delay: Int16 = 0, fields: UInt8 = 7, target: [UInt8]? = nil)
        -> [UInt8]
    {
        var writer = ByteWriter()
        writer.write(UInt64(5))
        writer.write(bytes: target ?? ([0] + [UInt8](repeating: 3, count: 32)))
        writer.write(fields)
        writer.write(volume)
        writer.write(muted)
        writer.write(delay)
        return writer.bytes
    }

    func decodeControl(_ bytes: [UInt8]) throws(WireError) -> SpeakerControl {
        var reader = ByteReader(bytes)
        return try SpeakerControl(from: &reader)
    }

    @Test("a control and a status come back as they were sent, at the limits of every range")
    func roundTrip() throws {
        for volume in [0, 100] {
            for delay in [-500, 0, 500] {
                let control = Message.speakerControl(
                    SpeakerControl(
                        controlID: .max, target: .room("Downstairs"), fields: [.volume, .delay],
                        settings: SpeakerSettings(volume: volume, muted: true, delayMs: delay)))
                #expect(try decoded(control) == control)
                let status = Message.speakerStatus(
                    SpeakerStatus(
                        name: "Kitchen", room: "", settings: SpeakerSettings(volume: volume, delayMs: delay),
                        playing: false, lastControl: 0))
                #expect(try decoded(status) == status)
            }
        }
    }

    @Test("volume over 100, a delay beyond ±500 ms, a mute flag over 1, no fields or unknown fields: malformed")
    func outOfRange() throws {
        #expect(throws: Never.self) { try decodeControl(rawControl()) }
        #expect(throws: Never.self) { try decodeControl(rawControl(volume: 100, delay: -500)) }
        for bad in [
            rawControl(volume: 101), rawControl(muted: 2), rawControl(delay: 501), rawControl(delay: -501),
            rawControl(fields: 0), rawControl(fields: 8), rawControl(target: [1, 0]), rawControl(target: [2]),
        ] {
            #expect(throws: WireError.self) { try decodeControl(bad) }
        }
    }

    @Test("both kinds are new: a speaker's status is a guest's kind, a control the DJ's")
    func kinds() {
        #expect(!MessageKind.speakerStatus.isFromDJ)
        #expect(MessageKind.speakerControl.isFromDJ)
    }
}
