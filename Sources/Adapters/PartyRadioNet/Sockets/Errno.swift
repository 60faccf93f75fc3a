import Glibc

/// An error number from the C library, named as in `<errno.h>`: swift-system's `Errno`, for the
/// calls this target makes. Compare against the static members (`error.code == .addressInUse`);
/// ``name`` is the C name people search for, ``message`` what strerror(3) says.
public struct Errno: RawRepresentable, Error, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's `errno`, read now: call it right after the failed call.
    public static var current: Errno { Errno(rawValue: errno) }

    /// `EINTR`: a signal arrived first; ``Syscall`` retries these, so callers never see one.
    public static let interrupted = Errno(rawValue: EINTR)
    /// `EAGAIN`, alias `EWOULDBLOCK`: a non-blocking socket has nothing to read or no room to send.
    public static let wouldBlock = Errno(rawValue: EWOULDBLOCK)
    /// `EADDRINUSE`: another socket holds the port.
    public static let addressInUse = Errno(rawValue: EADDRINUSE)
    /// `EADDRNOTAVAIL`: the address is not one of this host's.
    public static let addressNotAvailable = Errno(rawValue: EADDRNOTAVAIL)
    /// `ENODEV`: no such network interface.
    public static let noSuchDevice = Errno(rawValue: ENODEV)
    /// `EINVAL`
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// `EACCES`
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// `EPERM`
    public static let notPermitted = Errno(rawValue: EPERM)
    /// `EBADF`
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    /// `ENETUNREACH`: no route to the destination's network.
    public static let networkUnreachable = Errno(rawValue: ENETUNREACH)
    /// `EHOSTUNREACH`
    public static let hostUnreachable = Errno(rawValue: EHOSTUNREACH)
    /// `ECONNREFUSED`: on UDP, an ICMP port-unreachable from an earlier datagram.
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    /// `ENOBUFS`
    public static let noBufferSpace = Errno(rawValue: ENOBUFS)
    /// `EMSGSIZE`: the datagram is larger than the path allows.
    public static let messageTooLong = Errno(rawValue: EMSGSIZE)
    /// `EMFILE`: this process has no descriptors left.
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    /// `ENOMEM`
    public static let noMemory = Errno(rawValue: ENOMEM)
    /// EAFNOSUPPORT: no socket of the address's family (an IPv6 peer on an IPv4-only node).
    public static let familyNotSupported = Errno(rawValue: EAFNOSUPPORT)

    /// The C name, `EADDRINUSE`; `errno 4095` for a number Linux does not define.
    public var name: String { Self.names[rawValue] ?? "errno \(rawValue)" }

    /// What strerror(3) says, `Address already in use`.
    public var message: String { String(cString: strerror(rawValue)) }

    /// `Address already in use (EADDRINUSE)`.
    public var description: String { "\(message) (\(name))" }

    /// Every errno Linux defines, by value. Aliases (`EWOULDBLOCK`, `EDEADLOCK`, `ENOTSUP`) share
    /// a value with the name listed, which is the one glibc's strerrorname_np gives.
    private static let names: [Int32: String] = Dictionary(
        uniqueKeysWithValues: [
            (EPERM, "EPERM"), (ENOENT, "ENOENT"), (ESRCH, "ESRCH"), (EINTR, "EINTR"), (EIO, "EIO"), (ENXIO, "ENXIO"),
            (E2BIG, "E2BIG"), (ENOEXEC, "ENOEXEC"), (EBADF, "EBADF"), (ECHILD, "ECHILD"), (EAGAIN, "EAGAIN"),
            (ENOMEM, "ENOMEM"), (EACCES, "EACCES"), (EFAULT, "EFAULT"), (ENOTBLK, "ENOTBLK"), (EBUSY, "EBUSY"),
            (EEXIST, "EEXIST"), (EXDEV, "EXDEV"), (ENODEV, "ENODEV"), (ENOTDIR, "ENOTDIR"), (EISDIR, "EISDIR"),
            (EINVAL, "EINVAL"), (ENFILE, "ENFILE"), (EMFILE, "EMFILE"), (ENOTTY, "ENOTTY"), (ETXTBSY, "ETXTBSY"),
            (EFBIG, "EFBIG"), (ENOSPC, "ENOSPC"), (ESPIPE, "ESPIPE"), (EROFS, "EROFS"), (EMLINK, "EMLINK"),
            (EPIPE, "EPIPE"), (EDOM, "EDOM"), (ERANGE, "ERANGE"), (EDEADLK, "EDEADLK"), (ENAMETOOLONG, "ENAMETOOLONG"),
            (ENOLCK, "ENOLCK"), (ENOSYS, "ENOSYS"), (ENOTEMPTY, "ENOTEMPTY"), (ELOOP, "ELOOP"), (ENOMSG, "ENOMSG"),
            (EIDRM, "EIDRM"), (ECHRNG, "ECHRNG"), (EL2NSYNC, "EL2NSYNC"), (EL3HLT, "EL3HLT"), (EL3RST, "EL3RST"),
            (ELNRNG, "ELNRNG"), (EUNATCH, "EUNATCH"), (ENOCSI, "ENOCSI"), (EL2HLT, "EL2HLT"), (EBADE, "EBADE"),
            (EBADR, "EBADR"), (EXFULL, "EXFULL"), (ENOANO, "ENOANO"), (EBADRQC, "EBADRQC"), (EBADSLT, "EBADSLT"),
            (EBFONT, "EBFONT"), (ENOSTR, "ENOSTR"), (ENODATA, "ENODATA"), (ETIME, "ETIME"), (ENOSR, "ENOSR"),
            (ENONET, "ENONET"), (ENOPKG, "ENOPKG"), (EREMOTE, "EREMOTE"), (ENOLINK, "ENOLINK"), (EADV, "EADV"),
            (ESRMNT, "ESRMNT"), (ECOMM, "ECOMM"), (EPROTO, "EPROTO"), (EMULTIHOP, "EMULTIHOP"), (EDOTDOT, "EDOTDOT"),
            (EBADMSG, "EBADMSG"), (EOVERFLOW, "EOVERFLOW"), (ENOTUNIQ, "ENOTUNIQ"), (EBADFD, "EBADFD"),
            (EREMCHG, "EREMCHG"), (ELIBACC, "ELIBACC"), (ELIBBAD, "ELIBBAD"), (ELIBSCN, "ELIBSCN"),
            (ELIBMAX, "ELIBMAX"), (ELIBEXEC, "ELIBEXEC"), (EILSEQ, "EILSEQ"), (ERESTART, "ERESTART"),
            (ESTRPIPE, "ESTRPIPE"), (EUSERS, "EUSERS"), (ENOTSOCK, "ENOTSOCK"), (EDESTADDRREQ, "EDESTADDRREQ"),
            (EMSGSIZE, "EMSGSIZE"), (EPROTOTYPE, "EPROTOTYPE"), (ENOPROTOOPT, "ENOPROTOOPT"),
            (EPROTONOSUPPORT, "EPROTONOSUPPORT"), (ESOCKTNOSUPPORT, "ESOCKTNOSUPPORT"), (EOPNOTSUPP, "EOPNOTSUPP"),
            (EPFNOSUPPORT, "EPFNOSUPPORT"), (EAFNOSUPPORT, "EAFNOSUPPORT"), (EADDRINUSE, "EADDRINUSE"),
            (EADDRNOTAVAIL, "EADDRNOTAVAIL"), (ENETDOWN, "ENETDOWN"), (ENETUNREACH, "ENETUNREACH"),
            (ENETRESET, "ENETRESET"), (ECONNABORTED, "ECONNABORTED"), (ECONNRESET, "ECONNRESET"), (ENOBUFS, "ENOBUFS"),
            (EISCONN, "EISCONN"), (ENOTCONN, "ENOTCONN"), (ESHUTDOWN, "ESHUTDOWN"), (ETOOMANYREFS, "ETOOMANYREFS"),
            (ETIMEDOUT, "ETIMEDOUT"), (ECONNREFUSED, "ECONNREFUSED"), (EHOSTDOWN, "EHOSTDOWN"),
            (EHOSTUNREACH, "EHOSTUNREACH"), (EALREADY, "EALREADY"), (EINPROGRESS, "EINPROGRESS"), (ESTALE, "ESTALE"),
            (EUCLEAN, "EUCLEAN"), (ENOTNAM, "ENOTNAM"), (ENAVAIL, "ENAVAIL"), (EISNAM, "EISNAM"),
            (EREMOTEIO, "EREMOTEIO"), (EDQUOT, "EDQUOT"), (ENOMEDIUM, "ENOMEDIUM"), (EMEDIUMTYPE, "EMEDIUMTYPE"),
            (ECANCELED, "ECANCELED"), (ENOKEY, "ENOKEY"), (EKEYEXPIRED, "EKEYEXPIRED"), (EKEYREVOKED, "EKEYREVOKED"),
            (EKEYREJECTED, "EKEYREJECTED"), (EOWNERDEAD, "EOWNERDEAD"), (ENOTRECOVERABLE, "ENOTRECOVERABLE"),
            (ERFKILL, "ERFKILL"), (EHWPOISON, "EHWPOISON"),
        ])
}
