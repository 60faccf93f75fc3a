/// The machine (``MachineID/key``) each guest key was last heard from voting, chatting or
/// requesting, by key fingerprint, so that the DJ's `mute` reaches the machine behind a key.
/// Bounded: at most ``capacity`` keys, the least recently heard forgotten first.
public struct GuestMachines: Sendable {
    public static let capacity = 4096
    private var machines: [String: (machine: String, heard: UInt64)] = [:]
    private var clock: UInt64 = 0

    public init() {}

    public mutating func heard(_ fingerprint: String, on machine: String) {
        clock += 1
        if machines[fingerprint] == nil, machines.count >= Self.capacity,
            let oldest = machines.min(by: { $0.value.heard < $1.value.heard })
        {
            machines.removeValue(forKey: oldest.key)
        }
        machines[fingerprint] = (machine, clock)
    }

    public func machine(of fingerprint: String) -> String? { machines[fingerprint]?.machine }
}
