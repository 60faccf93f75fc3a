/// How a node plays (`--no-audio`, `--audio-driver`, the benchmarks' ``PlayerTuning``) and what it
/// records (`--trace`).
public struct PlaybackOptions: Sendable {
    /// No player at all: the node still follows the station and its clock.
    public var noAudio: Bool
    /// An mpv audio output (`null`, `alsa`, `pulse`, …); nil: the first that works, else `null`.
    public var audioDriver: String?
    /// Write one JSON object per line here, 20 times a second (see docs/CLOCK-SYNC.md).
    public var tracePath: String?
    /// A private station's media proof, sent with every HTTP fetch (mpv's `http-header-fields`):
    /// its media server answers 403 without it.
    public var mediaProof: String?
    /// The shipped way to fetch and play unless a benchmark asks for another.
    public var tuning: PlayerTuning
    /// The PulseAudio server the command's environment names (`PULSE_SERVER`), read once by the
    /// CLI: the player then has a sound server even without a sound card, and tries PulseAudio
    /// first, so that the sound goes where the user pointed it.
    public var soundServer: String?

    public init(
        noAudio: Bool = false, audioDriver: String? = nil, tracePath: String? = nil,
        tuning: PlayerTuning = PlayerTuning(), soundServer: String? = nil
    ) {
        self.soundServer = soundServer
        self.noAudio = noAudio
        self.audioDriver = audioDriver
        self.tracePath = tracePath
        self.tuning = tuning
    }
}
