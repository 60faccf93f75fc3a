import Testing

@testable import PartyRadioCLI

/// One rule for the default state directory, for every command (nodes and catalog).
@Suite struct StateDirectoryTests {
    func path(_ environment: [String: String]) -> String { StateDirectory.default(environment: environment) }

    @Test func followsXDGAndIgnoresARelativeValue() {
        #expect(path(["XDG_STATE_HOME": "/x/state", "HOME": "/h"]) == "/x/state/partyradio")
        #expect(path(["XDG_STATE_HOME": "rel", "HOME": "/h"]) == "/h/.local/state/partyradio")
        #expect(path(["XDG_STATE_HOME": "", "HOME": "/h"]) == "/h/.local/state/partyradio")
        #expect(path(["HOME": "/h"]) == "/h/.local/state/partyradio")
    }

    @Test func stateDirBeatsTheDefault() {
        #expect(StateDirectory.resolve("/mine", environment: ["XDG_STATE_HOME": "/x"]) == "/mine")
        #expect(StateDirectory.resolve(nil, environment: ["XDG_STATE_HOME": "/x"]) == "/x/partyradio")
    }
}
