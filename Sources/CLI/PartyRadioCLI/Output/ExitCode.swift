/// Exit codes scripts rely on (the README, "Command reference"): 0 success, 1 runtime failure, 2 usage error,
/// 3 station not found or timed out.
public enum ExitCode: Int32, Sendable {
    case success = 0
    case failure = 1
    case usage = 2
    case notFound = 3
}
