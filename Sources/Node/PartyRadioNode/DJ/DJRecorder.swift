import PartyRadioCore
import PartyRadioStorage

/// Keeps what the DJ must not lose in its database (`dj.sqlite` in the state directory): the
/// station as the machine hands it out (``Effect/save(_:)``), and the plays for the stats, one
/// session (a night) per run. Used on the node's thread only; a save is one small transaction.
///
/// The database is opened before the DJ starts, so a damaged or newer file stops it at once. A
/// write that fails later is told once, loudly, as a warning, and the station plays on.
final class DJRecorder {
    let store: DJStore
    private let station: String
    private let reporter: any NodeReporter
    private var session: Int64?
    private var warnedStats = false
    private var warnedSave = false
    /// The DJ carries on from a saved station: its night goes on too, if it never ended.
    var continuing = false

    init(settings: NodeSettings, station: String) throws(NodeError) {
        do throws(DJStoreError) { store = try DJStore(directory: settings.stateDirectory) } catch {
            throw NodeError(.storage, "Cannot open the DJ's database: \(error.description)", cause: error)
        }
        self.station = station
        reporter = settings.reporter
    }

    /// The station went on air at `now`: the night starts, or (``continuing`` a killed DJ's saved
    /// station) the night it was in carries on.
    func begin(at now: LocalTime) {
        guard session == nil else { return }
        do throws(DJStoreError) {
            if continuing, let open = try store.unfinishedSession(station: station) {
                session = open
            } else {
                session = try store.beginSession(station: station, at: DJTime(onTheDJ: now))
            }
        } catch {
            warnStats(error)
        }
    }

    func record(_ play: PlayRecord) {
        guard let session else { return }
        do throws(DJStoreError) { try store.record(play, session: session) } catch { warnStats(error) }
    }

    /// Stores the station before anything the same step acknowledges goes out.
    func save(_ saved: SavedStation, at now: LocalTime) {
        do throws(DJStoreError) {
            try store.saveStation(saved, at: now)
            if warnedSave {
                warnedSave = false
                reporter.report(.notice("The station is saved again."))
            }
        } catch {
            guard !warnedSave else { return }
            warnedSave = true
            reporter.report(
                .warning(
                    "THE STATION COULD NOT BE SAVED (\(error.description)); the party goes on, but a restart "
                        + "now would lose what changed since the last save."))
        }
    }

    /// The station went off air at `now`: the night ends, and the saved station is marked as
    /// stopped on purpose. Idempotent.
    func end(at now: LocalTime) {
        do throws(DJStoreError) { try store.markStopped() } catch { warnSave(error) }
        if let session {
            self.session = nil
            do throws(DJStoreError) { try store.endSession(session, at: DJTime(onTheDJ: now)) } catch {
                warnStats(error)
            }
        }
        // dj.sqlite alone then holds everything, so a copy of it is whole.
        do throws(DJStoreError) { try store.checkpoint() } catch { warnSave(error) }
    }

    private func warnSave(_ error: DJStoreError) {
        guard !warnedSave else { return }
        warnedSave = true
        reporter.report(.warning("The station could not be marked as stopped (\(error.description))."))
    }

    private func warnStats(_ error: DJStoreError) {
        guard !warnedStats else { return }
        warnedStats = true
        reporter.report(.warning("The stats could not be written (\(error.description)); the station plays on."))
    }
}
