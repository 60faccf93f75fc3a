import PartyRadioCore

extension StationObserver {
    /// Waits until the station the user meant is visible, or fails.
    ///
    /// - Parameters:
    ///   - query: name, unique name prefix or station ID; nil means the only station there is.
    ///   - timeoutNs: how long to keep looking (exit code 3 after that).
    /// - Returns: the station's summary, or nil when a quit arrived while looking.
    public func find(_ query: String?, timeoutNs: Int64, clock: some NanoClock) throws(NodeError) -> StationSummary? {
        let deadline = clock.now() + timeoutNs
        while clock.now() < deadline {
            _ = try pump(timeoutMs: 50)
            if otherInputs.contains(where: { if case .quit = $0 { true } else { false } }) { return nil }
            let candidates = summaries().map { (name: $0.name, id: $0.id, value: $0) }
            switch StationMatcher.match(query, among: candidates) {
            case .found(let station):
                // An exact name or ID cannot become ambiguous; "the only one" or a prefix can, as
                // long as stations are still answering, so those wait for the first sweep.
                if settled || station.name == query || station.id.hex == query?.lowercased() { return station }
            case .ambiguous(let stations):
                // More may still answer; decide once the first sweep is done.
                if settled {
                    let names = stations.map { "\($0.name) (\($0.id.hex))" }.joined(separator: ", ")
                    throw NodeError(
                        query == nil
                            ? "Several stations are on the air: \(names); name one."
                            : "'\(query!)' matches several stations: \(names); use more of the name or the ID.",
                        exitCode: 2)
                }
            case .none:
                continue
            }
        }
        let visible = summaries().map(\.name)
        if let query {
            let list = visible.isEmpty ? "none is on the air" : "on the air: \(visible.joined(separator: ", "))"
            throw NodeError.notFound("No station matches '\(query)' (\(list)); check the name with 'partyradio stations'.")
        }
        throw NodeError.notFound(
            "No station found on \(interface.name); check that the DJ is running on this network, or pass --interface.")
    }
}
