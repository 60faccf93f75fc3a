import Glibc

/// The one place the socket layer calls the C library, in swift-system's manner: every call is
/// retried while it fails with `EINTR`, and a failure comes back as a ``SystemCallError`` naming
/// the call and its ``Errno``. ``UDPSocket`` and ``NetworkInterface`` call nothing else.
///
/// The two general helpers are `package`, so the node's own descriptors (its wake-up pipe and
/// poll) can go through them too.
package enum Syscall {
    /// Runs `call` until it does not fail with `EINTR`; `-1` becomes an error naming `operation`
    /// and the errno `call` left.
    @discardableResult
    package static func retryingOnInterrupt<Result: FixedWidthInteger>(
        _ operation: @autoclosure () -> String, _ call: () -> Result
    ) throws(SystemCallError) -> Result {
        while true {
            let result = call()
            if result != -1 { return result }
            let code = Errno.current
            if code == .interrupted { continue }
            throw SystemCallError(operation(), code: code)
        }
    }

    /// `body`'s value, or nil when it failed with `EAGAIN`/`EWOULDBLOCK`: a non-blocking socket
    /// with nothing to read or no room to send.
    package static func unlessWouldBlock<Result>(
        _ body: () throws(SystemCallError) -> Result
    ) throws(SystemCallError) -> Result? {
        do throws(SystemCallError) {
            return try body()
        } catch let error where error.code == .wouldBlock {
            return nil
        }
    }

    // MARK: Sockets

    static func socket(domain: Int32, type: Int32, protocol: Int32) throws(SystemCallError) -> Int32 {
        try retryingOnInterrupt("socket") { Glibc.socket(domain, type, `protocol`) }
    }

    static func setOption<Value: BitwiseCopyable>(
        _ descriptor: Int32, level: Int32, name: Int32, _ value: Value, label: String
    ) throws(SystemCallError) {
        try retryingOnInterrupt("setsockopt(\(label))") {
            withUnsafeBytes(of: value) { setsockopt(descriptor, level, name, $0.baseAddress, socklen_t($0.count)) }
        }
    }

    /// setsockopt(2) with the option's value as bytes (for C structs holding unions).
    static func setOption(
        _ descriptor: Int32, level: Int32, name: Int32, bytes: [UInt8], label: String
    ) throws(SystemCallError) {
        try retryingOnInterrupt("setsockopt(\(label))") {
            bytes.withUnsafeBytes { setsockopt(descriptor, level, name, $0.baseAddress, socklen_t($0.count)) }
        }
    }

    static func bind(_ descriptor: Int32, _ address: SocketAddress) throws(SystemCallError) {
        try retryingOnInterrupt("bind") {
            withSocketAddress(address) { Glibc.bind(descriptor, $0, $1) }
        }
    }

    static func localAddress(_ descriptor: Int32) throws(SystemCallError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        try retryingOnInterrupt("getsockname") {
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
        }
        guard let address = SocketAddress(storage) else { throw SystemCallError("getsockname", code: .invalidArgument) }
        return address
    }

    /// sendto(2): the number of bytes sent.
    static func send(_ descriptor: Int32, _ bytes: [UInt8], to address: SocketAddress) throws(SystemCallError) -> Int {
        try retryingOnInterrupt("sendto") {
            bytes.withUnsafeBytes { buffer in
                withSocketAddress(address) { sendto(descriptor, buffer.baseAddress, buffer.count, 0, $0, $1) }
            }
        }
    }

    /// recvfrom(2): the datagram's length (its full length with `MSG_TRUNC`) and its sender (nil
    /// for a family other than IPv4 and IPv6, which a UDP socket never reports).
    static func receive(_ descriptor: Int32, into buffer: inout [UInt8], flags: Int32)
        throws(SystemCallError) -> (count: Int, from: SocketAddress?)
    {
        var sender = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let count = try retryingOnInterrupt("recvfrom") {
            buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &sender) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(descriptor, bytes.baseAddress, bytes.count, flags, $0, &length)
                    }
                }
            }
        }
        return (count, SocketAddress(sender))
    }

    /// close(2), deliberately not retried: Linux frees the descriptor even when close reports
    /// `EINTR`, and a retry could close one another thread has just been given.
    static func close(_ descriptor: Int32) throws(SystemCallError) {
        if Glibc.close(descriptor) == -1 { throw SystemCallError("close", code: .current) }
    }

    // MARK: Interfaces

    /// getifaddrs(3): `body` reads the list, which is freed when it returns.
    static func withInterfaceAddresses<Result>(
        _ body: (UnsafeMutablePointer<ifaddrs>?) -> Result
    ) throws(SystemCallError) -> Result {
        var list: UnsafeMutablePointer<ifaddrs>?
        try retryingOnInterrupt("getifaddrs") { getifaddrs(&list) }
        defer { freeifaddrs(list) }
        return body(list)
    }

    /// if_nametoindex(3), which reports failure as 0 rather than -1 (`ENODEV` for no such name).
    static func interfaceIndex(_ name: String) throws(SystemCallError) -> UInt32 {
        while true {
            let index = if_nametoindex(name)
            if index != 0 { return index }
            let code = Errno.current
            if code == .interrupted { continue }
            throw SystemCallError("if_nametoindex(\(name))", code: code)
        }
    }

    private static func withSocketAddress<Result>(
        _ address: SocketAddress, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
    ) -> Result {
        let (storage, length) = address.raw
        return withUnsafePointer(to: storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
