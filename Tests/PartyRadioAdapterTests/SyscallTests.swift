import Glibc
import PartyRadioCore
import Testing

@testable import PartyRadioNet

@Suite struct SyscallTests {
    @Test func errnosGoByTheirCNames() {
        #expect(Errno.addressInUse.name == "EADDRINUSE")
        #expect(Errno.noSuchDevice.name == "ENODEV")
        #expect(Errno(rawValue: EINTR).name == "EINTR")
        #expect(Errno(rawValue: EWOULDBLOCK).name == "EAGAIN")  // one value, glibc's name for it
        #expect(Errno(rawValue: EHWPOISON).name == "EHWPOISON")
        #expect(Errno(rawValue: 4095).name == "errno 4095")
        #expect(Errno.addressInUse.description == "Address already in use (EADDRINUSE)")
        #expect(Errno(rawValue: EADDRINUSE) == .addressInUse)
    }

    @Test func interruptedCallsAreRetried() throws {
        var calls = 0
        let result = try Syscall.retryingOnInterrupt("test") { () -> Int32 in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(result == 7)
        #expect(calls == 3)
    }

    @Test func failuresNameTheCallAndTheErrno() {
        var calls = 0
        #expect(throws: SystemCallError("bind", code: .addressInUse)) {
            try Syscall.retryingOnInterrupt("bind") { () -> Int32 in
                calls += 1
                errno = EADDRINUSE
                return -1
            }
        }
        #expect(calls == 1)
        #expect(SystemCallError("bind", code: .addressInUse).description == "bind: Address already in use (EADDRINUSE)")
    }

    @Test func wouldBlockIsNoResultNotAnError() throws {
        let nothing = try Syscall.unlessWouldBlock { () throws(SystemCallError) -> Int in
            throw SystemCallError("recvfrom", code: .wouldBlock)
        }
        #expect(nothing == nil)
        #expect(throws: SystemCallError("recvfrom", code: .badFileDescriptor)) {
            try Syscall.unlessWouldBlock { () throws(SystemCallError) -> Int in
                throw SystemCallError("recvfrom", code: .badFileDescriptor)
            }
        }
    }

    /// A real failure from the kernel, on loopback: a second bind to a taken port.
    @Test func aTakenPortIsAddressInUse() throws {
        let first = try UDPSocket()
        try first.bind(SocketAddress("127.0.0.1", port: 0)!)
        let second = try UDPSocket()
        do {
            try second.bind(try first.localAddress())
            Issue.record("the second bind succeeded")
        } catch {
            #expect(error.code == .addressInUse)
            #expect(error.operation == "bind")
            #expect(error.description.hasSuffix("(EADDRINUSE)"))
        }
    }

    @Test func anUnknownInterfaceIsNoSuchDevice() throws {
        #expect(throws: SystemCallError("if_nametoindex(no-such-if0)", code: .noSuchDevice)) {
            try Syscall.interfaceIndex("no-such-if0")
        }
        #expect(try Syscall.interfaceIndex("lo") > 0)
    }

    @Test func multicastGroupsBecomeAddresses() {
        let group = MulticastGroup(address: (239, 255, 1, 2), port: 40_001)
        #expect(SocketAddress(group) == SocketAddress("239.255.1.2", port: 40_001))
    }
}
