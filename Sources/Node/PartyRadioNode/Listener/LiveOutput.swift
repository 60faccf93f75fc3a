import PartyRadioCore
import PartyRadioLive
import Synchronization

/// A live player with the station clock it plays by: on a listener, the node's clock and its
/// latest estimate of the DJ's, which the node's thread updates and the audio thread reads; on the
/// DJ, its own clock, which is the station clock (``DJTime/init(onTheDJ:)``).
final class LiveOutput: Sendable {
    let player: LivePlayer
    private let box: EstimateBox

    init(options: LivePlayer.Options, clock: NodeClock, onTheDJ: Bool = false) {
        let box = EstimateBox()
        self.box = box
        player =
            onTheDJ
            ? LivePlayer(options: options) { DJTime(onTheDJ: clock.now()) }
            : LivePlayer(options: options) { box.estimate.withLock { $0 }?.djTime(at: clock.now()) }
    }

    /// The node's estimate of the DJ clock changed.
    func follow(_ estimate: ClockEstimate?) { box.estimate.withLock { $0 = estimate } }

    /// nil once it plays, or why it cannot.
    func start() -> String? {
        do { try player.start() } catch { return error.description }
        return nil
    }
}

private final class EstimateBox: Sendable {
    let estimate = Mutex<ClockEstimate?>(nil)
}
