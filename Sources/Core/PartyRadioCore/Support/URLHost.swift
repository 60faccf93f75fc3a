/// An IP address as the host part of an `http://` URL.
public enum URLHost {
    /// `host` as a URL writes it: an IPv4 address or a name as it is, an IPv6 address in brackets
    /// (RFC 3986), with a link-local address's zone after `%25`, the escaped `%` (RFC 6874):
    /// `10.0.0.1`, `[fd99::1]`, `[fe80::1%25eth0]`. Text already in brackets is left alone.
    public static func literal(_ host: String) -> String {
        guard host.contains(":"), !host.hasPrefix("[") else { return host }
        guard let percent = host.firstIndex(of: "%") else { return "[\(host)]" }
        return "[\(host[..<percent])%25\(host[host.index(after: percent)...])]"
    }

    /// `http://HOST:PORT` for an address (``literal(_:)``) and port.
    public static func httpOrigin(_ host: String, port: UInt16) -> String { "http://\(literal(host)):\(port)" }
}
