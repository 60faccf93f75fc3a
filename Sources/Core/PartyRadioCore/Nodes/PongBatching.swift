/// Whether a listener's next time ping asks for the group's batch (docs/PROTOCOL.md, "Time pongs
/// to the group"): when it may (settled, on the group's link, the station heard), its last ping was
/// answered, and it has not lost two batches in a row within the last ``pauseNs``.
struct PongBatching: Sendable {
    /// After two batches lost in a row, pings ask for pongs of their own this long.
    static let pauseNs = Nanos.seconds(30)

    /// Whether the last ping asked for the batch; batches lost in a row since one came; until when
    /// pings ask for pongs of their own.
    private var lastAsked = false
    private var lost = 0
    private var pausedUntil: LocalTime?

    /// The next ping, at `now`: whether it asks for the batch. `answered`: a usable sample came
    /// since the last ping; `eligible`: settled, on the group's link, the station heard.
    mutating func nextPing(at now: LocalTime, answered: Bool, eligible: Bool) -> Bool {
        if lastAsked, !answered {
            lost += 1
            if lost >= 2 {
                lost = 0
                pausedUntil = now + Self.pauseNs
            }
        }
        lastAsked = eligible && answered && (pausedUntil.map { now >= $0 } ?? true)
        return lastAsked
    }

    /// A batch's entry gave a usable sample.
    mutating func batchAnswered() { lost = 0 }
}
