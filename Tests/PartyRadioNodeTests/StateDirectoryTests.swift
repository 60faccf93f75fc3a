import Testing
@testable import PartyRadioNode

/// One rule for the default state directory, for every command (nodes and catalog).
@Suite struct StateDirectoryTests {
    @Test func followsXDGAndIgnoresARelativeValue() {
        #expect(NodeSettings.defaultStateDirectory(environment: ["XDG_STATE_HOME": "/x/state", "HOME": "/h"]).path == "/x/state/partyradio")
        #expect(NodeSettings.defaultStateDirectory(environment: ["XDG_STATE_HOME": "rel", "HOME": "/h"]).path == "/h/.local/state/partyradio")
        #expect(NodeSettings.defaultStateDirectory(environment: ["XDG_STATE_HOME": "", "HOME": "/h"]).path == "/h/.local/state/partyradio")
    }
}
