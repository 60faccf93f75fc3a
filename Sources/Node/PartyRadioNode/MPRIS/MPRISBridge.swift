import Foundation
import PartyRadioCore
import PartyRadioMPRIS
import Synchronization

/// The node's MPRIS 2 player (`listen`, `dj`): offered when a session bus is there
/// (`DBUS_SESSION_BUS_ADDRESS` set and reachable), silently none otherwise (`-v` says why).
///
/// The node's thread calls ``update(_:)`` after its steps; the bus thread reads only the
/// properties made from the last view and pushes each method call into the inbox as the
/// control it stands for (``MPRISMapping/control(_:view:positionUs:)``).
final class MPRISBridge: Sendable {
    private let service: MPRISService
    private let shared: Shared

    /// Starts the player on the session bus at `address` (the command's `DBUS_SESSION_BUS_ADDRESS`,
    /// ``NodeSettings/sessionBus``), or answers nil when there is none to offer it on.
    static func start(_ view: MPRISView, inbox: Inbox<NodeInput>, sessionBus address: String?) -> MPRISBridge? {
        guard let address, !address.isEmpty else {
            Log.debug(.node, "no MPRIS player: DBUS_SESSION_BUS_ADDRESS is not set")
            return nil
        }
        let shared = Shared(view)
        do {
            let service = try MPRISService(address: address, properties: MPRISMapping.properties(view)) { call in
                let (view, positionUs) = shared.read()
                guard let control = MPRISMapping.control(call, view: view, positionUs: positionUs) else {
                    return Log.debug(.node, "MPRIS \(call): nothing to do")
                }
                Log.debug(.node, "MPRIS \(call) → '\(control)'")
                inbox.push(control.input)
            }
            shared.service.withLock { $0 = service }
            Log.debug(.node, "MPRIS player on the session bus as \(service.busName)")
            return MPRISBridge(service: service, shared: shared)
        } catch {
            Log.debug(.node, error.description)
            return nil
        }
    }

    /// The bus name the player took (a live DJ's follower never follows it).
    var busName: String { service.busName }

    private init(service: MPRISService, shared: Shared) {
        self.service = service
        self.shared = shared
    }

    /// After a step of the node (its thread): a new view when the step reported anything (a
    /// track, pause, seek, volume, mute, or the periodic progress that keeps the position true).
    func stepped(_ effects: [Effect], view makeView: () -> MPRISView) {
        var reported = false
        var seeks = 0
        for case .report(let event) in effects {
            reported = true
            if case .state(_, _, .seek) = event { seeks += 1 }
        }
        guard reported else { return }
        var view = makeView()
        shared.view.withLock { last in
            view.seeks = last.seeks + seeks
            last = view
        }
        service.update(MPRISMapping.properties(view))
    }

    /// Leaves the bus; idempotent.
    func close() {
        service.close()
        shared.service.withLock { $0 = nil }  // the service's call handler holds `shared`
    }

    /// The last view, and the service for the position now: what a method call is mapped against.
    private final class Shared: Sendable {
        let view: Mutex<MPRISView>
        let service = Mutex<MPRISService?>(nil)
        init(_ view: MPRISView) { self.view = Mutex(view) }
        func read() -> (MPRISView, Int64) {
            let view = self.view.withLock { $0 }
            return (view, service.withLock { $0?.positionUs() } ?? view.positionNs / 1000)
        }
    }
}

extension MPRISView {
    /// The DJ's view: its station engine, volume, and its page's artwork when it has a catalog.
    init(_ machine: DJMachine, at now: LocalTime, artBase: String?) {
        self.init(
            role: .dj, track: machine.engine.nowPlaying, stationPaused: machine.engine.isPaused,
            positionNs: machine.engine.positionNs(at: DJTime(onTheDJ: now)), volume: machine.volume, artBase: artBase)
    }

    /// A listener's view: the station as it last heard it, at the estimated DJ clock, with its
    /// own mute and volume (a speaker's: what its DJ set); artwork from the DJ's page when the
    /// station has one.
    init(_ machine: ListenerMachine, at now: LocalTime) {
        let speaker = machine.speakerState?.settings
        let tuned = machine.tuned
        let snapshot = tuned?.snapshot
        let webPort = tuned?.station.advert.webPort ?? 0
        self.init(
            role: .listener, track: snapshot?.nowPlaying, stationPaused: snapshot?.anchor.isPaused ?? false,
            muted: speaker?.muted ?? machine.isMuted,
            positionNs: snapshot?.position(at: machine.djTime(at: now) ?? DJTime(ns: now.ns)) ?? 0,
            volume: speaker?.volume ?? machine.volume,
            artBase: tuned.flatMap { webPort == 0 ? nil : URLHost.httpOrigin($0.station.address, port: webPort) })
    }
}
