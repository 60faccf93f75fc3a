import PartyRadioCore

/// What `-v` turns on: a `Log` handler writing one timestamped line per call to the console's
/// stderr, e.g. `2026-11-30T17:05:01.123Z [discovery] station 3f2a… appeared`.
enum StderrLog {
    /// Installs the handler. Called once, by `main`, when the command line has `-v`.
    static func bootstrap(console: Console, clock: @escaping @Sendable () -> Double) {
        Log.bootstrap(handler(console: console, clock: clock))
    }

    /// The handler: each call is one write of one whole line, so lines from several threads
    /// never interleave.
    static func handler(console: Console, clock: @escaping @Sendable () -> Double) -> Log.Handler {
        { topic, message in console.write(line(topic, message, at: clock()), to: .err) }
    }

    /// `<UTC time, milliseconds> [<topic>] <message>` and a newline; a newline inside the message
    /// is written as `\n`, so one call stays one line.
    static func line(_ topic: Log.Topic, _ message: String, at seconds: Double) -> String {
        let milliseconds = Int64((seconds * 1000).rounded(.down))
        // Messages quote network text (service names, datagram senders): any other control
        // character, an escape sequence's ESC included, is written as `\u{…}`, never raw.
        let flat = message.replacing("\r\n", with: "\\n").replacing("\n", with: "\\n").unicodeScalars.map {
            $0.isNeverShown ? "\\u{\(String($0.value, radix: 16))}" : String($0)
        }.joined()
        return "\(timestamp(milliseconds: milliseconds)) [\(topic.rawValue)] \(flat)\n"
    }

    /// ISO 8601 in UTC with milliseconds, `1970-01-01T00:00:00.000Z` for 0. Pure arithmetic
    /// (days to civil date as in Howard Hinnant's `civil_from_days`), no calendar object.
    static func timestamp(milliseconds: Int64) -> String {
        let msPerDay: Int64 = 86_400_000
        let days = milliseconds >= 0 ? milliseconds / msPerDay : (milliseconds - msPerDay + 1) / msPerDay
        let inDay = milliseconds - days * msPerDay
        let shifted = days + 719_468  // days from 0000-03-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(inDay / 3_600_000, 2)):"
            + "\(pad(inDay / 60_000 % 60, 2)):\(pad(inDay / 1000 % 60, 2)).\(pad(inDay % 1000, 3))Z"
    }
}
