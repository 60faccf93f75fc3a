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

    /// The error for a query that names a private station this node cannot open (its whole name,
    /// case ignored, or the start of it); nil when it names none.
    static func locked(_ query: String?, in watch: StationWatch) -> NodeError? {
        guard let query = query?.lowercased(), !query.isEmpty else { return nil }
        let names = watch.lockedStations.keys.sorted()
        guard
            let name = names.first(where: { $0.lowercased() == query })
                ?? names.first(where: { $0.lowercased().hasPrefix(query) }),
            let lock = watch.lockedStations[name]
        else { return nil }
        return privateStation(name, lock)
    }

    /// The error for a query that names (whole, case ignored) a station that DNS-SD announces but
    /// that never answered: its DJ stopped without withdrawing it (killed, crashed, or its host
    /// lost power), or a firewall is in the way. Nil when no such station is announced.
    static func announcedButSilent(_ query: String, in watch: StationWatch) -> NodeError? {
        let wanted = query.lowercased()
        guard
            let entry = watch.directory.entries.values.filter({
                !$0.isListed && $0.serviceName.lowercased() == wanted
            }).min(by: { $0.advert.stationID.hex < $1.advert.stationID.hex })
        else { return nil }
        let shown = GuestName.cleaned(entry.serviceName)
        return .notFound(
            "'\(shown)' is announced (at \(entry.address), port \(entry.port)) but its DJ does not answer: it may "
                + "have stopped without withdrawing it (killed or crashed; in a --domain zone such records lapse "
                + "within a minute), or a firewall drops its UDP port.")
    }

    /// One sentence that says what to do: give the code, or check it.
    static func privateStation(_ name: String, _ lock: StationWatch.Lock) -> NodeError {
        let shown = GuestName.cleaned(name)
        return switch lock {
        case .noCode:
            NodeError(.usage, "'\(shown)' is a private station: join with --code CODE (the DJ's terminal shows it).")
        case .wrongCode:
            NodeError(
                .usage,
                "'\(shown)' is a private station, and the code given does not open it: check the code on the DJ's terminal."
            )
        }
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
            if let locked = Self.locked(query, in: watch) { return .failed(locked) }
        }
        // Only private stations this node cannot open are on the air: say so, rather than "none".
        if query == nil, summaries.isEmpty, watch.settled || now >= deadline,
            let name = watch.lockedStations.keys.sorted().first, let lock = watch.lockedStations[name]
        {
            return .failed(Self.privateStation(name, lock))
        }
        guard now >= deadline else { return .waiting }
        let visible = summaries.map(\.name)
        if let query {
            if let silent = Self.announcedButSilent(query, in: watch) { return .failed(silent) }
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
