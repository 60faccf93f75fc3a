import PartyRadioCore
import PartyRadioStorage

/// Keeps the DJ's plays in the stats store (`stats.sqlite` in the state directory) as the machine
/// hands them out: one session (a night) for this run, one row per finished play. Used on the
/// node's thread only; a write is a few milliseconds. The store is opened before the DJ starts, so
/// a damaged or newer file stops it at once; a write that fails later is told once as a warning
/// and the station plays on.
final class StatsRecorder {
    private let store: StatsStore
    private let station: String
    private let reporter: any NodeReporter
    private var session: Int64?
    private var warned = false

    init(settings: NodeSettings, station: String) throws(NodeError) {
        do throws(StatsError) { store = try StatsStore(directory: settings.stateDirectory) } catch {
            throw NodeError(.storage, "Cannot keep the DJ's stats: \(error.description)", cause: error)
        }
        self.station = station
        reporter = settings.reporter
    }

    /// The station went on air at `now`: the night starts.
    func begin(at now: LocalTime) {
        guard session == nil else { return }
        do throws(StatsError) { session = try store.beginSession(station: station, at: DJTime(onTheDJ: now)) } catch {
            warn(error)
        }
    }

    func record(_ play: PlayRecord) {
        guard let session else { return }
        do throws(StatsError) { try store.record(play, session: session) } catch { warn(error) }
    }

    /// The station went off air at `now`: the night ends. Idempotent.
    func end(at now: LocalTime) {
        guard let session else { return }
        self.session = nil
        do throws(StatsError) { try store.endSession(session, at: DJTime(onTheDJ: now)) } catch { warn(error) }
    }

    private func warn(_ error: StatsError) {
        guard !warned else { return }
        warned = true
        reporter.report(.warning("The stats could not be written (\(error.description)); the station plays on."))
    }
}
