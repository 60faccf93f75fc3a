/// Waits until the station the user meant is visible: by name, unique name prefix or station ID;
/// no query means the only station there is. Used by the listener and the voter while they look.
public struct StationFinder: Sendable {
    public enum Outcome: Sendable {
        case waiting
        case found(StationSummary)
        case failed(NodeError)
    }

    public let query: String?
    public let deadline: LocalTime
    public let interfaceName: String

    public init(query: String?, deadline: LocalTime, interfaceName: String) {
        self.query = query
        self.deadline = deadline
        self.interfaceName = interfaceName
    }

    /// Looks at what `watch` sees at `now`.
    public func check(_ watch: StationWatch, now: LocalTime) -> Outcome {
        let summaries = watch.summaries(now: now)
        let candidates = summaries.map { (name: $0.name, id: $0.id, value: $0) }
        switch StationMatcher.match(query, among: candidates) {
        case .found(let station):
            // An exact name or ID cannot become ambiguous; "the only one" or a prefix can, as
            // long as stations are still answering, so those wait for the first sweep.
            if watch.settled || station.name == query || station.id.hex == query?.lowercased() {
                return .found(station)
            }
        case .ambiguous(let stations):
            // More may still answer; decide once the first sweep is done.
            if watch.settled {
                let names = stations.map { "\($0.name) (\($0.id.hex))" }.joined(separator: ", ")
                let message =
                    if let query {
                        "'\(query)' matches several stations: \(names); use more of the name or the ID."
                    } else {
                        "Several stations are on the air: \(names); name one."
                    }
                return .failed(NodeError(.usage, message))
            }
        case .none:
            break
        }
        guard now >= deadline else { return .waiting }
        let visible = summaries.map(\.name)
        if let query {
            let list = visible.isEmpty ? "none is on the air" : "on the air: \(visible.joined(separator: ", "))"
            return .failed(
                .notFound("No station matches '\(query)' (\(list)); check the name with 'partyradio stations'."))
        }
        return .failed(
            .notFound(
                "No station found on \(interfaceName); check that the DJ is running on this network, or pass --interface."
            ))
    }
}
