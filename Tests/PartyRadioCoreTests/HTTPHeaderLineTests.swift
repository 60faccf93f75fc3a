import Testing

@testable import PartyRadioCore

@Suite struct HTTPHeaderLineTests {
    @Test func statusLinesAndFieldsAsCurlHandsThemOver() {
        #expect(HTTPHeaderLine("HTTP/1.1 206 Partial Content\r\n") == .status(206))
        #expect(HTTPHeaderLine("HTTP/2 200\r\n") == .status(200))
        #expect(HTTPHeaderLine("HTTP/1.1 abc\r\n") == .status(0))
        #expect(HTTPHeaderLine("HTTP/1.1\r\n") == .status(0))
        #expect(
            HTTPHeaderLine("Content-Range: bytes 0-99/1000\r\n")
                == .field(name: "content-range", value: "bytes 0-99/1000"))
        #expect(HTTPHeaderLine("X-Empty:\r\n") == .field(name: "x-empty", value: ""))
        #expect(HTTPHeaderLine("Location: http://a:80/b\r\n") == .field(name: "location", value: "http://a:80/b"))
        #expect(HTTPHeaderLine("\r\n") == .other)
    }

    @Test func bytesFromTheNetworkAreRepairedNotTrusted() {
        let bytes: [CChar] = Array("Server: caf".utf8CString.dropLast()) + [CChar(bitPattern: 0xE9), 13, 10]
        let line = bytes.withUnsafeBufferPointer { HTTPHeaderLine(data: $0.baseAddress!, size: 1, count: $0.count) }
        #expect(line == .field(name: "server", value: "caf\u{FFFD}"))
    }
}
