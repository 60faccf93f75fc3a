/// What plays next (`partyradio queue`): the DJ answers a query with its listener list, what
/// plays next and its snapshot.
public struct GuestQueueRead: StationRequest {
    public init() {}

    public var message: Message? { .query(Query()) }

    public mutating func read(
        _ message: Message, from station: StationSummary, at now: LocalTime, into out: inout [Effect]
    ) -> Reading<QueueList> {
        if case .queueList(let list) = message { .answered(list) } else { .ignored }
    }

    public func timedOut(at station: StationSummary) -> NodeError { unacknowledged("query", at: station) }
}
